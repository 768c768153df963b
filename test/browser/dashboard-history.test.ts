// The dashboard's History view in Chromium against the real daemon: each figure charted on its own scale
// (chats too), test events from the test panel kept apart and removed on request, a CSV named by its
// date, and gift value in each platform's unit on the boards.
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { openTab as openDashboardTab, signInDashboard } from '../support/dashboard.js';

const POLL = { timeout: 10_000, interval: 100 };

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let dashboard: Page;

const openTab = (name: string) => openDashboardTab(dashboard, name);

const viewer = (name: string) => ({ uniqueId: name.toLowerCase(), nickname: name });

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 1400, height: 950 }, acceptDownloads: true });
  context.setDefaultTimeout(10_000);
  dashboard = await context.newPage();
  await signInDashboard(dashboard, daemon);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('History', () => {
  it('charts gifts, diamonds, likes and chats each on its own scale: 20 gifts stay visible beside 125,000 diamonds', async () => {
    await api(daemon, 'POST', '/api/events', {
      type: 'gift',
      user: viewer('Rosa'),
      data: { giftName: 'Rose', repeatCount: 20, diamondCount: 1 },
    });
    await api(daemon, 'POST', '/api/events', {
      type: 'gift',
      user: viewer('Whale'),
      data: { giftName: 'Universe', repeatCount: 1, diamondCount: 124_980 },
    });
    for (const comment of ['hi', 'wow', 'gg'])
      await api(daemon, 'POST', '/api/events', { type: 'chat', user: viewer('Fan'), data: { comment } });
    await openTab('History');
    const details = dashboard.getByRole('region', { name: /^Stream of / });
    await expect.poll(() => details.locator('[data-total="Gifts"]').textContent(), POLL).toBe('21');
    const chart = details.locator('.history-chart');
    for (const figure of ['Gifts', 'Diamonds', 'Likes', 'Chats'])
      await chart
        .getByRole('img', { name: `${figure} per minute` })
        .locator('canvas')
        .first()
        .waitFor();
    const scaleOf = async (figure: string) =>
      Number(await chart.locator(`[data-figure="${figure}"]`).getAttribute('data-scale-max'));
    await expect.poll(() => scaleOf('diamonds'), POLL).toBeGreaterThanOrEqual(125_000);
    // The gifts' axis is the gifts' own: 21 fills it, it does not vanish under the diamonds.
    expect(await scaleOf('gifts')).toBeGreaterThanOrEqual(21);
    expect(await scaleOf('gifts')).toBeLessThan(100);
    expect(await scaleOf('chats')).toBeGreaterThanOrEqual(3);
    expect(await scaleOf('chats')).toBeLessThan(100);
  });

  it('keeps test events from the test panel apart, and removes them on request', async () => {
    await openTab('Test events');
    await dashboard.getByRole('button', { name: 'Send gift event' }).click();
    await dashboard
      .getByText(/No rule fired|Fired:/)
      .first()
      .waitFor();
    await openTab('History');
    const tests = dashboard.getByRole('region', { name: 'Test events' });
    await tests.getByText(/^1 test event \(from the test panel/).waitFor();
    const details = dashboard.getByRole('region', { name: /^Stream of / });
    // The test gift (99 Roses) counts nowhere.
    expect(await details.locator('[data-total="Gifts"]').textContent()).toBe('21');
    await dashboard
      .getByRole('list', { name: 'Stream sessions' })
      .getByText('+ 1 test event, not counted')
      .waitFor();
    await tests.getByRole('button', { name: 'Remove test events' }).click();
    await dashboard.getByText('1 test event removed.').waitFor();
    await expect.poll(() => tests.count(), POLL).toBe(0);
    const page = (await (await api(daemon, 'GET', '/api/events?limit=500')).json()) as {
      events: { test: boolean }[];
    };
    expect(page.events.some((e) => e.test)).toBe(false);
  });

  it('names a downloaded CSV by the session and its start time', async () => {
    const details = dashboard.getByRole('region', { name: /^Stream of / });
    const [download] = await Promise.all([
      dashboard.waitForEvent('download'),
      details.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^session-\d+-\d{4}-\d\d-\d\dT\d\d-\d\dZ\.csv$/);
    const csv = await readFile((await download.path()) ?? '', 'utf8');
    // Every row carries its date and time.
    expect(csv.split('\r\n')[1]).toMatch(/^\d+,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z,/);
  });

  it('lists what came in late while the streamer was away, each at its own time, and counts it', async () => {
    const followedAt = Date.now() - 8 * 3_600_000;
    // The Kick feed's backlog after a night off: a follow and a gift, hours old when they arrive.
    daemon.ingest(
      { type: 'follow', platform: 'kick', user: viewer('Night_Owl'), data: {} },
      { at: followedAt },
    );
    daemon.ingest(
      {
        type: 'gift',
        platform: 'kick',
        user: viewer('Night_Owl'),
        data: { giftName: 'Rage Quit', repeatCount: 1, diamondCount: 40 },
      },
      { at: followedAt + 3_600_000 },
    );
    // A live event beside them is not listed.
    await api(daemon, 'POST', '/api/events', { type: 'follow', user: viewer('Early_Bird'), data: {} });
    await openTab('Overlays');
    await openTab('History');
    const away = dashboard.getByRole('region', { name: 'While you were away' });
    await away.getByText(/^2 events came in late/).waitFor();
    const items = away.getByRole('listitem');
    await expect.poll(() => items.count(), POLL).toBe(2);
    expect(await items.nth(0).textContent()).toMatch(/Night_Owl sent Rage Quit \(40 Kicks\)$/);
    expect(await items.nth(1).textContent()).toMatch(/Night_Owl followed$/);
    // Each at its own time, with the Kick mark.
    expect(Date.parse((await items.nth(1).locator('time').getAttribute('datetime')) ?? '')).toBe(followedAt);
    const mark = items.nth(0).getByRole('img', { name: 'Kick' });
    // Kick's mark is drawn as the page draws it: Kick's green with a K, not a blank dot.
    expect(await mark.evaluate((el) => getComputedStyle(el, '::before').content)).toBe('"K"');
    expect(await mark.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(83, 252, 24)');
    // Counted: the boards have the late gift, in Kicks.
    for (const name of ['Top gifters of this stream', 'All-time leaderboard'])
      await dashboard
        .getByRole('list', { name })
        .getByText('Night_Owl — 40 Kicks', { exact: true })
        .waitFor();
  });

  it('names each viewer’s gift value in its platform’s unit on both boards', async () => {
    await api(daemon, 'POST', '/api/events', {
      type: 'gift',
      platform: 'twitch',
      user: viewer('Zoe'),
      data: { giftName: 'Bits', repeatCount: 200_000, diamondCount: 1 },
    });
    await api(daemon, 'POST', '/api/events', {
      type: 'gift',
      platform: 'youtube',
      user: viewer('Yuki'),
      data: { giftName: 'Super Chat', repeatCount: 1, diamondCount: 150_000, currency: 'EUR' },
    });
    // The view reads the journal when it opens.
    await openTab('Overlays');
    await openTab('History');
    for (const name of ['Top gifters of this stream', 'All-time leaderboard']) {
      const board = dashboard.getByRole('list', { name });
      await board.getByText('Zoe — 200,000 bits', { exact: true }).waitFor();
      await board.getByText('Yuki — €1,500.00', { exact: true }).waitFor();
      await board.getByText('Whale — 124,980 diamonds', { exact: true }).waitFor();
    }
  });
});
