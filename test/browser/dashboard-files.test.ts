// The dashboard and the data directory's files in Chromium against the real daemon: a rules.json that
// does not read is said when the Rules view opens (line and column), and an imported backup waiting for
// the next start is shown in Settings › Backup with a way to cancel it.
import { writeFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { openTab, signInDashboard } from '../support/dashboard.js';

let daemon: TestDaemon;
let browser: Browser;
let dashboard: Page;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  const context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
  context.setDefaultTimeout(10_000);
  dashboard = await context.newPage();
  await signInDashboard(dashboard, daemon);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('a hand-edited rules.json with a JSON error', () => {
  it('is said when the Rules view opens, with the line and column, before any save', async () => {
    await writeFile(daemon.dataDir.rulesFile, '[\n  {\n    "id": "hand"\n    "trigger": "follow"\n  }\n]\n');
    await waitFor(() => daemon.rules.unreadable !== undefined, 2000, 'the report');
    await openTab(dashboard, 'Rules');
    const notice = dashboard.locator('.notice-error', { hasText: 'rules.json could not be read' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('line 4, column 5');
    await writeFile(daemon.dataDir.rulesFile, '[]\n');
    await waitFor(() => daemon.rules.unreadable === undefined, 2000, 'the fixed file');
  });
});

describe('an imported backup', () => {
  it('is shown in Settings while it waits for the next start, and Cancel drops it', async () => {
    const archive = Buffer.from(await (await api(daemon, 'GET', '/api/backup')).arrayBuffer());
    const imported = await fetch(`${daemon.url}/api/restore`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/gzip' },
      body: new Uint8Array(archive),
    });
    expect(imported.status).toBe(202);
    await openTab(dashboard, 'Settings');
    const waiting = dashboard.getByText('An imported backup');
    await waiting.waitFor();
    // The view's check of what waits, after the cancel, answers late (as on a loaded machine): held
    // here until the test has seen what the streamer sees at once.
    let cancelSent = false;
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await dashboard.route('**/api/restore', async (route) => {
      const method = route.request().method();
      if (method === 'DELETE') cancelSent = true;
      else if (method === 'GET' && cancelSent) await held;
      await route.continue();
    });
    try {
      await dashboard.getByRole('button', { name: 'Cancel the import' }).click();
      await dashboard.getByText('The imported backup was cancelled').waitFor();
      // What the streamer sees: the import no longer shown as waiting, once the cancel is done.
      await waiting.waitFor({ state: 'detached' });
    } finally {
      release?.();
      await dashboard.unroute('**/api/restore');
    }
    expect(await (await api(daemon, 'GET', '/api/restore')).json()).toEqual({ pending: false });
    expect(await waiting.count()).toBe(0);
  });
});
