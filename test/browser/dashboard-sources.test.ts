// The dashboard's Sources view in Chromium against the real daemon: channels added,
// turned off and removed with their state from /status, the Twitch sign-in, the YouTube key kept secret,
// and the platform mark of a test event on the overlay page. Every platform is a closed loopback port.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceReport } from '../../shared/protocol/index.js';
import { launchChromium } from '../support/chromium.js';
import { api, startTestDaemon, type TestDaemon, UNREACHABLE_PLATFORMS } from '../support/daemon.js';
import { openTab, signInDashboard } from '../support/dashboard.js';
import { startFakeTwitch } from '../support/fakes/twitch.js';

const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS; // a folder: docs/images when refreshing the docs
const POLL = { timeout: 10_000, interval: 100 };

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let dashboard: Page;

async function shot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

const signIn = signInDashboard;

async function storedSettings(): Promise<Record<string, unknown> & { sources?: unknown[] }> {
  try {
    return JSON.parse(await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8'));
  } catch {
    return {};
  }
}

async function reportedSources(target = daemon): Promise<SourceReport[]> {
  const body = (await (await api(target, 'GET', '/status')).json()) as { sources?: SourceReport[] };
  return body.sources ?? [];
}

const row = (page: Page, source: string) => page.locator(`tr[data-source="${source}"]`);

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
  context.setDefaultTimeout(10_000);
  dashboard = await context.newPage();
  await signIn(dashboard, daemon);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('channels', () => {
  it('adds a Twitch channel: settings.json has it and /status lists it, its state in words', async () => {
    await openTab(dashboard, 'Sources');
    await dashboard.getByText('No source yet').waitFor();
    await dashboard.getByLabel('Platform').selectOption('twitch');
    await dashboard.getByLabel('Channel').fill('Some_Streamer');
    await dashboard.getByRole('button', { name: 'Add source' }).click();
    await dashboard.getByText('Added Twitch some_streamer').waitFor();
    // Twitch logins are lowercase: the daemon stores the channel as Twitch names it.
    expect((await storedSettings()).sources).toEqual([
      { platform: 'twitch', channel: 'some_streamer', enabled: true },
    ]);
    await expect
      .poll(async () => (await reportedSources()).map((s) => `${s.platform}:${s.channel}`), POLL)
      .toEqual(['twitch:some_streamer']);
    // The row says what /status says (whatever a closed port makes of it), in words rather than its code.
    const state = row(dashboard, 'twitch:some_streamer').locator('.source-state');
    await expect.poll(() => state.getAttribute('data-state'), POLL).not.toBeNull();
    const words = await state.locator('.state-words').textContent();
    expect(words).not.toBe(await state.getAttribute('data-state'));
    expect(words).toMatch(/^(Connecting…|Connected|Not connected|Waiting|Needs attention|Not live)/);
    expect(await dashboard.getByLabel('Channel').inputValue()).toBe('');
    // Twitch out of reach (a closed port here) says so, as TikTok does, without sign-in advice.
    await expect.poll(() => state.textContent(), POLL).toMatch(/cannot reach Twitch/);
    expect(await state.textContent()).not.toMatch(/Connection lost|connection lost|Connect Twitch/);
  });

  it('names a bad channel beside the field and changes nothing', async () => {
    const before = await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8');
    let puts = 0;
    const count = (route: Route) => {
      if (route.request().method() === 'PUT') puts++;
      return route.fallback();
    };
    await dashboard.route('**/api/settings', count);
    try {
      await dashboard.getByLabel('Platform').selectOption('youtube');
      await dashboard.getByLabel('Channel').fill('not a handle');
      await dashboard.getByRole('button', { name: 'Add source' }).click();
      await dashboard.locator('#source-channel-error').getByText('must be a YouTube handle').waitFor();
      expect(await dashboard.getByLabel('Channel').getAttribute('aria-invalid')).toBe('true');
      // Listed already (in another spelling): refused before it is sent.
      await dashboard.getByLabel('Platform').selectOption('twitch');
      await dashboard.getByLabel('Channel').fill('SOME_STREAMER');
      await dashboard.getByRole('button', { name: 'Add source' }).click();
      await dashboard.locator('#source-channel-error').getByText('already in the list').waitFor();
      await dashboard.getByLabel('Channel').fill('');
      await dashboard.getByRole('button', { name: 'Add source' }).click();
      await dashboard.locator('#source-channel-error').getByText('must not be empty').waitFor();
      expect(puts).toBe(0);
    } finally {
      await dashboard.unroute('**/api/settings', count);
    }
    expect(await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8')).toBe(before);
  });

  it("shows the daemon's refusal of a channel beside the field", async () => {
    // A refusal the page could not foresee (a newer daemon's stricter rule): the field it names shows it.
    const refuse = (route: Route) =>
      route.request().method() === 'PUT'
        ? route.fulfill({
            status: 400,
            contentType: 'application/json',
            body: JSON.stringify({
              error: {
                code: 'bad_request',
                message: 'sources.1.channel: is not a channel this daemon can read',
              },
            }),
          })
        : route.fallback();
    await dashboard.route('**/api/settings', refuse);
    try {
      await dashboard.getByLabel('Platform').selectOption('tiktok');
      await dashboard.getByLabel('Channel').fill('@another.streamer');
      await dashboard.getByRole('button', { name: 'Add source' }).click();
      await dashboard
        .locator('#source-channel-error')
        .getByText('is not a channel this daemon can read')
        .waitFor();
    } finally {
      await dashboard.unroute('**/api/settings', refuse);
    }
    expect((await storedSettings()).sources).toHaveLength(1);
  });

  it('turns a channel off and on, and removes it', async () => {
    const twitch = row(dashboard, 'twitch:some_streamer');
    await twitch.getByRole('button', { name: 'Turn off' }).click();
    await dashboard.getByText('Twitch some_streamer turned off.').waitFor();
    expect((await storedSettings()).sources).toEqual([
      { platform: 'twitch', channel: 'some_streamer', enabled: false },
    ]);
    await expect.poll(async () => (await reportedSources())[0]?.state, POLL).toBe('off');
    await expect.poll(() => twitch.locator('.state-words').textContent(), POLL).toBe('Turned off');

    await twitch.getByRole('button', { name: 'Turn on' }).click();
    await dashboard.getByText('Twitch some_streamer turned on.').waitFor();
    expect((await storedSettings()).sources).toEqual([
      { platform: 'twitch', channel: 'some_streamer', enabled: true },
    ]);
    await expect.poll(async () => (await reportedSources())[0]?.state, POLL).not.toBe('off');

    await twitch.getByRole('button', { name: 'Remove' }).click();
    await twitch.getByRole('button', { name: 'Yes, remove' }).click();
    await dashboard.getByText('Twitch some_streamer removed.').waitFor();
    expect((await storedSettings()).sources).toEqual([]);
    await expect.poll(async () => (await reportedSources()).length, POLL).toBe(0);
    await dashboard.getByText('No source yet').waitFor();
  });
});

describe('platform keys', () => {
  it('keeps the YouTube API key secret: never shown back, kept by other changes, removable', async () => {
    await openTab(dashboard, 'Sources');
    const box = dashboard.locator('[data-part="youtube"]');
    await box.locator('[data-key-state="not-set"]').waitFor();
    await box.getByLabel('YouTube Data API key').fill('not a key!');
    await box.getByRole('button', { name: 'Save the key' }).click();
    await box.locator('#youtube-api-key-error').getByText('must be a YouTube Data API key').waitFor();

    const key = 'AIzaSyTest_Key-0123456789abcdefghijk';
    await box.getByLabel('YouTube Data API key').fill(key);
    await box.getByRole('button', { name: 'Save the key' }).click();
    await box.getByText('Key saved.').waitFor();
    await box.locator('[data-key-state="set"]').waitFor();
    expect(await box.getByLabel('YouTube Data API key').inputValue()).toBe('');
    expect(await box.getByLabel('YouTube Data API key').getAttribute('type')).toBe('password');
    expect((await storedSettings()).youtube).toEqual({ apiKey: key });
    expect(await (await api(daemon, 'GET', '/api/settings')).json()).toMatchObject({
      youtube: { apiKey: { set: true } },
    });
    // After a reload the page knows only that a key is set.
    await dashboard.reload();
    await openTab(dashboard, 'Sources');
    await box.locator('[data-key-state="set"]').waitFor();
    expect(await dashboard.content()).not.toContain(key);

    // Another change of the settings keeps it.
    await dashboard.getByLabel('Platform').selectOption('youtube');
    await dashboard.getByLabel('Channel').fill('@SomeChannel');
    await dashboard.getByRole('button', { name: 'Add source' }).click();
    await dashboard.getByText('Added YouTube @somechannel').waitFor();
    expect(await storedSettings()).toMatchObject({
      youtube: { apiKey: key },
      sources: [{ platform: 'youtube', channel: '@somechannel', enabled: true }],
    });

    await box.getByRole('button', { name: 'Remove the key' }).click();
    await box.getByRole('button', { name: 'Yes, remove the key' }).click();
    await box.getByText('Key removed.').waitFor();
    await box.locator('[data-key-state="not-set"]').waitFor();
    expect((await storedSettings()).youtube).toEqual({});
    expect((await storedSettings()).sources).toHaveLength(1);
  });

  it('says where the YouTube key comes from: never "not set" while the Gatekeeper config is on its way', async () => {
    const credentials = { twitchClientId: 'waiting', youtubeApiKey: 'waiting' };
    const answer = (route: Route) => route.fulfill({ status: 200, json: credentials });
    await dashboard.route('**/api/sources/credentials', answer);
    try {
      await dashboard.reload();
      await openTab(dashboard, 'Sources');
      const box = dashboard.locator('[data-part="youtube"]');
      const state = box.locator('[data-key-state]');
      await expect.poll(() => state.getAttribute('data-key-state'), POLL).toBe('waiting');
      expect(await state.textContent()).toBe('waiting for the Gatekeeper’s config (it may give one)');
      expect(await state.getAttribute('class')).not.toContain('no');
      credentials.youtubeApiKey = 'gatekeeper';
      await expect.poll(() => state.textContent(), POLL).toBe('from the Gatekeeper’s config');
      credentials.youtubeApiKey = 'unreachable';
      await expect.poll(() => state.textContent(), POLL).toMatch(/Gatekeeper .*cannot be reached/);
    } finally {
      await dashboard.unroute('**/api/sources/credentials', answer);
    }
    await dashboard.locator('[data-part="youtube"] [data-key-state="not-set"]').waitFor();
  });

  it('the Status view says OBS is not used by any rule, not "off"', async () => {
    await openTab(dashboard, 'Status');
    const obs = dashboard.locator('[data-field="obs"]');
    await obs.getByText('Not used by any rule').first().waitFor();
    expect(await obs.textContent()).not.toMatch(/\boff\b/);
    await openTab(dashboard, 'Sources');
  });

  it('sets the Twitch client id, and says why no sign-in can start without a reachable Twitch', async () => {
    const box = dashboard.locator('[data-part="twitch"]');
    const signInPart = box.locator('[data-part="twitch-sign-in"]');
    await expect.poll(() => signInPart.getAttribute('data-state'), POLL).toBe('signed-out');
    // No client id anywhere: the daemon answers 503 and the box says where one comes from.
    await box.getByRole('button', { name: 'Connect Twitch' }).click();
    await signInPart.getByRole('alert').getByText('no Twitch client id').waitFor();

    await box.getByLabel('Twitch client id (optional)').fill('not a client id');
    await box.getByRole('button', { name: 'Save client id' }).click();
    await box.locator('#twitch-client-id-error').getByText('must be a Twitch client id').waitFor();
    await box.getByLabel('Twitch client id (optional)').fill('abcdef0123456789');
    await box.getByRole('button', { name: 'Save client id' }).click();
    await box.getByText('Saved.').waitFor();
    expect((await storedSettings()).twitch).toEqual({ clientId: 'abcdef0123456789' });

    // Twitch (a closed port here) cannot be reached: the box says the sign-in did not start.
    await box.getByRole('button', { name: 'Connect Twitch' }).click();
    await signInPart.getByRole('alert').getByText('Twitch did not start the sign-in').waitFor();
    expect(await signInPart.getAttribute('data-state')).toBe('signed-out');

    await box.getByLabel('Twitch client id (optional)').fill('');
    await box.getByRole('button', { name: 'Save client id' }).click();
    await expect.poll(async () => (await storedSettings()).twitch, POLL).toEqual({});
  });

  it('says how to sign in to Twitch otherwise when the daemon has no sign-in routes', async () => {
    const missing = (route: Route) =>
      route.fulfill({
        status: 404,
        json: { error: { code: 'not_found', message: 'no such route' } },
      });
    await dashboard.route('**/api/sources/twitch/sign-in', missing);
    try {
      await dashboard.reload();
      await openTab(dashboard, 'Sources');
      const signInPart = dashboard.locator('[data-part="twitch-sign-in"]');
      await signInPart.getByRole('alert').getByText('overlay-daemon connect twitch').waitFor();
      // The rest of the view works as ever.
      await dashboard.locator('[data-part="youtube"] [data-key-state]').waitFor();
    } finally {
      await dashboard.unroute('**/api/sources/twitch/sign-in', missing);
    }
  });

  it('says a sign-in made before chat sending must be made again, with a button for it', async () => {
    const renew =
      'sign in to Twitch again in Sources: this sign-in was made before chat sending (user:write:chat)';
    const older = (route: Route) =>
      route.request().method() === 'GET'
        ? route.fulfill({ status: 200, json: { state: 'signed-in', login: 'streamer', renew } })
        : route.fallback();
    await dashboard.route('**/api/sources/twitch/sign-in', older);
    try {
      await dashboard.reload();
      await openTab(dashboard, 'Sources');
      const signInPart = dashboard.locator('[data-part="twitch-sign-in"]');
      await expect.poll(() => signInPart.getAttribute('data-state'), POLL).toBe('signed-in');
      await signInPart.getByText(`Sending chat: ${renew}.`).waitFor();
      await signInPart.getByRole('button', { name: 'Sign in again' }).waitFor();
      await signInPart.getByRole('button', { name: 'Disconnect' }).waitFor();
    } finally {
      await dashboard.unroute('**/api/sources/twitch/sign-in', older);
    }
  });

  it('shows the code to enter on Twitch, follows the sign-in to its end, and disconnects', async () => {
    // Twitch's sign-in service, Helix and EventSub as a local stand-in speaking their protocols.
    const twitch = await startFakeTwitch({ clientId: 'fakeclientid0123', pollIntervalS: 1 });
    const other = await startTestDaemon({
      platformUrls: {
        ...UNREACHABLE_PLATFORMS,
        twitchAuth: twitch.urls.auth,
        twitchApi: twitch.urls.api,
        twitchEventSub: twitch.urls.eventsub,
      },
    });
    const page = await context.newPage();
    try {
      await signIn(page, other);
      await openTab(page, 'Sources');
      const box = page.locator('[data-part="twitch"]');
      const signInPart = box.locator('[data-part="twitch-sign-in"]');
      await box.getByLabel('Twitch client id (optional)').fill(twitch.clientId);
      await box.getByRole('button', { name: 'Save client id' }).click();
      await box.getByText('Saved.').waitFor();

      await signInPart.getByRole('button', { name: 'Connect Twitch' }).click();
      await expect.poll(() => signInPart.getAttribute('data-state'), POLL).toBe('pending');
      const code = await signInPart.getByLabel('Code to enter on Twitch').textContent();
      expect(code).toMatch(/^[0-9A-F]{8}$/);
      const link = signInPart.getByRole('link', { name: /\/activate/ });
      expect(await link.getAttribute('href')).toContain(`${twitch.urls.auth}/activate`);
      expect(await link.getAttribute('target')).toBe('_blank');

      // The streamer enters the code on Twitch: the page notices on its own.
      twitch.approve();
      await expect.poll(() => signInPart.getAttribute('data-state'), POLL).toBe('signed-in');
      expect(await signInPart.locator('strong').textContent()).toBe(twitch.user.login);

      await signInPart.getByRole('button', { name: 'Disconnect' }).click();
      await expect.poll(() => signInPart.getAttribute('data-state'), POLL).toBe('signed-out');
      expect(twitch.revokedTokens).toHaveLength(1);

      // A code that runs out before it is entered: said so, and a new one can be asked for.
      await signInPart.getByRole('button', { name: 'Connect Twitch' }).click();
      await expect.poll(() => signInPart.getAttribute('data-state'), POLL).toBe('pending');
      twitch.expireDeviceCodes();
      await expect.poll(() => signInPart.getAttribute('data-state'), POLL).toBe('failed');
      await signInPart.getByText('The last sign-in did not complete').waitFor();
      await signInPart.getByRole('button', { name: 'Connect Twitch' }).waitFor();
    } finally {
      await page.close();
      await other.stop();
      await twitch.close();
    }
  });
});

describe('sources given on the command line', () => {
  it('lists them read-only beside the saved ones, here and in the Status view', async () => {
    const other = await startTestDaemon({
      sources: [{ platform: 'twitch', channel: 'from_cli', enabled: true }],
    });
    const page = await context.newPage();
    try {
      await signIn(page, other);
      await openTab(page, 'Sources');
      const cli = row(page, 'twitch:from_cli');
      await cli.getByText('from the command line').waitFor();
      expect(await cli.getAttribute('data-from')).toBe('command-line');
      expect(await cli.getByRole('button').count()).toBe(0);
      expect(
        JSON.parse(await readFile(join(other.dataDir.root, 'settings.json'), 'utf8').catch(() => '{}')),
      ).not.toHaveProperty('sources.0');

      await openTab(page, 'Status');
      const card = page.locator('section[aria-labelledby="status-title"]');
      const item = card.locator('[data-source="twitch:from_cli"]');
      expect(await item.locator('dt').textContent()).toBe('Twitch');
      await item.locator('.platform-mark[data-platform="twitch"]').waitFor();
      const [report] = await reportedSources(other);
      expect(report).toBeDefined();
      // In words, not the raw JSON of /status.
      expect(await card.textContent()).not.toContain('"state"');
      expect(await item.locator('dd').textContent()).toMatch(/^#from_cli /);
      expect(await item.getAttribute('data-state')).toMatch(
        /^(connecting|connected|reconnecting|backoff|error|offline)$/,
      );
    } finally {
      await page.close();
      await other.stop();
    }
  });
});

describe('the platform of an event', () => {
  it('the test panel sends a Twitch chat message and the overlay marks it as from Twitch', async () => {
    const created = await api(daemon, 'POST', '/api/overlays', {
      name: 'Chat scene',
      width: 1280,
      height: 720,
      widgets: [
        { id: 'chat', type: 'chat', x: 20, y: 20, width: 600, maxMessages: 5 },
        { id: 'feed', type: 'event-list', x: 700, y: 20, width: 500, maxEvents: 5, eventTypes: ['chat'] },
      ],
    });
    expect(created.status).toBe(201);
    const overlayId = ((await created.json()) as { id: string }).id;
    const obs = await context.newPage();
    try {
      await obs.goto(`${daemon.url}/overlay/${overlayId}`);
      await expect.poll(() => obs.evaluate(() => document.body.dataset.connection), POLL).toBe('open');

      await openTab(dashboard, 'Test events');
      await dashboard.getByLabel('Event', { exact: true }).selectOption('chat');
      await dashboard.getByLabel('Platform').selectOption('twitch');
      await dashboard.getByLabel('Nickname').fill('Twitchy');
      await dashboard.getByLabel('Message').fill('hi from Twitch');
      await dashboard.getByRole('button', { name: 'Send chat event' }).click();
      await dashboard.locator('.event-log .platform-mark[data-platform="twitch"]').first().waitFor();

      const line = obs.locator('[data-widget-id="chat"] .chat-line').filter({ hasText: 'hi from Twitch' });
      const mark = line.locator('.platform-mark');
      await mark.waitFor();
      expect(await mark.getAttribute('data-platform')).toBe('twitch');
      expect(await mark.getAttribute('title')).toBe('Twitch');
      // Before the name, drawn (not text: the line reads as the viewer wrote it).
      expect(await line.evaluate((el) => el.firstElementChild?.className)).toBe('platform-mark');
      expect(await mark.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(145, 70, 255)');
      expect(await mark.evaluate((el) => getComputedStyle(el, '::before').content)).toBe('"T"');
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property.
      expect(await line.innerText()).toBe('Twitchy hi from Twitch');
      await obs
        .locator('[data-widget-id="feed"] .event-line .platform-mark[data-platform="twitch"]')
        .waitFor();

      // An event a tool posts has no platform: no mark.
      await dashboard.getByLabel('Platform').selectOption('api');
      await dashboard.getByLabel('Message').fill('hi from a tool');
      await dashboard.getByRole('button', { name: 'Send chat event' }).click();
      const plain = obs.locator('[data-widget-id="chat"] .chat-line').filter({ hasText: 'hi from a tool' });
      await plain.waitFor();
      expect(await plain.locator('.platform-mark').count()).toBe(0);
    } finally {
      await obs.close();
    }
  });
});

describe('docs', () => {
  it('the Sources view with a channel of each platform', async () => {
    const put = await api(daemon, 'PUT', '/api/settings', {
      ...((await (await api(daemon, 'GET', '/api/settings')).json()) as object),
      sources: [
        { platform: 'tiktok', channel: 'some.streamer', enabled: true },
        { platform: 'twitch', channel: 'some_streamer', enabled: true },
        { platform: 'youtube', channel: '@SomeChannel', enabled: true },
        { platform: 'twitch', channel: 'second_channel', enabled: false },
      ],
      youtube: { apiKey: 'AIzaSyTest_Key-0123456789abcdefghijk' },
    });
    expect(put.status).toBe(200);
    // The states a streamer would see on a live evening (here every platform is a closed port).
    const since = new Date(Date.now() - 42 * 60_000).toISOString();
    daemon.statusFields.set('sources', () => [
      { platform: 'tiktok', channel: 'some.streamer', state: 'connected', since },
      { platform: 'twitch', channel: 'some_streamer', state: 'connected', since },
      {
        platform: 'youtube',
        channel: '@somechannel',
        state: 'offline',
        detail: 'no live stream on this channel',
        since,
      },
      { platform: 'twitch', channel: 'second_channel', state: 'off', detail: 'turned off' },
    ]);
    try {
      await dashboard.reload();
      await openTab(dashboard, 'Sources');
      const words = (source: string) => row(dashboard, source).locator('.state-words').textContent();
      await expect.poll(() => words('youtube:@somechannel'), POLL).toBe('Not live right now');
      await expect.poll(() => words('tiktok:some.streamer'), POLL).toBe('Connected');
      await shot(dashboard, 'dashboard-sources.png');
    } finally {
      daemon.statusFields.set('sources', () => daemon.sources.report());
    }
  });
});
