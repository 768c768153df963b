import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

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
});

declare global {
  interface Window {
    __APP_OVERLAY_ID__?: string;
    __APP_PORT__?: number;
    __APP_TOKEN__?: string;
  }
}
