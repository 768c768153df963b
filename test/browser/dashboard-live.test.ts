// The dashboard during a stream, in Chromium against the real daemon: the editor's canvas follows live goal
// progress and a save does not roll it back; deleting an overlay that OBS shows says so, and the page goes empty.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Overlay } from '../../shared/protocol/index.js';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { signInDashboard } from '../support/dashboard.js';

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

async function createOverlay(name: string, widgets: unknown[]): Promise<string> {
  const res = await api(daemon, 'POST', '/api/overlays', { name, width: 1280, height: 720, widgets });
  expect(res.status).toBe(201);
  return ((await res.json()) as Overlay).id;
}

async function likes(likeCount: number): Promise<void> {
  const event = { type: 'like', user: { uniqueId: 'fan', nickname: 'Fan' }, data: { likeCount } };
  expect((await api(daemon, 'POST', '/api/events', event)).status).toBe(202);
}

const liveGoal = (id: string) =>
  (daemon.overlays.get(id)?.widgets.find((w) => w.id === 'goal') as { current?: number } | undefined)
    ?.current;

/** The Overlays view, loaded afresh so it lists overlays made through the API (the session survives a reload). */
async function openOverlaysTab(): Promise<void> {
  // Each view has its own address: a reload stays where the last test left the dashboard.
  await dashboard.evaluate(() => {
    location.hash = '#/overlays';
  });
  await dashboard.reload();
  await dashboard.getByRole('heading', { name: 'Overlays' }).waitFor();
}

describe('the overlay editor during a stream', () => {
  it("shows the goal's live progress, and a layout saved from it keeps that progress", async () => {
    const id = await createOverlay('Goal night', [
      { id: 'goal', type: 'goal', x: 40, y: 40, width: 500, title: 'Likes', source: 'likes', target: 100 },
    ]);
    await likes(2);
    await expect.poll(() => liveGoal(id), POLL).toBe(2);

    await openOverlaysTab();
    const card = dashboard.locator('li.overlay-card', { hasText: 'Goal night' });
    await card.getByRole('button', { name: 'Edit widgets' }).click();
    const goal = dashboard.locator('.canvas [data-widget-id="goal"]');
    await expect.poll(() => goal.textContent(), POLL).toContain('2/100');

    // Likes keep coming while the editor is open: the canvas follows them.
    await likes(3);
    await expect.poll(() => liveGoal(id), POLL).toBe(5);
    await expect.poll(() => goal.textContent(), POLL).toContain('5/100');
    // Following the stream is no edit: nothing waits to be saved.
    expect(await dashboard.locator('[data-save-state]').getAttribute('data-save-state')).toBe('saved');

    // A layout edit saved now, with more likes in between, leaves the live value alone.
    await likes(4);
    await expect.poll(() => liveGoal(id), POLL).toBe(9);
    await goal.focus();
    await expect.poll(() => goal.getAttribute('aria-pressed'), POLL).toBe('true');
    await dashboard.keyboard.press('ArrowRight');
    await expect
      .poll(() => dashboard.locator('[data-save-state]').getAttribute('data-save-state'), POLL)
      .toBe('saved');
    await expect
      .poll(() => (daemon.overlays.get(id)?.widgets[0] as { x?: number } | undefined)?.x, POLL)
      .toBe(41);
    expect(liveGoal(id)).toBe(9);
    await expect.poll(() => goal.textContent(), POLL).toContain('9/100');
    // The properties show the progress as the stream moves it; it is no field a save would carry.
    await expect
      .poll(() => dashboard.locator('[data-live-value]').textContent(), POLL)
      .toContain('Progress so far: 9');
    expect(await dashboard.getByLabel('Progress so far').count()).toBe(0);
  });
});

describe('deleting an overlay that is on stream', () => {
  it('says the overlay is open in a page, and that page then shows nothing', async () => {
    const id = await createOverlay('On air', [
      { id: 'hello', type: 'text', x: 10, y: 10, content: 'On air' },
    ]);
    const obs = await context.newPage();
    await obs.goto(`${daemon.url}/overlay/${id}`);
    await expect.poll(() => obs.evaluate(() => document.body.dataset.connection), POLL).toBe('open');

    await openOverlaysTab();
    const card = dashboard.locator(`li.overlay-card[data-overlay-id="${id}"]`);
    await card.getByRole('button', { name: 'Delete' }).click();
    const question = card.locator('fieldset.confirm legend');
    await expect.poll(() => question.textContent(), POLL).toContain('1 page has it open now');
    await card.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => card.count(), POLL).toBe(0);

    // The OBS source reloads onto the overlay that is gone: an empty, transparent page, not an error text.
    await expect
      .poll(
        () =>
          obs.evaluate(() => document.querySelector('[data-error-code]')?.getAttribute('data-error-code')),
        POLL,
      )
      .toBe('not_found');
    const look = await obs.evaluate(() => ({
      url: location.href,
      html: getComputedStyle(document.documentElement).backgroundColor,
      body: getComputedStyle(document.body).backgroundColor,
      // biome-ignore lint/performance/useDomNodeTextContent: what is rendered, not the markup's text.
      text: document.body.innerText.trim(),
    }));
    expect(look).toEqual({
      url: `${daemon.url}/overlay/${id}`,
      html: 'rgba(0, 0, 0, 0)',
      body: 'rgba(0, 0, 0, 0)',
      text: '',
    });
    await obs.close();
  });

  it('asks the plain question when no page has the overlay open', async () => {
    const id = await createOverlay('Off air', []);
    await openOverlaysTab();
    const card = dashboard.locator(`li.overlay-card[data-overlay-id="${id}"]`);
    await card.getByRole('button', { name: 'Delete' }).click();
    const question = card.locator('fieldset.confirm legend');
    await expect.poll(() => question.textContent(), POLL).toBe('Delete “Off air” for good?');
    await card.getByRole('button', { name: 'Cancel' }).click();
  });
});
