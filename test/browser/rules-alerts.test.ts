// Rules, alerts and kept widget state in Chromium against the real daemon: gift → rule → queued alert, goal on likes, reload, unknown commands.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, makeDataDir, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';

/** A folder (docs/images when refreshing the docs) to write the demo overlay's picture into. */
const SCREENSHOTS = process.env.OVERLAY_SCREENSHOTS;
const POLL = { timeout: 10_000, interval: 25 };
const ALERT_MS = 1200;

let daemon: TestDaemon;
let browser: Browser;
let overlayId: string;

const widgets = [
  { id: 'title', type: 'text', x: 10, y: 10, content: 'Stream', fontSize: 40 },
  { id: 'alerts', type: 'alert', x: 400, y: 300, width: 900 },
  { id: 'goal', type: 'goal', x: 10, y: 900, width: 600, title: 'Likes', source: 'likes', target: 200 },
];

const user = (name: string) => ({ uniqueId: name.toLowerCase(), nickname: name });

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const res = await api(daemon, 'POST', '/api/overlays', {
    name: 'Rules',
    width: 1920,
    height: 1080,
    widgets,
  });
  expect(res.status).toBe(201);
  overlayId = ((await res.json()) as { id: string }).id;
  const rules = [
    {
      id: 'gift-alert',
      trigger: 'gift',
      actions: [
        {
          overlayId,
          widgetId: 'alerts',
          command: 'show-alert',
          payload: { text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: ALERT_MS },
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

async function open(url: string, viewport = { width: 1920, height: 1080 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(url);
  await expect.poll(() => page.evaluate(() => document.body.dataset.connection), POLL).toBe('open');
  return page;
}

/** Records every change of the visible alert text ('' when none shows), with its time in the page. */
async function recordAlerts(page: Page): Promise<() => Promise<{ text: string; at: number }[]>> {
  await page.evaluate(() => {
    const log: { text: string; at: number }[] = [];
    const read = () => document.querySelector('[data-alert]')?.textContent ?? '';
    let last = read();
    new MutationObserver(() => {
      const text = read();
      if (text !== last) log.push({ text, at: performance.now() });
      last = text;
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
    Object.assign(window, { alertLog: log });
  });
  return () =>
    page.evaluate(() => (window as unknown as { alertLog: { text: string; at: number }[] }).alertLog);
}

async function sendEvent(event: unknown): Promise<unknown> {
  const res = await api(daemon, 'POST', '/api/events', event);
  expect(res.status).toBe(202);
  return res.json();
}

async function sendCommand(command: unknown): Promise<void> {
  expect((await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, command)).status).toBe(202);
}

const goalCurrent = (page: Page, id = 'goal') =>
  page.locator(`[data-widget-id="${id}"]`).getAttribute('data-current', { timeout: 1000 });

/** What a viewer sees: rendered text, line breaks included. */
// biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property.
const visible = (locator: Locator) => locator.innerText();

describe('rules and alerts in Chromium', () => {
  it('turns gifts into queued alerts through the rule: templated text, each for its duration, once', async () => {
    const page = await open(`${daemon.url}/overlay/${overlayId}`);
    const alerts = await recordAlerts(page);
    expect(
      await sendEvent({ type: 'gift', user: user('Alice'), data: { giftName: 'Rose', repeatCount: 5 } }),
    ).toEqual({ accepted: true, firedRules: ['gift-alert'] });
    await sendEvent({ type: 'gift', user: user('Bob'), data: { giftName: 'Lion', repeatCount: 1 } });
    // Follows are not in the widget's `events`, so they raise no alert of their own.
    await sendEvent({ type: 'follow', user: user('Carol'), data: {} });

    await expect.poll(async () => (await alerts()).length, POLL).toBe(4);
    const log = await alerts();
    // One alert per gift (the rule's), never a second one from the event itself.
    expect(log.map((e) => e.text)).toEqual(['Alice sent 5 × Rose', '', 'Bob sent 1 × Lion', '']);
    const [alice, gap, bob, end] = log.map((e) => e.at) as [number, number, number, number];
    for (const shown of [gap - alice, end - bob]) {
      expect(shown).toBeGreaterThanOrEqual(ALERT_MS - 50);
      expect(shown).toBeLessThan(ALERT_MS + 800);
    }
    // The next alert waits for the previous one (and a short pause).
    expect(bob - gap).toBeGreaterThanOrEqual(200);
    await page.close();
  });

  it('moves the goal bar on likes, and a reloaded page resumes from the state the daemon kept', async () => {
    const page = await open(`${daemon.url}/overlay/${overlayId}`);
    expect(await goalCurrent(page)).toBe('0');
    for (let i = 0; i < 10; i++) await sendEvent({ type: 'like', user: user('Fan'), data: { likeCount: 5 } });
    await expect.poll(() => goalCurrent(page), POLL).toBe('50');
    expect(await page.locator('[data-widget-id="goal"] .goal-fill').evaluate((el) => el.style.width)).toBe(
      '25%',
    );
    expect(await visible(page.locator('[data-widget-id="goal"]'))).toContain('50 / 200');

    await waitFor(
      () =>
        daemon.overlays.get(overlayId)?.widgets.some((w) => w.type === 'goal' && w.current === 50) === true,
      3000,
      'the goal kept by the daemon',
    );
    await page.reload();
    await expect.poll(() => page.evaluate(() => document.body.dataset.connection), POLL).toBe('open');
    expect(await goalCurrent(page)).toBe('50');
    await page.close();
  });

  it('ignores unknown commands, commands for the wrong widget and bad payloads, and carries on', async () => {
    const page = await open(`${daemon.url}/overlay/${overlayId}`);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const alerts = await recordAlerts(page);
    await sendCommand({ command: 'explode', widgetId: 'alerts', payload: { text: 'boom' } });
    await sendCommand({
      command: 'show-alert',
      widgetId: 'goal',
      payload: { text: 'wrong widget', duration: 1000 },
    });
    await sendCommand({ command: 'show-alert', widgetId: 'alerts', payload: { text: 5 } });
    await sendCommand({ command: 'set-text', widgetId: 'title', payload: { text: 'Still here' } });
    // Commands arrive in order: once the last one shows, the others have been handled.
    await expect.poll(() => visible(page.locator('[data-widget-id="title"]')), POLL).toBe('Still here');
    expect(await alerts()).toEqual([]);
    expect(await page.locator('[data-alert]').count()).toBe(0);
    expect(await page.evaluate(() => document.body.dataset.connection)).toBe('open');
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('the demo overlay', () => {
  it('shows off on first start: a gift alert from the demo rule, goal progress, chat and top gifters', async () => {
    const dataDir = await makeDataDir();
    const demo = await startTestDaemon({ dataDir });
    try {
      const id = demo.overlays.list()[0]!.id;
      const page = await open(`${demo.url}/overlay/${id}`, { width: 1280, height: 720 });
      // The page is transparent for OBS; a dark scene behind it makes the picture readable.
      await page.addStyleTag({ content: 'html { background: linear-gradient(135deg, #1d2333, #3a2a4a); }' });
      const post = async (event: unknown) => {
        const res = await api(demo, 'POST', '/api/events', event);
        expect(res.status).toBe(202);
        return res.json();
      };
      for (const [who, comment] of [
        ['Mia', 'hi everyone!'],
        ['Leo', 'that combo was clean'],
        ['Sam', 'first time here, love it'],
      ] as const) {
        await post({ type: 'chat', user: user(who), data: { comment } });
      }
      await post({ type: 'like', user: user('Fan'), data: { likeCount: 420 } });
      await post({
        type: 'gift',
        user: user('Whale'),
        data: { giftName: 'Lion', repeatCount: 1, diamondCount: 2999 },
      });
      await post({
        type: 'gift',
        user: user('Nora'),
        data: { giftName: 'Galaxy', repeatCount: 2, diamondCount: 1000 },
      });
      expect(
        await post({
          type: 'gift',
          user: user('Rosa'),
          data: { giftName: 'Rose', repeatCount: 99, diamondCount: 1 },
        }),
      ).toEqual({ accepted: true, firedRules: ['demo-gift-alert'] });

      await expect.poll(() => visible(page.locator('[data-alert]')), POLL).toBe('Whale sent 1 × Lion');
      await expect.poll(() => goalCurrent(page, 'like-goal'), POLL).toBe('420');
      await expect
        .poll(() => visible(page.locator('[data-widget-id="top-gifters"]')), POLL)
        .toBe('Whale — 2,999 diamonds\nNora — 2,000 diamonds\nRosa — 99 diamonds');
      expect(await visible(page.locator('[data-widget-id="chat"]'))).toContain(
        'Sam first time here, love it',
      );
      expect(await visible(page.locator('[data-widget-id="welcome"]'))).toBe('Welcome to the stream!');
      if (SCREENSHOTS) {
        // Let the alert's entrance animation and the goal bar's transition finish.
        await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'));
        await page.screenshot({ path: join(SCREENSHOTS, 'demo-overlay.png') });
      }
      await page.close();
    } finally {
      await demo.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
