// The overlay page resumes in Chromium: after OBS reloads it, what it missed is replayed
// from the last seq it saw (kept in sessionStorage) into its widgets, and an alert over a minute old is not shown.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let browser: Browser;
let overlayId: string;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const res = await api(daemon, 'POST', '/api/overlays', {
    name: 'Resume',
    width: 1280,
    height: 720,
    widgets: [
      { id: 'chat', type: 'chat', x: 10, y: 10, width: 500, maxMessages: 10 },
      { id: 'alerts', type: 'alert', x: 600, y: 10, width: 600, duration: 4000, events: ['follow'] },
      { id: 'feed', type: 'event-list', x: 10, y: 400, maxEvents: 10, eventTypes: ['follow'] },
    ],
  });
  expect(res.status).toBe(201);
  overlayId = ((await res.json()) as { id: string }).id;
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

const text = (page: Page, id: string) => page.locator(`[data-widget-id="${id}"]`).textContent();

async function post(event: unknown): Promise<void> {
  expect((await api(daemon, 'POST', '/api/events', event)).status).toBe(202);
}
const chat = (comment: string) => ({
  type: 'chat',
  user: { uniqueId: 'ann', nickname: 'Ann' },
  data: { comment },
});
const follow = (name: string) => ({
  type: 'follow',
  user: { uniqueId: name.toLowerCase(), nickname: name },
  data: {},
});

async function load(page: Page): Promise<void> {
  await page.goto(`${daemon.url}/overlay/${overlayId}`);
  await expect.poll(() => page.evaluate(() => document.body.dataset.connection)).toBe('open');
}

describe('the overlay page after a reload', () => {
  it('gets what it missed into its widgets, and skips alerts older than a minute', async () => {
    const page = await browser.newPage();
    await load(page);
    await post(chat('before the reload'));
    await expect.poll(() => text(page, 'chat')).toContain('before the reload');
    // Kept for the next load: at the latest a second after the message, at once when the page goes.
    await expect
      .poll(() => page.evaluate((id) => Number(sessionStorage.getItem(`overlay-seq:${id}`)), overlayId))
      .toBeGreaterThan(0);

    // OBS drops the source for a while (here: the tab goes elsewhere); events go on.
    await page.goto('about:blank');
    await post(chat('while away'));
    await post(follow('Fresh'));
    await load(page);
    await expect.poll(() => text(page, 'chat')).toContain('while away');
    // The reload emptied the chat; only what came after the last seen message comes back.
    expect(await text(page, 'chat')).not.toContain('before the reload');
    await expect.poll(() => text(page, 'alerts')).toContain('Fresh followed');
    expect(await text(page, 'feed')).toContain('Fresh followed');

    // Away again, and this time the page comes back two minutes later (its clock moved on).
    await page.goto('about:blank');
    await post(follow('Stale'));
    await page.addInitScript(() => {
      const real = Date.now.bind(Date);
      Date.now = () => real() + 120_000;
    });
    await load(page);
    // The page draws an event on every widget in one pass: once the feed shows it, an alert would show too.
    await expect.poll(() => text(page, 'feed')).toContain('Stale followed');
    expect(await text(page, 'alerts')).not.toContain('Stale');
    await page.close();
  });
});
