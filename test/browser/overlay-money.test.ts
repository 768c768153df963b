// The overlay page in Chromium: gifts are worth what their platform calls them (TikTok diamonds, Twitch
// bits, a Super Chat's own currency) in alerts, event lists and top gifters (classic and journal-ranked).
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let browser: Browser;
let overlayId: string;
const POLL = { timeout: 10_000, interval: 50 };

const widgets = [
  { id: 'gifts', type: 'alert', x: 600, y: 100, width: 900, duration: 60_000, events: ['gift'] },
  { id: 'feed', type: 'event-list', x: 10, y: 200, maxEvents: 10, eventTypes: ['gift'] },
  { id: 'top', type: 'top-gifters', x: 10, y: 600, maxEntries: 10 },
  // Ranked from the event journal: the same units.
  { id: 'session', type: 'top-gifters', x: 10, y: 800, maxEntries: 10, scope: 'session' },
  { id: 'all', type: 'top-gifters', x: 400, y: 800, maxEntries: 10, scope: 'all', metric: 'diamonds' },
  { id: 'thanks', type: 'alert', x: 600, y: 400, width: 900, duration: 60_000 },
];

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const res = await api(daemon, 'POST', '/api/overlays', {
    name: 'Money',
    width: 1920,
    height: 1080,
    widgets,
  });
  expect(res.status).toBe(201);
  overlayId = ((await res.json()) as { id: string }).id;
  // A rule's alert with the event's one-line summary, as a new rule's alert text starts.
  const rules = [
    {
      id: 'thanks',
      trigger: 'gift',
      actions: [
        {
          overlayId,
          widgetId: 'thanks',
          command: 'show-alert',
          payload: { text: '{summary}!', duration: 60_000 },
        },
      ],
    },
  ];
  expect((await api(daemon, 'PUT', '/api/rules', rules)).status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

// biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property.
const visible = (locator: Locator) => locator.innerText();
const widgetText = (page: Page, id: string) => visible(page.locator(`[data-widget-id="${id}"]`));

async function sendEvent(event: unknown) {
  expect((await api(daemon, 'POST', '/api/events', event)).status).toBe(202);
}

describe('money words on the overlay page', () => {
  it('names bits for a Twitch cheer, the currency for a Super Chat and diamonds only for TikTok', async () => {
    const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
    await page.goto(`${daemon.url}/overlay/${overlayId}`);
    await expect.poll(() => page.evaluate(() => document.body.dataset.connection), POLL).toBe('open');

    await sendEvent({
      type: 'gift',
      platform: 'twitch',
      user: { uniqueId: 'bob', nickname: 'Bob' },
      data: { giftName: 'Bits', repeatCount: 100, diamondCount: 1, comment: 'Cheer100 go' },
    });
    // The first alert stays on screen (a minute); the others wait behind it, the feed shows them all.
    await expect.poll(() => widgetText(page, 'gifts'), POLL).toBe('Bob cheered 100 bits');
    // A rule's alert says the same through `{summary}`.
    await expect.poll(() => widgetText(page, 'thanks'), POLL).toBe('Bob cheered 100 bits!');
    await sendEvent({
      type: 'gift',
      platform: 'youtube',
      user: { uniqueId: 'UCcarol', nickname: 'Carol' },
      data: { giftName: 'Super Chat', repeatCount: 1, diamondCount: 500, currency: 'EUR' },
    });
    await sendEvent({
      type: 'gift',
      platform: 'youtube',
      user: { uniqueId: 'UCdan', nickname: 'Dan' },
      data: {
        giftName: 'Super Sticker',
        repeatCount: 1,
        diamondCount: 200,
        currency: 'USD',
        amountDisplayString: '$2.00',
      },
    });
    await sendEvent({
      type: 'gift',
      platform: 'tiktok',
      user: { uniqueId: 'erin', nickname: 'Erin' },
      data: { giftName: 'Rose', repeatCount: 3, diamondCount: 1 },
    });

    await expect
      .poll(() => widgetText(page, 'feed'), POLL)
      .toBe(
        [
          'Bob cheered 100 bits',
          'Carol sent a €5.00 Super Chat',
          'Dan sent a $2.00 Super Sticker',
          'Erin sent 3 × Rose',
        ].join('\n'),
      );
    // Each gifter's sum in the unit it was given in (the order across units is not what is checked here).
    await expect
      .poll(async () => (await widgetText(page, 'top')).split('\n').sort(), POLL)
      .toEqual(['Bob — 100 bits', 'Carol — €5.00', 'Dan — $2.00', 'Erin — 3 diamonds']);
    // Bits and diamonds added up are in no unit: the figure alone.
    await sendEvent({
      type: 'gift',
      platform: 'tiktok',
      user: { uniqueId: 'bob', nickname: 'Bob' },
      data: { giftName: 'Rose', repeatCount: 2, diamondCount: 1 },
    });
    await expect
      .poll(async () => (await widgetText(page, 'top')).split('\n').sort(), POLL)
      .toEqual(['Bob — 102', 'Carol — €5.00', 'Dan — $2.00', 'Erin — 3 diamonds']);
    // The boards the journal ranks (this stream, every stream) name each unit as the classic one does.
    for (const id of ['session', 'all'])
      await expect
        .poll(() => widgetText(page, id), POLL)
        .toBe(['Carol — €5.00', 'Dan — $2.00', 'Bob — 102', 'Erin — 3 diamonds'].join('\n'));
    const everything = await visible(page.locator('#stage'));
    expect(everything).not.toContain('× Bits');
    expect(everything).not.toMatch(/(bits|Super Chat|Sticker|€5\.00|\$2\.00).*diamonds/);
    await page.close();
  });

  it("names Kicks for a Kick gift, and marks Kick's lines with Kick's mark", async () => {
    const created = await api(daemon, 'POST', '/api/overlays', {
      name: 'Kick',
      width: 1280,
      height: 720,
      widgets: [
        { id: 'chat', type: 'chat', x: 10, y: 10, width: 600, maxMessages: 5 },
        { id: 'feed', type: 'event-list', x: 10, y: 300, maxEvents: 5, eventTypes: ['gift'] },
        { id: 'top', type: 'top-gifters', x: 700, y: 10, maxEntries: 5 },
      ],
    });
    const kickOverlay = ((await created.json()) as { id: string }).id;
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`${daemon.url}/overlay/${kickOverlay}`);
    await expect.poll(() => page.evaluate(() => document.body.dataset.connection), POLL).toBe('open');
    const fan = { uniqueId: 'kick-fan', nickname: 'Kick_Fan' };
    await sendEvent({ type: 'chat', platform: 'kick', user: fan, data: { comment: 'hi from Kick' } });
    await sendEvent({
      type: 'gift',
      platform: 'kick',
      user: fan,
      data: { giftName: 'Rage Quit', repeatCount: 1, diamondCount: 50 },
    });
    await expect.poll(() => widgetText(page, 'top'), POLL).toBe('Kick_Fan — 50 Kicks');
    await expect.poll(() => widgetText(page, 'feed'), POLL).toBe('Kick_Fan sent Rage Quit (50 Kicks)');
    const line = page.locator('[data-widget-id="chat"] .chat-line').filter({ hasText: 'hi from Kick' });
    const mark = line.locator('.platform-mark');
    await mark.waitFor();
    expect(await mark.getAttribute('data-platform')).toBe('kick');
    expect(await mark.getAttribute('title')).toBe('Kick');
    expect(await mark.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(83, 252, 24)');
    expect(await mark.evaluate((el) => getComputedStyle(el, '::before').content)).toBe('"K"');
    expect(await page.locator('[data-widget-id="feed"] .platform-mark[data-platform="kick"]').count()).toBe(
      1,
    );
    await page.close();
  });
});
