// A public overlay's viewer page in Chromium, fed by a stand-in relay: the compiled page with the viewer
// globals shows relayed events, reconnects by itself with backoff (also when the relay answers 503),
// resumes from the last seq without showing anything twice, and sends nothing but init and ping.
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VIEWER_PING } from '../../shared/protocol/relay.js';
import { launchChromium } from '../support/chromium.js';
import { type FakeRelayViewer, startFakeRelayViewer } from '../support/fakes/relay-viewer.js';

const OVERLAY = '3b7e6f0a-2c41-4d8e-9f15-6a0b7c8d9e21';

const init = {
  type: 'init',
  overlay: { name: 'Public', width: 1280, height: 720 },
  widgets: [
    { id: 'alerts', type: 'alert', x: 10, y: 10, width: 600, duration: 60_000, events: ['gift'] },
    { id: 'feed', type: 'event-list', x: 10, y: 300, maxEvents: 50, eventTypes: ['gift'] },
  ],
};
const gift = (seq: number, name: string) => ({
  type: 'stream-event',
  seq,
  at: Date.now(),
  event: {
    type: 'gift',
    platform: 'tiktok',
    user: { uniqueId: name.toLowerCase(), nickname: name },
    data: { giftName: 'Rose', repeatCount: 1, diamondCount: 1 },
  },
});

let browser: Browser;
let relay: FakeRelayViewer;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await relay?.close();
});

const text = (page: Page, id: string) => page.locator(`[data-widget-id="${id}"]`).textContent();
const body = (page: Page, key: 'connection' | 'retry') => page.evaluate((k) => document.body.dataset[k], key);
const occurrences = (haystack: string | null, needle: string) => (haystack ?? '').split(needle).length - 1;

/** Every frame the page sent: one init per socket, everything else the exact ping. */
function expectOnlyInitAndPing(frames: string[]): void {
  expect(frames.length).toBeGreaterThan(0);
  for (const frame of frames) {
    if (frame === VIEWER_PING) continue;
    const parsed = JSON.parse(frame) as Record<string, unknown>;
    expect(parsed.action).toBe('init');
    expect(parsed.overlayId).toBe(OVERLAY);
    expect(parsed).not.toHaveProperty('token');
  }
}

describe('the viewer page through the relay', () => {
  it('shows a relayed gift, and after a lost socket resumes from the last seq without showing anything twice', async () => {
    relay = await startFakeRelayViewer({ overlayId: OVERLAY, init });
    const page = await browser.newPage();
    const response = await page.goto(`${relay.url}${relay.pagePath}`);
    expect(response?.status()).toBe(200);
    await expect.poll(() => body(page, 'connection')).toBe('open');
    expect(await page.locator('#stage').getAttribute('data-mode')).toBe('viewer');

    relay.publish(gift(11, 'Alice'));
    await expect.poll(() => text(page, 'alerts')).toContain('Alice sent');
    await expect.poll(() => text(page, 'feed')).toContain('Alice sent');

    // The connection drops; the streamer's events go on meanwhile.
    relay.dropAll();
    await expect.poll(() => body(page, 'connection')).toBe('closed');
    relay.publish(gift(12, 'Bob'));
    relay.publish(gift(13, 'Cleo'));
    await expect.poll(() => body(page, 'connection'), { timeout: 10_000 }).toBe('open');
    await expect.poll(() => text(page, 'feed')).toContain('Cleo sent');
    relay.publish(gift(14, 'Dan'));
    await expect.poll(() => text(page, 'feed')).toContain('Dan sent');

    const feed = await text(page, 'feed');
    for (const name of ['Alice', 'Bob', 'Cleo', 'Dan']) expect(occurrences(feed, `${name} sent`)).toBe(1);
    // The second socket asked for what came after the last gift seen, and the page never reloaded.
    const inits = relay.frames.filter((f) => f !== VIEWER_PING).map((f) => JSON.parse(f));
    expect(inits).toEqual([
      { action: 'init', overlayId: OVERLAY },
      { action: 'init', overlayId: OVERLAY, resumeFrom: 11 },
    ]);
    expect(await page.evaluate((id) => sessionStorage.getItem(`overlay-seq:${id}`), OVERLAY)).toBe('14');
    expect(relay.violations).toEqual([]);
    expectOnlyInitAndPing(relay.frames);
    await page.close();
  });

  it('backs off on 503 (1-2 s, then 1-4 s …), pings every 30 s, and sends nothing but init and ping', async () => {
    relay = await startFakeRelayViewer({ overlayId: OVERLAY, init });
    const page = await browser.newPage();
    // The page's clock is ours, and its dice always land at the top of each window.
    await page.addInitScript(() => {
      Math.random = () => 0.999_999_9;
    });
    await page.clock.install({ time: new Date('2026-01-01T00:00:00Z') });
    await page.clock.pauseAt(new Date('2026-01-01T00:00:01Z'));
    await page.goto(`${relay.url}${relay.pagePath}`);
    await expect.poll(() => body(page, 'connection')).toBe('open');

    // Two pings a minute, each answered.
    await page.clock.runFor(60_000);
    await expect.poll(() => relay.frames.filter((f) => f === VIEWER_PING).length).toBe(2);

    relay.refuse = true;
    relay.dropAll();
    await expect.poll(() => body(page, 'retry')).toBe('1');
    const upgrades = relay.upgrades;
    for (const [retry, wait] of [
      [2, 2000],
      [3, 4000],
      [4, 8000],
    ] as const) {
      await page.clock.runFor(wait - 1);
      expect(relay.upgrades).toBe(upgrades + retry - 2);
      await page.clock.runFor(1);
      // Refused with 503: a failed connect, and the next wait is twice as long.
      await expect.poll(() => relay.upgrades).toBe(upgrades + retry - 1);
      await expect.poll(() => body(page, 'retry')).toBe(String(retry));
    }
    expect(await body(page, 'connection')).toBe('closed');

    // Room again: the next try gets through and the page is live without a reload.
    relay.refuse = false;
    await page.clock.runFor(16_000);
    await expect.poll(() => body(page, 'connection')).toBe('open');
    relay.publish(gift(21, 'Eve'));
    await expect.poll(() => text(page, 'alerts')).toContain('Eve sent');
    expect(relay.violations).toEqual([]);
    expectOnlyInitAndPing(relay.frames);
    expect(relay.frames.filter((f) => f !== VIEWER_PING)).toHaveLength(2);
    await page.close();
  });

  it('goes away and stops knocking once the relay says the overlay is no longer published', async () => {
    relay = await startFakeRelayViewer({ overlayId: OVERLAY, init });
    const page = await browser.newPage();
    await page.clock.install({ time: new Date('2026-01-01T00:00:00Z') });
    await page.clock.pauseAt(new Date('2026-01-01T00:00:01Z'));
    await page.goto(`${relay.url}${relay.pagePath}`);
    await expect.poll(() => body(page, 'connection')).toBe('open');
    relay.publish(gift(31, 'Fay'));
    await expect.poll(() => text(page, 'alerts')).toContain('Fay sent');

    relay.unpublish();
    await expect.poll(() => page.evaluate(() => document.body.dataset.connection)).toBe('unpublished');
    expect(await page.locator('#stage').isVisible()).toBe(false);
    const upgrades = relay.upgrades;
    await page.clock.runFor(10 * 60_000);
    expect(relay.upgrades).toBe(upgrades);
    expect(await body(page, 'retry')).toBeUndefined();
    await page.close();
  });
});
