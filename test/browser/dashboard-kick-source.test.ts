// The dashboard's Sources view with a Kick channel, in Chromium against the real daemon: added with or
// without a chatroom id, a bad id named beside its field, the id set later on the channel's row (after the
// state said Kick's site refused), and the source reading chat over the Pusher stand-in with it.
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceReport } from '../../shared/protocol/index.js';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon, UNREACHABLE_PLATFORMS } from '../support/daemon.js';
import { openTab, signInDashboard } from '../support/dashboard.js';
import { type FakeServer, listenLoopback } from '../support/fakes/listen.js';
import { type FakePusher, startFakePusher } from '../support/fakes/pusher.js';

const POLL = { timeout: 10_000, interval: 100 };
const CHATROOM_ID = 31_337;

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let dashboard: Page;
let pusher: FakePusher;
/** Kick's site refusing every channel page, as Cloudflare does. */
let site: FakeServer;

async function storedSources(): Promise<unknown[] | undefined> {
  try {
    return JSON.parse(await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8')).sources;
  } catch {
    return undefined;
  }
}

async function reported(): Promise<SourceReport[]> {
  const body = (await (await api(daemon, 'GET', '/status')).json()) as { sources?: SourceReport[] };
  return body.sources ?? [];
}

beforeAll(async () => {
  [pusher, site] = await Promise.all([
    startFakePusher(),
    listenLoopback((_req, res: ServerResponse) => {
      res.writeHead(403, { 'Content-Type': 'text/html' });
      res.end('<!DOCTYPE html><title>Just a moment...</title>');
    }),
  ]);
  [daemon, browser] = await Promise.all([
    startTestDaemon({
      platformUrls: { ...UNREACHABLE_PLATFORMS, kickPusher: pusher.url, kickSite: site.url },
    }),
    launchChromium(),
  ]);
  context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
  context.setDefaultTimeout(10_000);
  dashboard = await context.newPage();
  await signInDashboard(dashboard, daemon);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  await Promise.all([pusher?.close(), site?.close()]);
});

describe('a Kick channel in the Sources view', () => {
  it('names a bad chatroom id beside its field and sends nothing', async () => {
    await openTab(dashboard, 'Sources');
    await dashboard.getByLabel('Platform').selectOption('kick');
    await dashboard.getByLabel('Channel').fill('KickStreamer');
    await dashboard.getByLabel('Chatroom id (optional)').fill('12.5');
    await dashboard.getByRole('button', { name: 'Add source' }).click();
    await dashboard.locator('#source-chatroom-id-error').getByText('must be a whole number').waitFor();
    expect(await storedSources()).toBeUndefined();
  });

  it('added without a chatroom id, says the site refused; the id set on its row makes it read chat', async () => {
    await dashboard.getByLabel('Chatroom id (optional)').fill('');
    await dashboard.getByRole('button', { name: 'Add source' }).click();
    await dashboard.getByText('Added Kick kickstreamer').waitFor();
    expect(await storedSources()).toEqual([{ platform: 'kick', channel: 'kickstreamer', enabled: true }]);
    const row = dashboard.locator('tr[data-source="kick:kickstreamer"]');
    await expect
      .poll(() => row.locator('.source-state').textContent(), POLL)
      .toMatch(/Kick's site refused to give the chatroom id of kickstreamer \(403\): add its chatroom id/);
    await row.getByLabel('Chatroom id').fill(String(CHATROOM_ID));
    await row.getByRole('button', { name: 'Save' }).click();
    await dashboard.getByText(`chatroom id ${CHATROOM_ID} saved`).waitFor();
    expect(await storedSources()).toEqual([
      { platform: 'kick', channel: 'kickstreamer', enabled: true, chatroomId: CHATROOM_ID },
    ]);
    await pusher.waitForSubscribed(`chatrooms.${CHATROOM_ID}.v2`);
    await expect.poll(async () => (await reported())[0]?.state, POLL).toBe('connected');
    await expect
      .poll(() => row.locator('.source-state').textContent(), POLL)
      .toMatch(/reading the chat of chatroom 31337 from the settings/);
  });
});
