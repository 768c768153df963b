// The dashboard as a streamer opens it in Chromium: signed in with the printed link, one tab at a time.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { TestDaemon } from './daemon.js';

/** Opens the dashboard with the sign-in link `overlay-daemon dashboard` prints, and waits for the Overlays view. */
export async function signInDashboard(
  page: Page,
  daemon: Pick<TestDaemon, 'url' | 'dataDir'>,
): Promise<void> {
  const key = (await readFile(join(daemon.dataDir.root, 'admin.key'), 'utf8')).trim();
  await page.goto(`${daemon.url}/dashboard#key=${encodeURIComponent(key)}`);
  await page.getByRole('heading', { name: 'Overlays', level: 1 }).waitFor();
}

/** Clicks a view's button in the Sections navigation. */
export async function openTab(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('button', { name }).click();
}
