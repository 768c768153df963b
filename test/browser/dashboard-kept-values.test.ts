// The values widgets keep from the stream, seen on the overlay page while the dashboard tests and resets
// them: test gifts never reach the on-stream top gifters, and the editor clears the board.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Overlay } from '../../shared/protocol/index.js';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { openTab, signInDashboard } from '../support/dashboard.js';

const POLL = { timeout: 10_000, interval: 50 };

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let dashboard: Page;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
  context.setDefaultTimeout(10_000);
  dashboard = await context.newPage();
  await signInDashboard(dashboard, daemon);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('top gifters on stream and test gifts', () => {
  it('shows no test gifter, also after "Remove test events"; the editor clears the board', async () => {
    const created = await api(daemon, 'POST', '/api/overlays', {
      name: 'Gifts scene',
      width: 1280,
      height: 720,
      widgets: [
        { id: 'top', name: 'Board', type: 'top-gifters', x: 10, y: 10, width: 400, entries: [] },
        { id: 'feed', type: 'event-list', x: 600, y: 10, width: 600, maxEvents: 10 },
      ],
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as Overlay;
    const gift = {
      type: 'gift',
      user: { uniqueId: 'whale', nickname: 'Whale' },
      data: { giftName: 'Lion', repeatCount: 1, diamondCount: 500 },
    };
    expect((await api(daemon, 'POST', '/api/events', gift)).status).toBe(202);

    const obs = await context.newPage();
    await obs.goto(`${daemon.url}/overlay/${id}`);
    await expect.poll(() => obs.evaluate(() => document.body.dataset.connection), POLL).toBe('open');
    const board = obs.locator('[data-widget-id="top"]');
    const feed = obs.locator('[data-widget-id="feed"]');
    await expect.poll(() => board.textContent(), POLL).toContain('Whale');

    // Two test gifts from the editor: the page hears them (its event list shows them), the board does not.
    await dashboard.evaluate(() => {
      location.hash = '#/overlays';
    });
    await dashboard.reload();
    const card = dashboard.locator('li.overlay-card', { hasText: 'Gifts scene' });
    await card.getByRole('button', { name: 'Edit widgets' }).click();
    for (let n = 0; n < 2; n++) {
      await dashboard.getByRole('button', { name: 'Send a test gift' }).click();
      await dashboard.getByText(/Sent “.*Test Viewer/).waitFor();
    }
    await expect.poll(() => feed.locator('.event-line', { hasText: 'Test Viewer' }).count(), POLL).toBe(2);
    expect(await board.textContent()).not.toContain('Test Viewer');

    await openTab(dashboard, 'History');
    const tests = dashboard.getByRole('region', { name: 'Test events' });
    await tests.getByRole('button', { name: 'Remove test events' }).click();
    await dashboard.getByText('2 test events removed.').waitFor();
    // A page opened afresh (OBS reloading the source) shows the board as the daemon keeps it.
    await obs.reload();
    await expect.poll(() => obs.evaluate(() => document.body.dataset.connection), POLL).toBe('open');
    await expect.poll(() => board.textContent(), POLL).toContain('Whale');
    expect(await board.textContent()).not.toContain('Test Viewer');
    expect(JSON.stringify(daemon.overlays.get(id))).not.toContain('test_viewer');

    // The editor resets what the board kept: the page empties at once.
    await openTab(dashboard, 'Overlays');
    await card.getByRole('button', { name: 'Edit widgets' }).click();
    await dashboard.locator('.layers').getByRole('button', { name: 'Board (top-gifters)' }).click();
    await dashboard.getByRole('button', { name: 'Clear the top gifters' }).click();
    await dashboard.getByText('Reset: every page showing the overlay shows it from zero.').waitFor();
    await expect.poll(() => board.textContent(), POLL).not.toContain('Whale');
    await daemon.liveValues.flush();
    expect(daemon.overlays.get(id)?.widgets.find((w) => w.id === 'top')).toMatchObject({ entries: [] });
    await obs.close();
  });
});
