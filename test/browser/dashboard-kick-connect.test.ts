// The Sources view's Kick box in Chromium against the real daemon and a stand-in of the Gatekeeper's Kick
// routes: Connect Kick opens Kick's page, the box waits and then shows the channel and how its events
// come, Disconnect unlinks; without a sign-in the box says that one is needed.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import { writeLicence } from '../../daemon/src/licence/licence-file.js';
import { LicenceManager } from '../../daemon/src/licence/licence-manager.js';
import { launchChromium } from '../support/chromium.js';
import { makeDataDir, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { openTab, signInDashboard } from '../support/dashboard.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeKickGatekeeper, startFakeKickGatekeeper } from '../support/fakes/kick-gatekeeper.js';
import { licenceSigner, trustSigner } from '../support/licence-signer.js';

const POLL = { timeout: 10_000, interval: 100 };
const signer = licenceSigner();

let gk: FakeKickGatekeeper;
let browser: Browser;
let context: BrowserContext;
let daemon: TestDaemon | undefined;
let licence: LicenceManager | undefined;
let dataDir: string | undefined;
/** The daemon's clock for its Kick feed: the feed's looks at the Gatekeeper wait on it. */
let timers: FakeTimers;

async function start(signedIn: boolean): Promise<Page> {
  gk.requests.length = 0;
  dataDir = await makeDataDir();
  await trustSigner(dataDir, signer);
  await writeFile(join(dataDir, 'rules.json'), '[]\n');
  if (signedIn)
    await writeLicence(join(dataDir, 'license.json'), {
      token: signer.sign({ sub: 'member-1', tier: 'free', iss: gk.url }),
      tier: 'free',
      validated_at: new Date().toISOString(),
      user_id: 'member-1',
      verdict: 'ok',
    });
  licence = new LicenceManager({ dataDir, client: new GatekeeperClient(gk.url), log: () => {} });
  await licence.load();
  timers = new FakeTimers();
  daemon = await startTestDaemon({
    dataDir,
    limits: licence,
    kickEvents: { licence, gatekeeperUrl: gk.url, timers, random: () => 0.5 },
  });
  const page = await context.newPage();
  await signInDashboard(page, daemon);
  await openTab(page, 'Sources');
  return page;
}

beforeAll(async () => {
  [gk, browser] = await Promise.all([startFakeKickGatekeeper(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
  context.setDefaultTimeout(10_000);
});
afterEach(async () => {
  await daemon?.close();
  await licence?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  daemon = undefined;
});
afterAll(async () => {
  await browser?.close();
  await gk?.close();
});

describe('the Kick box', () => {
  it('Connect Kick opens the page on Kick, waits, then shows the channel and its events; Disconnect unlinks', async () => {
    const page = await start(true);
    const box = page.locator('[data-part="kick"]');
    const link = box.locator('[data-part="kick-link"]');
    await expect.poll(() => link.getAttribute('data-state'), POLL).toBe('not-connected');
    // The page on Kick opens in a tab of its own; allowing the link there is what the stand-in's page does.
    // The streamer takes a while on Kick's page: it is held until they allow the link.
    let allow = () => {};
    const allowed = new Promise<void>((resolve) => {
      allow = resolve;
    });
    await context.route(`${gk.url}/kick/authorize*`, async (route) => {
      await allowed;
      await route.continue();
    });
    // The box's questions the daemon answered (an answer comes after any look it made for it).
    const asked: string[] = [];
    page.on('response', (res) => {
      const req = res.request();
      if (req.method() === 'GET' && new URL(req.url()).pathname === '/api/sources/kick/connect')
        asked.push(req.url());
    });
    // The page on Kick's tab is there once its address answers (after the streamer allowed the link).
    const popup = context.waitForEvent('page', { timeout: 30_000 });
    await box.getByRole('button', { name: 'Connect Kick' }).click();
    await expect.poll(() => link.getAttribute('data-state'), POLL).toBe('pending');
    // The box asks the daemon every 2 s meanwhile; the daemon asks the Gatekeeper at most every 10 s.
    const looks = () => gk.requests.filter((r) => r === 'GET /kick/status').length;
    const asking = asked.length;
    await expect.poll(() => asked.length, POLL).toBeGreaterThanOrEqual(asking + 1);
    const looked = looks();
    await expect.poll(() => asked.length, POLL).toBeGreaterThanOrEqual(asking + 3);
    expect(looks()).toBe(looked);
    allow();
    const kickPage = await popup;
    await kickPage.waitForLoadState();
    expect(kickPage.url()).toMatch(new RegExp(`^${gk.url}/kick/authorize\\?state=`));
    await kickPage.close();
    await context.unroute(`${gk.url}/kick/authorize*`);
    // Ten seconds on: the next look finds the link, and the box shows it.
    await expect
      .poll(() => {
        timers.advance(10_000);
        return link.getAttribute('data-state');
      }, POLL)
      .toBe('connected');
    await box.getByText('kick.com/streamer').waitFor();
    await box.getByText('events: connected through the Gatekeeper').waitFor();
    expect(gk.open()).toHaveLength(1);

    await box.getByRole('button', { name: 'Disconnect Kick' }).click();
    await box.getByRole('button', { name: 'Connect Kick' }).waitFor();
    expect(gk.connected).toBe(false);
    await page.close();
  });

  it('without a sign-in, Connect Kick says that one is needed', async () => {
    const page = await start(false);
    const box = page.locator('[data-part="kick"]');
    await box.getByRole('button', { name: 'Connect Kick' }).click();
    await box.getByRole('alert').getByText('overlay-daemon login').waitFor();
    expect(gk.requests).toEqual([]);
    await page.close();
  });
});
