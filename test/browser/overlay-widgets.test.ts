// The overlay page in Chromium against the real daemon: widgets render, events and commands reach them.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let browser: Browser;
let overlayId: string;

const widgets = [
  { id: 'title', type: 'text', x: 10, y: 10, content: 'Welcome', fontSize: 40, color: '#ffffff' },
  { id: 'alerts', type: 'alert', x: 600, y: 100, width: 700, duration: 1500, events: ['follow'] },
  {
    id: 'gifts',
    type: 'alert',
    x: 600,
    y: 500,
    width: 700,
    duration: 1500,
    events: ['gift'],
    style: 'slide',
  },
  {
    id: 'goal',
    type: 'goal',
    x: 10,
    y: 900,
    width: 600,
    title: 'Likes',
    source: 'likes',
    target: 1000,
    current: 250,
  },
  { id: 'chat', type: 'chat', x: 1500, y: 300, maxMessages: 2 },
  { id: 'count', type: 'counter', x: 10, y: 100, label: 'Follows', source: 'follows', value: 3 },
  { id: 'feed', type: 'event-list', x: 10, y: 200, maxEvents: 5, eventTypes: ['follow', 'gift'] },
  {
    id: 'top',
    type: 'top-gifters',
    x: 10,
    y: 500,
    entries: [{ uniqueId: 'whale', nickname: 'Whale', diamonds: 500 }],
  },
];

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const res = await api(daemon, 'POST', '/api/overlays', {
    name: 'Widgets',
    width: 1920,
    height: 1080,
    widgets,
  });
  expect(res.status).toBe(201);
  overlayId = ((await res.json()) as { id: string }).id;
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

async function openOverlay(viewport = { width: 1920, height: 1080 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(`${daemon.url}/overlay/${overlayId}`);
  await expect.poll(() => page.evaluate(() => document.body.dataset.connection)).toBe('open');
  return page;
}

/** What a viewer sees: rendered text, line breaks included. */
// biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property.
const visible = (locator: Locator) => locator.innerText();
const widgetText = (page: Page, id: string) => visible(page.locator(`[data-widget-id="${id}"]`));
const user = (name: string) => ({ uniqueId: name.toLowerCase(), nickname: name });

async function sendEvent(event: unknown) {
  expect((await api(daemon, 'POST', '/api/events', event)).status).toBe(202);
}
async function sendCommand(command: unknown) {
  expect((await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, command)).status).toBe(202);
}

