// The chat widget in Chromium against the real daemon: however much is said, its newest lines stay
// inside its box and on the canvas, wrapped, the oldest leaving at the top.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let browser: Browser;
let overlayId: string;

const CANVAS = { width: 1920, height: 1080 };
const widgets = [
  // No size: the canvas below and beside it is its box.
  { id: 'free', type: 'chat', x: 1500, y: 300, maxMessages: 10 },
  // A height: what does not fit is cut off at the top.
  { id: 'short', type: 'chat', x: 10, y: 100, width: 600, height: 200, maxMessages: 10 },
];

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const res = await api(daemon, 'POST', '/api/overlays', { name: 'Chat', ...CANVAS, widgets });
  expect(res.status).toBe(201);
  overlayId = ((await res.json()) as { id: string }).id;
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

async function openOverlay(): Promise<Page> {
  const page = await browser.newPage({ viewport: CANVAS });
  await page.goto(`${daemon.url}/overlay/${overlayId}`);
  await expect.poll(() => page.evaluate(() => document.body.dataset.connection)).toBe('open');
  return page;
}

async function say(nickname: string, comment: string) {
  const event = { type: 'chat', user: { uniqueId: nickname.toLowerCase(), nickname }, data: { comment } };
  expect((await api(daemon, 'POST', '/api/events', event)).status).toBe(202);
}

/** 100 characters of words, numbered so each line can be told apart. */
const hundred = (n: number) => `line ${n} `.padEnd(100, 'word ').slice(0, 100);

type Rect = { x: number; y: number; width: number; height: number };
const rectOf = (page: Page, selector: string): Promise<Rect[]> =>
  page.$$eval(selector, (els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    }),
  );
const inside = (inner: Rect, outer: Rect) =>
  inner.x >= outer.x - 0.5 &&
  inner.y >= outer.y - 0.5 &&
  inner.x + inner.width <= outer.x + outer.width + 0.5 &&
  inner.y + inner.height <= outer.y + outer.height + 0.5;

describe('the chat widget in Chromium', () => {
  it('keeps the newest of eight 100-character lines on a 1080-pixel canvas, inside its box', async () => {
    const page = await openOverlay();
    for (let n = 1; n <= 8; n++) await say('Talker', hundred(n));
    const lines = '[data-widget-id="free"] .chat-line';
    await expect.poll(() => page.locator(lines).count()).toBe(8);
    const canvas = { x: 0, y: 0, ...CANVAS };
    const [box] = await rectOf(page, '[data-widget-id="free"]');
    const rows = await rectOf(page, lines);
    expect(inside(box!, canvas)).toBe(true);
    // The newest line is whole and on the canvas, inside the box; the box hides what overflows it.
    expect(inside(rows[7]!, box!)).toBe(true);
    expect(await page.locator('[data-widget-id="free"]').evaluate((e) => getComputedStyle(e).overflow)).toBe(
      'hidden',
    );
    // The oldest went off the top of the box, out of view, rather than the newest off the canvas.
    expect(rows[0]!.y).toBeLessThan(box!.y);
    await page.close();
  });

  it('clips to its height, the newest line at the bottom, and wraps a long word instead of running off', async () => {
    const page = await openOverlay();
    for (let n = 1; n <= 6; n++) await say('Talker', hundred(n));
    await say('Spammer', 'x'.repeat(100));
    const lines = '[data-widget-id="short"] .chat-line';
    await expect.poll(() => page.locator(lines).count()).toBe(7);
    const [box] = await rectOf(page, '[data-widget-id="short"]');
    expect(box).toMatchObject({ width: 600, height: 200 });
    const rows = await rectOf(page, lines);
    // The unbroken word wraps inside the box's width.
    const newest = rows[6]!;
    expect(inside(newest, box!)).toBe(true);
    expect(newest.height).toBeGreaterThan(40);
    const widest = await page.$$eval(`${lines}, ${lines} *`, (els) =>
      Math.max(...els.map((e) => e.getBoundingClientRect().right)),
    );
    expect(widest).toBeLessThanOrEqual(box!.x + box!.width + 0.5);
    // What is above the box is hidden, not drawn over the scene.
    expect(rows[0]!.y).toBeLessThan(box!.y);
    const hit = await page.evaluate(
      ({ x, y }) =>
        document.elementFromPoint(x, y)?.closest('[data-widget-id]')?.getAttribute('data-widget-id'),
      { x: box!.x + 20, y: box!.y - 20 },
    );
    expect(hit).not.toBe('short');
    await page.close();
  });
});
