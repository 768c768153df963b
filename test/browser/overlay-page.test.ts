import { rm } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, makeDataDir, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let browser: Browser;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('overlay page in Chromium', () => {
  it('loads the compiled page with its injected globals and runs its bundle', async () => {
    const overlay = daemon.registry.list()[0]!;
    const page = await browser.newPage();
    const response = await page.goto(`${daemon.url}/overlay/${overlay.id}`);
    expect(response?.status()).toBe(200);
    const stage = page.locator('#stage');
    await expect.poll(() => stage.getAttribute('data-state')).toBe('ready');
    expect(await stage.getAttribute('data-overlay-id')).toBe(overlay.id);
    const globals = await page.evaluate(() => ({
      id: window.__APP_OVERLAY_ID__,
      port: window.__APP_PORT__,
      token: window.__APP_TOKEN__,
    }));
    expect(globals.id).toBe(overlay.id);
    expect(globals.port).toBe(daemon.port);
    expect(globals.token).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    await page.close();
  });

  it('asks for no /favicon.ico (no 404 in the log at every load of an OBS source)', async () => {
    const overlay = daemon.registry.list()[0]!;
    const page = await browser.newPage();
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    await page.goto(`${daemon.url}/overlay/${overlay.id}`);
    await expect.poll(() => page.locator('#stage').getAttribute('data-state')).toBe('ready');
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('data:,');
    expect(asked).not.toContain('/favicon.ico');
    // The page of a deleted overlay too.
    await page.goto(`${daemon.url}/overlay/00000000-0000-4000-8000-000000000000`);
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('data:,');
    expect(asked).not.toContain('/favicon.ico');
    await page.close();
  });
});

describe('overlay page when the daemon goes away', () => {
  const connection = (page: Page) => page.evaluate(() => document.body.dataset.connection);
  const unreachable = (page: Page) => page.evaluate(() => document.body.dataset.unreachable);

  it('keeps retrying from its own script while the daemon is down, and comes back when it does', async () => {
    const dataDir = await makeDataDir();
    let running = await startTestDaemon({ dataDir });
    const page = await browser.newPage();
    try {
      const { port } = running;
      const overlay = running.overlays.list()[0]!;
      const url = `${running.url}/overlay/${overlay.id}`;
      // The page's clock is ours: its waits pass when the test says so.
      await page.clock.install();
      await page.goto(url);
      await expect.poll(() => connection(page)).toBe('open');

      await running.stop();
      await expect.poll(() => connection(page)).toBe('closed');
      // Well over a second down, several looks at the daemon: the page stays itself, never the
      // browser's error page (where no script runs and OBS stays blank for good).
      // How many looks fit in each 5 s depends on when each failed fetch settles (in real time, beside
      // the page's fake clock): what counts is that every 5 s brings at least one more.
      let looks = 0;
      for (let round = 0; round < 4; round++) {
        await page.clock.runFor(5000);
        const before = looks;
        await expect.poll(async () => Number((await unreachable(page)) ?? 0)).toBeGreaterThan(before);
        looks = Number(await unreachable(page));
      }
      expect(looks).toBeGreaterThanOrEqual(4);
      expect(page.url()).toBe(url);

      running = await startTestDaemon({ dataDir, port });
      await page.clock.runFor(5000);
      await expect.poll(() => connection(page), { timeout: 10_000 }).toBe('open');
      expect(page.url()).toBe(url);
      expect(await unreachable(page)).toBeUndefined();
      // Live again: a set-text from the restarted daemon reaches it.
      const text = await api(running, 'POST', `/api/overlays/${overlay.id}/commands`, {
        command: 'set-text',
        widgetId: overlay.widgets.find((w) => w.type === 'text')?.id ?? 'none',
        payload: { text: 'Back on air' },
      });
      expect(text.status).toBe(202);
      expect(((await text.json()) as { delivered: number }).delivered).toBe(1);
    } finally {
      await page.close();
      await running.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

declare global {
  interface Window {
    __APP_OVERLAY_ID__?: string;
    __APP_PORT__?: number;
    __APP_TOKEN__?: string;
  }
}