describe('overlay widgets in Chromium', () => {
  it('renders every widget with its kind and state, scaled to a smaller viewport', async () => {
    const page = await openOverlay({ width: 960, height: 540 });
    const types = await page.$$eval('[data-widget-id]', (els) =>
      els.map((e) => `${e.getAttribute('data-widget-id')}:${e.getAttribute('data-widget-type')}`),
    );
    expect(types).toEqual(widgets.map((w) => `${w.id}:${w.type}`));
    expect(await widgetText(page, 'title')).toBe('Welcome');
    expect(await widgetText(page, 'goal')).toContain('250 / 1000');
    expect(await widgetText(page, 'count')).toBe('Follows 3');
    // Top gifters say what the number is.
    expect(await widgetText(page, 'top')).toContain('Whale — 500 diamonds');
    const box = await page.locator('#stage').boundingBox();
    expect(box).toMatchObject({ width: 960, height: 540 });
    await page.close();
  });

  it('shows chat, lists events and queues alerts one after another', async () => {
    const page = await openOverlay();
    for (const comment of ['first', 'second', 'third']) {
      await sendEvent({ type: 'chat', user: user('Chatty'), data: { comment } });
    }
    await expect.poll(() => widgetText(page, 'chat')).toBe('Chatty second\nChatty third');

    await sendEvent({ type: 'follow', user: user('Newbie'), data: {} });
    await sendCommand({
      command: 'show-alert',
      widgetId: 'alerts',
      payload: { text: 'Thanks <b>all</b>', duration: 800 },
    });
    const alert = page.locator('[data-alert]');
    await expect.poll(() => visible(alert), { timeout: 5000 }).toBe('Newbie followed');
    expect(await alert.count()).toBe(1);
    // The command's alert waits for the first one to end, then shows as plain text.
    await expect.poll(() => visible(alert), { timeout: 5000 }).toBe('Thanks <b>all</b>');
    expect(await page.locator('[data-widget-id="alerts"] b').count()).toBe(0);
    await expect.poll(() => alert.count(), { timeout: 5000 }).toBe(0);
    expect(await widgetText(page, 'feed')).toContain('Newbie followed');
    await page.close();
  });

  it('shows alerts as stream alerts: an animated card in its style, with the sender and the gift pictured', async () => {
    const page = await openOverlay();
    const avatar = 'https://pictures.invalid/avatars/rosa.webp';
    const gift = 'https://pictures.invalid/gifts/rose.png';
    await sendEvent({ type: 'follow', user: { ...user('Rosa'), profilePictureUrl: avatar }, data: {} });
    const card = page.locator('[data-widget-id="alerts"] .alert-card');
    await card.waitFor();
    // The default style pops in and out over the alert's whole duration.
    expect(await card.getAttribute('class')).toContain('alert-pop');
    expect(await card.evaluate((e) => getComputedStyle(e).animationName)).toBe('alert-pop');
    expect(await card.evaluate((e) => getComputedStyle(e).animationDuration)).toBe('1.5s');
    expect(await card.locator('img.alert-avatar').getAttribute('src')).toBe(avatar);

    await sendEvent({
      type: 'gift',
      user: { ...user('Whale'), profilePictureUrl: 'http://plain.invalid/not-https.png' },
      data: { giftName: 'Rose', repeatCount: 3, diamondCount: 1, giftPictureUrl: gift },
    });
    const slide = page.locator('[data-widget-id="gifts"] .alert-card');
    await slide.waitFor();
    expect(await slide.evaluate((e) => getComputedStyle(e).animationName)).toBe('alert-slide');
    expect(await slide.locator('img.alert-gift').getAttribute('src')).toBe(gift);
    // Only https pictures are shown.
    expect(await slide.locator('img.alert-avatar').count()).toBe(0);
    expect(await visible(slide.locator('[data-alert]'))).toBe('Whale sent 3 × Rose');
    await page.close();
  });

  it('clears an alert on reset: the one on screen goes, the waiting ones are dropped, the next shows at once', async () => {
    const page = await openOverlay();
    const alert = page.locator('[data-widget-id="alerts"] [data-alert]');
    for (const name of ['First', 'Second', 'Third'])
      await sendEvent({ type: 'follow', user: user(name), data: {} });
    await expect.poll(() => visible(alert)).toBe('First followed');
    await sendCommand({ command: 'reset', widgetId: 'alerts', payload: {} });
    await expect.poll(() => alert.count()).toBe(0);
    // The box stays in place, empty; nothing that waited comes back.
    expect(await page.locator('[data-widget-id="alerts"]').count()).toBe(1);
    await sendEvent({ type: 'follow', user: user('Fourth'), data: {} });
    // The first alert to show after the reset is the one sent after it.
    await alert.waitFor();
    expect(await visible(alert)).toBe('Fourth followed');
    await sendCommand({ command: 'reset', widgetId: 'alerts', payload: {} });
    await expect.poll(() => alert.count()).toBe(0);
    // A reset with nothing on screen changes nothing.
    await sendCommand({ command: 'reset', widgetId: 'alerts', payload: {} });
    expect(await page.locator('[data-widget-id="alerts"]').count()).toBe(1);
    expect(await alert.count()).toBe(0);
    await page.close();
  });

  it('applies set-text and ignores unknown commands and widgets', async () => {
    const page = await openOverlay();
    await sendCommand({ command: 'dance', widgetId: 'title', payload: {} });
    await sendCommand({ command: 'set-text', widgetId: 'nope', payload: { text: 'lost' } });
    await sendCommand({ command: 'set-text', widgetId: 'title', payload: { text: 'Hello {from} rules' } });
    await expect.poll(() => widgetText(page, 'title')).toBe('Hello {from} rules');
    expect(await visible(page.locator('#stage'))).not.toContain('lost');
    await page.close();
  });

  it('replaces its state on overlay-update', async () => {
    const page = await openOverlay();
    const next = widgets
      .map((w) => (w.id === 'goal' ? { ...w, current: 900, title: 'Almost' } : w))
      .filter((w) => w.id !== 'chat');
    const res = await api(daemon, 'PUT', `/api/overlays/${overlayId}`, {
      name: 'Widgets',
      width: 1920,
      height: 1080,
      widgets: next,
    });
    expect(res.status).toBe(200);
    await expect.poll(() => widgetText(page, 'goal')).toContain('Almost');
    // A layout save never changes live values: the goal keeps the progress the stream gave it.
    expect(await widgetText(page, 'goal')).toContain('250 / 1000');
    expect(await page.locator('[data-widget-id="chat"]').count()).toBe(0);
    await page.close();
  });

  it('keeps an alert on screen playing through a storm of likes that move the goal', async () => {
    const page = await openOverlay();
    const goalBefore = Number(await page.locator('[data-widget-id="goal"]').getAttribute('data-current'));
    await sendCommand({
      command: 'show-alert',
      widgetId: 'alerts',
      payload: { text: 'Big thanks', duration: 30_000 },
    });
    const card = page.locator('[data-widget-id="alerts"] .alert-card');
    await card.waitFor();
    // The very element on screen, and how far its animation has played.
    const element = await card.elementHandle();
    const playedBefore = await card.evaluate((e) => Number(e.getAnimations()[0]?.currentTime ?? 0));
    const title = await page.locator('[data-widget-id="title"]').elementHandle();

    for (let i = 0; i < 10; i++) {
      await sendEvent({ type: 'like', user: user('Fan'), data: { likeCount: 1 } });
    }
    await expect.poll(() => widgetText(page, 'goal')).toContain(`${goalBefore + 10} / 1000`);

    expect(await element?.evaluate((e) => e.isConnected)).toBe(true);
    expect(await card.count()).toBe(1);
    expect(await element?.evaluate((e, live) => e === live, await card.elementHandle())).toBe(true);
    // Its animation went on from where it was: never restarted from the beginning.
    const playedAfter = await element?.evaluate((e) => Number(e.getAnimations()[0]?.currentTime ?? 0));
    expect(playedAfter).toBeGreaterThan(playedBefore);
    // Widgets the updates did not change keep their nodes too.
    expect(await title?.evaluate((e) => e.isConnected)).toBe(true);
    await page.close();
  });
});
