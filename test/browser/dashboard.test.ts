// The streamer's dashboard in Chromium against the real daemon: sign-in, editor, media, rules, test events.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDaemonStatus } from '../../daemon/src/cli/status-text.js';
import { LicenceManager } from '../../daemon/src/licence/licence-manager.js';
import { DEFAULT_CONFIG } from '../../shared/config.js';
import type { DaemonStatus } from '../../shared/protocol/index.js';
import { launchChromium } from '../support/chromium.js';
import { makeDataDir, rawRequest, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { startFakeObs } from '../support/fakes/obs.js';

const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS; // a folder: docs/images when refreshing the docs
const POLL = { timeout: 10_000, interval: 50 };

// A 2×2 PNG, so an upload is a real image the browser can decode.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAFklEQVR4nGP8z8Dwn4GBgYGJAQoAAA8DAQDhm0sGAAAAAElFTkSuQmCC',
  'base64',
);

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let dashboard: Page;
let adminKey: string;

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${daemon.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json', ...init.headers },
  });
}

interface WidgetJson {
  id: string;
  type: string;
  x: number;
  y: number;
  [key: string]: unknown;
}

async function overlayWidgets(id: string): Promise<WidgetJson[]> {
  const body: { widgets: WidgetJson[] } = await (await api(`/api/overlays/${id}`)).json();
  return body.widgets;
}

async function shot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  // From the top: focus moved to a result may have scrolled the view, and the bar stays on top.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

/** Waits for the editor to report that the daemon has the current layout. */
async function saved(page: Page): Promise<void> {
  await expect
    .poll(() => page.locator('[data-save-state]').getAttribute('data-save-state'), POLL)
    .toBe('saved');
}

async function openTab(name: string): Promise<void> {
  await dashboard.getByRole('navigation', { name: 'Sections' }).getByRole('button', { name }).click();
}

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchChromium()]);
  adminKey = (await readFile(join(daemon.dataDir.root, 'admin.key'), 'utf8')).trim();
  context = await browser.newContext({ viewport: { width: 1400, height: 950 } });
  // A step that cannot happen fails naming its locator, well before the test's own timeout.
  context.setDefaultTimeout(10_000);
  dashboard = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('the home page', () => {
  it('at / tells a streamer where the dashboard is and which URL goes into OBS', async () => {
    const page = await context.newPage();
    try {
      await page.setViewportSize({ width: 900, height: 800 });
      await page.goto(`${daemon.url}/`);
      await page.getByRole('heading', { name: 'overlay-daemon is running' }).waitFor();
      const demo = daemon.overlays.list()[0]!;
      await page.getByText(`${daemon.url}/overlay/${demo.id}`).waitFor();
      await shot(page, 'home-page.png');
      await page.getByRole('link', { name: 'dashboard' }).click();
      await page.waitForURL(`${daemon.url}/dashboard`);
    } finally {
      await page.close();
    }
  });
});

describe('dashboard access', () => {
  it('without a key, says to open the sign-in URL, and the daemon refuses keyless API calls', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${daemon.url}/dashboard`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByText('Open the sign-in URL printed by overlay-daemon').waitFor();
    const keyless = await page.evaluate(async () => {
      const r = await fetch('/api/overlays');
      return { status: r.status, body: await r.json() };
    });
    expect(keyless).toMatchObject({ status: 401, body: { error: { code: 'unauthenticated' } } });
    await page.close();
  });

  it('is served on this computer only: through the tunnel it does not exist', async () => {
    const local = await rawRequest(daemon.port, {
      path: '/dashboard',
      headers: { Host: `127.0.0.1:${daemon.port}` },
    });
    expect(local.status).toBe(200);
    daemon.tunnelHost = 'o-example.overlays.test';
    try {
      // cloudflared connects from loopback but keeps the public Host.
      const viaTunnel = await rawRequest(daemon.port, {
        path: '/dashboard',
        headers: { Host: daemon.tunnelHost },
      });
      expect(viaTunnel.status).toBe(404);
      expect(viaTunnel.json()).toMatchObject({ error: { code: 'not_found' } });
      const asset = await rawRequest(daemon.port, {
        path: '/dashboard/assets/',
        headers: { Host: daemon.tunnelHost },
      });
      expect(asset.status).toBe(404);
    } finally {
      daemon.tunnelHost = undefined;
    }
  });

  it("says in a streamer's words when the key it was given is wrong, and how to get a good one", async () => {
    const page = await browser.newPage();
    await page.goto(`${daemon.url}/dashboard#key=not-the-key`);
    await page.getByText('This sign-in link is no longer valid').waitFor();
    const text = await page.getByRole('alert').first().textContent();
    expect(text).toContain('overlay-daemon dashboard');
    expect(text).not.toContain('Authorization');
    expect(text).not.toContain('401');
    await page.close();
  });

  it('signs in when the sign-in link is pasted into a tab already on the dashboard', async () => {
    const page = await browser.newPage();
    await page.goto(`${daemon.url}/dashboard#key=not-the-key`);
    await page.getByText('This sign-in link is no longer valid').waitFor();
    // Pasting the printed link changes only the fragment: no new page load.
    await page.evaluate((key) => {
      location.hash = `key=${encodeURIComponent(key)}`;
    }, adminKey);
    await page.getByRole('heading', { name: daemon.overlays.list()[0]!.name }).waitFor();
    expect(await page.getByText('This sign-in link is no longer valid').count()).toBe(0);
    expect(page.url()).toBe(`${daemon.url}/dashboard`);
    await page.close();
  });

  it('signs in with the printed URL, then takes the key out of the address bar', async () => {
    await dashboard.goto(`${daemon.url}/dashboard#key=${encodeURIComponent(adminKey)}`);
    await dashboard.getByRole('heading', { name: 'Overlays' }).waitFor();
    expect(dashboard.url()).toBe(`${daemon.url}/dashboard`);
    // The demo overlay of a new data directory, with its OBS URL.
    const demo = daemon.overlays.list()[0]!;
    await dashboard.getByRole('heading', { name: demo.name }).waitFor();
    expect(
      await dashboard.locator(`[data-overlay-id="${demo.id}"] input[readonly]`).first().inputValue(),
    ).toBe(`${daemon.url}/overlay/${demo.id}`);
    // A reload keeps the session (sessionStorage), without the key in the URL.
    await dashboard.reload();
    await dashboard.getByRole('heading', { name: demo.name }).waitFor();
  });
});

describe('canvas editor', () => {
  let overlayId: string;
  let textId: string;

  it('creates an overlay, adds a text widget, edits its text, and an open overlay page shows it', async () => {
    await dashboard.getByRole('button', { name: 'New overlay' }).click();
    await dashboard.getByLabel('Name').fill('Stream scene');
    await dashboard.getByRole('button', { name: 'Create overlay' }).click();
    await dashboard.getByRole('heading', { name: 'Stream scene' }).waitFor();
    overlayId = (await dashboard.locator('section.editor').getAttribute('data-overlay-id')) ?? '';
    expect(daemon.overlays.get(overlayId)?.name).toBe('Stream scene');

    const obs = await context.newPage();
    await obs.setViewportSize({ width: 1920, height: 1080 });
    await obs.goto(`${daemon.url}/overlay/${overlayId}`);

    await dashboard.getByRole('button', { name: '+ Text' }).click();
    await dashboard.getByLabel('Text', { exact: true }).fill('Hello OBS');
    await saved(dashboard);
    const widgets = await overlayWidgets(overlayId);
    expect(widgets).toHaveLength(1);
    expect(widgets[0]).toMatchObject({ type: 'text', content: 'Hello OBS' });
    textId = widgets[0]!.id;
    // overlay-update reaches the page already open, as it reaches OBS.
    await obs.getByText('Hello OBS').waitFor({ timeout: 10_000 });
    await obs.close();
  });

  it('drags a widget with the pointer, nudges it with arrows, and undoes and redoes', async () => {
    const before = (await overlayWidgets(overlayId))[0]!;
    const box = await dashboard.locator(`[data-widget-id="${textId}"]`).boundingBox();
    expect(box).not.toBeNull();
    const scale = Number(await dashboard.locator('.canvas').getAttribute('data-scale'));
    const start = { x: box!.x + 10, y: box!.y + 10 };
    await dashboard.mouse.move(start.x, start.y);
    await dashboard.mouse.down();
    await dashboard.mouse.move(start.x + 100, start.y + 50, { steps: 5 });
    await dashboard.mouse.up();
    await saved(dashboard);
    const dragged = (await overlayWidgets(overlayId))[0]!;
    expect(dragged.x - before.x).toBeCloseTo(100 / scale, -0.5);
    expect(dragged.y - before.y).toBeCloseTo(50 / scale, -0.5);

    // The dragged widget has focus: arrows nudge 1 px, Shift+arrow 10 px.
    await dashboard.keyboard.press('ArrowRight');
    await dashboard.keyboard.press('Shift+ArrowDown');
    await saved(dashboard);
    expect((await overlayWidgets(overlayId))[0]).toMatchObject({ x: dragged.x + 1, y: dragged.y + 10 });

    await dashboard.keyboard.press('Control+z'); // undoes the Shift+ArrowDown
    await dashboard.keyboard.press('Control+z'); // undoes the ArrowRight
    await dashboard.keyboard.press('Control+z'); // undoes the drag
    await saved(dashboard);
    expect((await overlayWidgets(overlayId))[0]).toMatchObject({ x: before.x, y: before.y });
    await dashboard.getByRole('button', { name: 'Redo' }).click();
    await saved(dashboard);
    expect((await overlayWidgets(overlayId))[0]).toMatchObject({ x: dragged.x, y: dragged.y });
  });

  it('refuses to save a field the schema rejects, and names the field beside it', async () => {
    const size = dashboard.getByLabel('Font size (px)');
    await size.fill('5000');
    await dashboard.locator('#prop-fontSize-error').waitFor();
    expect(await dashboard.locator('[data-save-state]').getAttribute('data-save-state')).toBe('invalid');
    expect(await dashboard.getByRole('alert').first().textContent()).toContain('widgets.0.fontSize');
    await size.fill('72');
    await saved(dashboard);
    expect((await overlayWidgets(overlayId))[0]).toMatchObject({ fontSize: 72 });
  });

  it('never overwrites a change made elsewhere: shows both versions and lets the person choose', async () => {
    // A hand edit of the file while the editor is open: the page notices and offers both versions.
    const file = join(daemon.dataDir.overlaysDir, `${overlayId}.json`);
    const onDisk = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...onDisk, height: 720 }, null, 2));
    const notice = dashboard.getByRole('alert').filter({ hasText: 'changed somewhere else' });
    await notice.waitFor({ timeout: 10_000 });
    expect(await notice.textContent()).toContain('1920 × 720');
    expect(await notice.textContent()).toContain('1920 × 1080');
    await shot(dashboard, 'dashboard-conflict.png');
    await notice.getByRole('button', { name: 'Use the other version' }).click();
    await dashboard.locator('section.editor .section-head').getByText('1920 × 720').waitFor();
    expect(daemon.overlays.get(overlayId)?.height).toBe(720);
    await notice.waitFor({ state: 'detached' });

    // Another tab saves; this page's next edit is not saved over it until the person keeps theirs.
    const other = (await (await api(`/api/overlays/${overlayId}`)).json()) as Record<string, unknown>;
    const { id: _id, ...input } = other;
    expect(
      (
        await api(`/api/overlays/${overlayId}`, {
          method: 'PUT',
          body: JSON.stringify({ ...input, name: 'Other tab' }),
        })
      ).status,
    ).toBe(200);
    await dashboard.getByLabel('Text', { exact: true }).fill('Mine, on purpose');
    await notice.waitFor({ timeout: 10_000 });
    expect(daemon.overlays.get(overlayId)?.name).toBe('Other tab');
    await notice.getByRole('button', { name: 'Keep my version' }).click();
    await saved(dashboard);
    expect(daemon.overlays.get(overlayId)?.name).toBe('Stream scene');
    expect((await overlayWidgets(overlayId))[0]).toMatchObject({ content: 'Mine, on purpose' });
  });
});

describe('media', () => {
  it('refuses a file that is not an image or a sound before sending it', async () => {
    await openTab('Media');
    await dashboard.getByLabel(/Upload images, sounds or videos/).setInputFiles({
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('hello'),
    });
    await dashboard.getByText('“notes.txt” is not an image').waitFor();
  });

  it('uploads an image, lists it, and places it on an overlay the open page shows', async () => {
    await dashboard.getByLabel(/Upload images, sounds or videos/).setInputFiles({
      name: 'logo.png',
      mimeType: 'image/png',
      buffer: PNG,
    });
    await dashboard.getByText('Uploaded logo.png.').waitFor();
    await dashboard.locator('[data-media-name="logo.png"]').waitFor();
    const served = await fetch(`${daemon.url}/assets/logo.png`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
    await shot(dashboard, 'dashboard-media.png');

    await openTab('Overlays');
    const card = dashboard.locator('li.overlay-card', { hasText: 'Stream scene' });
    const overlayId = (await card.getAttribute('data-overlay-id')) ?? '';
    const obs = await context.newPage();
    await obs.goto(`${daemon.url}/overlay/${overlayId}`);
    await card.getByRole('button', { name: 'Edit widgets' }).click();
    await dashboard.getByRole('button', { name: '+ Image' }).click();
    await saved(dashboard);
    const image = (await overlayWidgets(overlayId)).find((w) => w.type === 'image');
    expect(image).toMatchObject({ src: 'logo.png' });
    await obs.locator('img[src*="logo.png"]').waitFor({ state: 'attached', timeout: 10_000 });
    await obs.close();
  });
});

describe('rules and the test panel', () => {
  it('turns a gift into an alert: a rule made here fires from the test panel onto the overlay page', async () => {
    await openTab('Overlays');
    const card = dashboard.locator('li.overlay-card', { hasText: 'Stream scene' });
    const overlayId = (await card.getAttribute('data-overlay-id')) ?? '';
    await card.getByRole('button', { name: 'Edit widgets' }).click();
    await dashboard.getByRole('button', { name: '+ Alert' }).click();
    await saved(dashboard);
    const alert = (await overlayWidgets(overlayId)).find((w) => w.type === 'alert');
    expect(alert).toBeDefined();
    // A new alert announces gifts, follows, subscriptions and shares by itself; ticks change that.
    expect(alert).toMatchObject({ events: ['gift', 'follow', 'share', 'subscribe'] });
    await dashboard.getByRole('checkbox', { name: 'follow' }).uncheck();
    await saved(dashboard);
    expect((await overlayWidgets(overlayId)).find((w) => w.id === alert!.id)).toMatchObject({
      events: ['gift', 'share', 'subscribe'],
    });
    // Gifts will come from the rule below, with its own text: the alert stops announcing them itself.
    await dashboard.getByRole('checkbox', { name: 'gift' }).uncheck();
    await saved(dashboard);
    expect((await overlayWidgets(overlayId)).find((w) => w.id === alert!.id)).toMatchObject({
      events: ['share', 'subscribe'],
    });
    // A goal counts what its select says.
    await dashboard.getByRole('button', { name: '+ Goal' }).click();
    await dashboard.getByLabel('Counts').selectOption('follows');
    await saved(dashboard);
    expect((await overlayWidgets(overlayId)).find((w) => w.type === 'goal')).toMatchObject({
      source: 'follows',
    });
    await shot(dashboard, 'dashboard-editor.png');

    await openTab('Rules');
    await dashboard.getByRole('button', { name: 'New rule', exact: true }).click();
    const rule = dashboard.locator('li.rule').last();
    await rule.getByLabel('Name', { exact: true }).fill('Roses become an alert');
    await rule.getByLabel('Gift name is').fill('Rose');
    await rule.getByLabel('Overlay').selectOption({ label: 'Stream scene' });
    await rule.getByLabel('Widget', { exact: true }).selectOption(alert!.id);
    // The rules editor names widgets as the streamer does, not by their generated ids.
    expect(await rule.getByLabel('Widget', { exact: true }).locator('option:checked').textContent()).toBe(
      'Alert (alert)',
    );
    await dashboard.getByRole('button', { name: 'Save rules' }).click();
    await dashboard.getByText('Saved 1 rule.').waitFor();
    const rules: unknown = await (await api('/api/rules')).json();
    expect(rules).toMatchObject([
      {
        name: 'Roses become an alert',
        trigger: 'gift',
        conditions: { giftName: 'Rose' },
        actions: [{ overlayId, widgetId: alert!.id, command: 'show-alert' }],
      },
    ]);
    await shot(dashboard, 'dashboard-rules.png');

    const obs = await context.newPage();
    await obs.goto(`${daemon.url}/overlay/${overlayId}`);
    await openTab('Test events');
    await dashboard.getByLabel('Nickname').fill('Alice');
    await dashboard.getByLabel('How many').fill('99');
    await dashboard.getByRole('button', { name: 'Send gift event' }).click();
    await dashboard.getByText('Fired: Roses become an alert').waitFor();
    // Per overlay, the log says what showed the event (or why nothing did).
    const reach = dashboard.locator(`.event-log li[data-overlay-id="${overlayId}"]`).first();
    expect(await reach.getAttribute('data-shown')).toBe('yes');
    expect(await reach.textContent()).toContain('rule “Roses become an alert”');
    await shot(dashboard, 'dashboard-test-events.png');
    await obs.getByText('Alice sent 99 × Rose').waitFor({ timeout: 10_000 });
    await obs.close();
  });

  it('refuses an invalid rule and names the field, as the daemon does', async () => {
    await openTab('Rules');
    await dashboard.getByRole('button', { name: 'New rule', exact: true }).click();
    const rule = dashboard.locator('li.rule').last();
    await rule.getByLabel('Widget', { exact: true }).selectOption('');
    await rule.getByLabel('Cooldown (ms)', { exact: true }).fill('-5');
    await rule.locator('#rule-1-cooldownMs-error').waitFor();
    await rule.locator('#rule-1-actions-0-widgetId-error').waitFor();
    await dashboard.getByRole('button', { name: 'Save rules' }).click();
    await dashboard.getByText(/^Not saved: 1\.cooldownMs: /).waitFor();
    // Nothing was sent: the daemon still has the one good rule.
    expect(await (await api('/api/rules')).json()).toHaveLength(1);

    // The daemon, sent the same rule directly, refuses it with the field in the common error body.
    const bad = await api('/api/rules', {
      method: 'PUT',
      body: JSON.stringify([
        {
          id: 'r1',
          trigger: 'gift',
          actions: [{ overlayId: daemon.overlays.list()[0]!.id, widgetId: '', command: 'x' }],
        },
      ]),
    });
    expect(bad.status).toBe(400);
    const body: { error: { code: string; message: string } } = await bad.json();
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toMatch(/^0\.actions\.0\.widgetId: /);
    await dashboard.getByRole('button', { name: 'Discard changes' }).click();
  });
});

describe('status', () => {
  it('shows what /status reports and the overlay clients connected now', async () => {
    const demo = daemon.overlays.list()[0]!;
    const obs = await context.newPage();
    await obs.goto(`${daemon.url}/overlay/${demo.id}`);
    await openTab('Status');
    await dashboard
      .locator('[data-field="running"]')
      .getByText(`overlay-daemon is running at ${daemon.url}`)
      .waitFor();
    const row = dashboard.locator(`tr[data-overlay-id="${demo.id}"] td`).nth(1);
    await expect.poll(() => row.textContent(), { timeout: 15_000, interval: 200 }).toBe('1');
    await obs.close();
  });

  it('says what `overlay-daemon status` says, line for line, in local time: no ISO times, no field names', async () => {
    // The browser's time zone is this machine's, as the CLI's is: both say the computer's local time.
    const timezoneId = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const local = await browser.newContext({ viewport: { width: 1400, height: 950 }, timezoneId });
    local.setDefaultTimeout(10_000);
    const page = await local.newPage();
    const demo = daemon.overlays.list()[0]!;
    const validUntil = new Date(2031, 11, 9, 23, 15); // local time
    daemon.statusFields.set('licence', () => ({
      tier: 'premium',
      valid_until: validUntil.toISOString(),
      last_validated_at: new Date(2031, 11, 2, 8, 5).toISOString(),
      state: 'valid',
    }));
    daemon.statusFields.set('tiktok', () => ({
      source: 'tiktok',
      username: 'some.streamer',
      state: 'reconnecting',
      attempts: 3,
      lastError: 'cannot reach TikTok (is this computer online?)',
      lastErrorAt: new Date().toISOString(),
      retryInMs: 12_000,
    }));
    daemon.statusFields.set('relay', () => [
      {
        overlayId: demo.id,
        state: 'connected',
        viewers: 3,
        viewerUrl: `https://gate.example/v/o-x/${demo.id}`,
      },
    ]);
    try {
      await page.goto(`${daemon.url}/dashboard#key=${encodeURIComponent(adminKey)}`);
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('button', { name: 'Status' })
        .click();
      const licence = page.locator('[data-field="licence"] dd');
      await licence.waitFor();
      expect(await licence.textContent()).toBe('premium tier, valid, until 2031-12-09 23:15');
      const tiktok = page.locator('[data-field="tiktok"] dd');
      expect(await tiktok.textContent()).toBe(
        '@some.streamer not connected: cannot reach TikTok (is this computer online?); next attempt in 12 s',
      );

      // The same lines as the command: every row of the view is a line of `overlay-daemon status`.
      const body = (await (await api('/status')).json()) as DaemonStatus;
      const cli = describeDaemonStatus(body, daemon.url).split('\n');
      const rows = await page
        .locator('dl.status-lines > div')
        .evaluateAll((divs) =>
          divs.map((d) => [
            d.querySelector('dt')?.textContent ?? '',
            d.querySelector('dd')?.textContent ?? '',
          ]),
        );
      expect(rows.length).toBeGreaterThanOrEqual(4);
      expect(rows.map(([label, text]) => `  ${`${label}:`.padEnd(14)} ${text}`)).toEqual(cli.slice(1, -2));
      expect(await page.locator('[data-field="running"]').textContent()).toBe(cli[0]);

      const text = (await page.locator('section[aria-labelledby="status-title"]').textContent()) ?? '';
      expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:/);
      expect(text).not.toMatch(/Overlay Id|Retry In Ms|retryInMs|Valid until|Last checked/);
      expect(
        await page
          .locator(
            'section[aria-labelledby="status-title"] dl dl, section[aria-labelledby="status-title"] dd ul',
          )
          .count(),
      ).toBe(0);
    } finally {
      daemon.statusFields.delete('licence');
      daemon.statusFields.delete('tiktok');
      daemon.statusFields.delete('relay');
      await local.close();
    }
  });

  it('shows the licence and the tunnel, and offers the tunnel URL of each overlay when there is one', async () => {
    daemon.statusFields.set('licence', () => ({
      tier: 'premium',
      valid_until: '2026-12-01T00:00:00.000Z',
      last_validated_at: '2026-11-24T00:00:00.000Z',
      state: 'valid',
    }));
    daemon.statusFields.set('tunnel', () => ({
      public_url: 'https://o-example.overlays.test',
      connector: 'running',
    }));
    await openTab('Status');
    await dashboard.locator('[data-field="licence"]').getByText('premium').waitFor();
    await dashboard.locator('[data-field="tunnel"]').getByText('https://o-example.overlays.test').waitFor();
    await shot(dashboard, 'dashboard-status.png');
    await openTab('Overlays');
    const demo = daemon.overlays.list()[0]!;
    const card = dashboard.locator(`li.overlay-card[data-overlay-id="${demo.id}"]`);
    await card.getByRole('button', { name: 'Copy tunnel URL' }).waitFor();
    expect(await card.getByLabel(/Tunnel URL/).inputValue()).toBe(
      `https://o-example.overlays.test/overlay/${demo.id}`,
    );
    await shot(dashboard, 'dashboard-overlays.png');
  });
});

describe('a new overlay with an alert', () => {
  it('places new widgets apart inside the canvas, shows the OBS URL, and a test gift says what shows it', async () => {
    const page = await context.newPage();
    try {
      await page.goto(`${daemon.url}/dashboard#key=${encodeURIComponent(adminKey)}`);
      await page.getByRole('button', { name: 'New overlay' }).click();
      await page.getByLabel('Name').fill('Alerts scene');
      await page.getByRole('button', { name: 'Create overlay' }).click();
      await page.getByRole('heading', { name: 'Alerts scene' }).waitFor();
      const id = (await page.locator('section.editor').getAttribute('data-overlay-id')) ?? '';
      expect(await page.getByLabel('OBS URL').inputValue()).toBe(`${daemon.url}/overlay/${id}`);

      // An empty overlay: the test gift reaches it, and the editor says why nothing shows.
      await page.getByRole('button', { name: 'Send a test gift' }).click();
      await page.getByText('Nothing on “Alerts scene” shows gift events').waitFor();

      await page.getByRole('button', { name: '+ Alert' }).click();
      await page.getByRole('button', { name: '+ Alert' }).click();
      await page.getByRole('button', { name: '+ Goal' }).click();
      await saved(page);
      const widgets = (await (await api(`/api/overlays/${id}`)).json()) as {
        width: number;
        height: number;
        widgets: {
          type: string;
          id: string;
          x: number;
          y: number;
          width: number;
          height: number;
          events?: string[];
        }[];
      };
      expect(widgets.widgets.map((w) => w.type)).toEqual(['alert', 'alert', 'goal']);
      // Each has a name a person can tell apart, shown instead of the generated id.
      expect(widgets.widgets.map((w) => (w as { name?: string }).name)).toEqual(['Alert', 'Alert 2', 'Goal']);
      await page.locator('.layers').getByRole('button', { name: 'Alert 2 (alert)' }).waitFor();
      // A new alert announces what a streamer expects out of the box.
      expect(widgets.widgets[0]!.events).toEqual(['gift', 'follow', 'share', 'subscribe']);
      for (const [i, a] of widgets.widgets.entries()) {
        expect(a.x).toBeGreaterThanOrEqual(0);
        expect(a.y).toBeGreaterThanOrEqual(0);
        expect(a.x + a.width).toBeLessThanOrEqual(widgets.width);
        expect(a.y + a.height).toBeLessThanOrEqual(widgets.height);
        for (const b of widgets.widgets.slice(i + 1)) {
          const apart =
            a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
          expect(apart, `${a.id} and ${b.id} overlap`).toBe(true);
        }
      }

      // Now the gift shows: the editor names the alert, and the open overlay page shows it.
      const obs = await context.newPage();
      await obs.goto(`${daemon.url}/overlay/${id}`);
      await obs
        .locator('body[data-connection="open"]')
        .waitFor({ timeout: 10_000 })
        .catch(() => {});
      await page.getByRole('button', { name: 'Send a test gift' }).click();
      await page.getByText('shown by Alert (alert)').waitFor();
      await obs
        .getByText(/Test Viewer/)
        .first()
        .waitFor({ timeout: 10_000 });
      await obs.close();
    } finally {
      await page.close();
    }
  });
});

describe('free tier limits', () => {
  it('shows a limit as a notice of its own, with the limit in words and a link to Premium', async () => {
    const dataDir = await makeDataDir();
    // Offline and signed out: the bundled config's free tier (3 overlays, the demo one included).
    const licence = new LicenceManager({ dataDir, issuer: 'http://gatekeeper.invalid', log: () => {} });
    const free = await startTestDaemon({ dataDir, limits: licence });
    await licence.load();
    const page = await context.newPage();
    try {
      for (const name of ['Second', 'Third'])
        await free.overlays.create({ name, width: 1280, height: 720, widgets: [], public: false });
      const key = (await readFile(join(dataDir, 'admin.key'), 'utf8')).trim();
      await page.goto(`${free.url}/dashboard#key=${encodeURIComponent(key)}`);
      await page.getByRole('button', { name: 'New overlay' }).click();
      await page.getByRole('button', { name: 'Create overlay' }).click();
      const notice = page.locator('[data-limit]');
      await notice.getByText('Free tier limit reached').waitFor();
      const text = (await notice.textContent()) ?? '';
      expect(text).toContain(`allows ${DEFAULT_CONFIG.tiers.free.maxOverlays} overlays`);
      expect(text).toContain(`Premium allows up to ${DEFAULT_CONFIG.tiers.premium.maxOverlays} overlays`);
      // Not the developer's view: no status code, no bare URL, and nothing about remote access.
      expect(text).not.toMatch(/403|premium_required|https?:\/\/|remote access|from anywhere/i);
      // The bundled config names no premium page (only the membership platform's home page): no link to it.
      expect(await notice.getByRole('link', { name: 'See Premium' }).count()).toBe(0);
      // Laid out below the form, not inside its row of fields.
      expect(await page.locator('form.meta-form [data-limit]').count()).toBe(0);
      await shot(page, 'dashboard-limit.png');
    } finally {
      await page.close();
      await free.stop();
    }
  });
});

describe('actions and settings', () => {
  it('keeps the OBS password secret in the Settings view and names a field the daemon refuses', async () => {
    await openTab('Settings');
    await dashboard.getByLabel('OBS WebSocket password').fill('obs-secret');
    await dashboard.getByRole('button', { name: 'Save settings' }).click();
    await dashboard.getByText('Saved. In force now.').waitFor();
    // Never shown again: the field is empty and says a password is set.
    expect(await dashboard.getByLabel('OBS WebSocket password').inputValue()).toBe('');
    expect(await dashboard.getByLabel('OBS WebSocket password').getAttribute('placeholder')).toContain('set');
    const stored = JSON.parse(await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8'));
    expect(stored.obs.password).toBe('obs-secret');

    // Saving again without typing it keeps it.
    await dashboard.getByLabel('Streamer.bot HTTP server').fill('http://127.0.0.1:7575');
    await dashboard.getByRole('button', { name: 'Save settings' }).click();
    // "Saved." is still on screen from the first save: the file itself says when this one landed.
    await expect
      .poll(async () => JSON.parse(await readFile(join(daemon.dataDir.root, 'settings.json'), 'utf8')))
      .toMatchObject({
        obs: { password: 'obs-secret' },
        streamerbot: { url: 'http://127.0.0.1:7575' },
      });

    await dashboard.getByLabel(/OBS WebSocket address/).fill('http://not-a-websocket');
    await dashboard.getByRole('button', { name: 'Save settings' }).click();
    await dashboard.locator('#set-obs-url-error').getByText('must be a ws or wss URL').waitFor();
  });

  it('shows the action log and lets a stuck queue be cleared', async () => {
    const overlayId = daemon.overlays.list()[0]!.id;
    // A receiver that never answers holds the queue.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const rules = [
        {
          id: 'queued-hook',
          name: 'Follow hook',
          trigger: 'follow',
          actions: [
            { overlayId, widgetId: 'alerts', command: 'show-alert', payload: { text: 'hi', duration: 500 } },
            { kind: 'webhook', url: `http://127.0.0.1:${port}/hold`, queue: 'slow' },
          ],
        },
      ];
      expect((await api('/api/rules', { method: 'PUT', body: JSON.stringify(rules) })).status).toBe(200);
      for (let i = 0; i < 3; i++)
        await api('/api/events', {
          method: 'POST',
          body: JSON.stringify({ type: 'follow', user: { uniqueId: `f${i}`, nickname: `F${i}` }, data: {} }),
        });
      await openTab('Actions');
      const row = dashboard.locator('tr[data-queue="slow"]');
      await expect.poll(() => row.locator('td').nth(2).textContent(), { timeout: 10_000 }).toBe('2');
      await dashboard
        .locator('.action-log')
        .getByText('rule “Follow hook” action 1 (overlay): done')
        .first()
        .waitFor();
      await row.getByRole('button', { name: 'Clear' }).click();
      await expect.poll(() => row.locator('td').nth(2).textContent(), { timeout: 10_000 }).toBe('0');
      await shot(dashboard, 'dashboard-actions.png');
    } finally {
      silent.closeAllConnections();
      silent.close();
      await api('/api/rules', { method: 'PUT', body: '[]' });
    }
  });

  it('edits every kind of action with its fields, names a bad one, and tests a rule before it is saved', async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c;
      });
      req.on('end', () => {
        received.push(body);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      // The rules as the daemon has them now (the suites before changed them through the API).
      await dashboard.reload();
      await openTab('Rules');
      await dashboard.getByRole('button', { name: 'New rule', exact: true }).click();
      const rule = dashboard.locator('li.rule').last();
      const action = (n: number) => rule.locator('fieldset.action').nth(n);

      await action(0).getByLabel('Does').selectOption('webhook');
      await action(0).getByLabel('Address (http or https)').fill('ftp://example.test/x');
      await rule.locator('[id$="-actions-0-url-error"]').getByText('http or https').waitFor();
      await action(0).getByLabel('Address (http or https)').fill(hook);
      await action(0).getByLabel(/^Body/).fill('{"who": "{user.nickname}", "gift": "{data.giftName}"}');

      await rule.getByRole('button', { name: '+ Add action' }).click();
      await action(1).getByLabel('Does').selectOption('speak');
      await action(1)
        .getByLabel(/^Text to say/)
        .fill('Thank you {user.nickname}');
      await expect
        .poll(() => action(1).getByLabel('Voice').locator('option[value="en-us"]').count(), POLL)
        .toBe(1);
      await action(1).getByLabel('Voice').selectOption('en-us');
      await action(1).getByLabel('Speed (0.5–2)').fill('3');
      await rule.locator('[id$="-actions-1-rate-error"]').waitFor();
      await action(1).getByLabel('Speed (0.5–2)').fill('1.2');

      await rule.getByRole('button', { name: '+ Add action' }).click();
      await action(2).getByLabel('Does').selectOption('obs');
      await action(2).getByLabel('What OBS does').selectOption('SetSceneItemEnabled');
      await action(2).getByLabel('Scene (as named in OBS)').fill('Main');
      await action(2).getByLabel('Source (as named in OBS)').fill('Gift camera');
      await action(2)
        .getByLabel(/^Undo after/)
        .fill('5000');
      await action(2).getByLabel('Queue (actions of one queue run one at a time)').fill('camera');
      await rule.getByLabel('Per-viewer cooldown (ms)').fill('30000');

      // Tried before saving: the webhook is called with a test gift, OBS says why it could not.
      await rule.getByRole('button', { name: 'Test this rule' }).click();
      const result = rule.getByRole('status', { name: 'Test result' });
      await result.locator('[data-outcome="ok"]').getByText('Action 1 (webhook): done in').waitFor(POLL);
      await result.getByText(/Action 3 \(obs\): failed: OBS is not connected/).waitFor(POLL);
      expect(JSON.parse(received.at(-1)!)).toEqual({ who: 'Test viewer', gift: 'Rose' });
      await shot(dashboard, 'dashboard-rule-actions.png');

      await dashboard.getByRole('button', { name: 'Save rules' }).click();
      await dashboard.getByText('Saved 1 rule.').waitFor();
      const [savedRule] = (await (await api('/api/rules')).json()) as Record<string, unknown>[];
      expect(savedRule).toMatchObject({
        userCooldownMs: 30000,
        actions: [
          { kind: 'webhook', url: hook, body: { who: '{user.nickname}', gift: '{data.giftName}' } },
          { kind: 'speak', text: 'Thank you {user.nickname}', voice: 'en-us', rate: 1.2 },
          {
            kind: 'obs',
            request: 'SetSceneItemEnabled',
            params: { sceneName: 'Main', sourceName: 'Gift camera', enabled: true },
            revertAfterMs: 5000,
            queue: 'camera',
          },
        ],
      });
    } finally {
      receiver.closeAllConnections();
      receiver.close();
      await api('/api/rules', { method: 'PUT', body: '[]' });
    }
  });

  it('tests the OBS connection and speaks a sample in a chosen voice', async () => {
    const obs = await startFakeObs();
    try {
      const current = await (await api('/api/settings')).json();
      const res = await api('/api/settings', {
        method: 'PUT',
        body: JSON.stringify({ ...current, obs: { url: obs.url, password: null } }),
      });
      expect(res.status).toBe(200);
      await openTab('Rules');
      await openTab('Settings');
      await dashboard.getByRole('button', { name: 'Test the saved OBS connection' }).click();
      await dashboard.getByText('Connected to OBS 30.2.3 (obs-websocket 5.5.2).').waitFor(POLL);

      await dashboard.getByText(/^Speech engine: espeak-ng, \d+ voices\.$/).waitFor(POLL);
      await dashboard.locator('#tts-sample-voice').selectOption('fr-fr');
      await dashboard.locator('#tts-sample-text').fill('Merci pour la rose');
      await dashboard.getByRole('button', { name: 'Speak a sample' }).click();
      const audio = dashboard.locator('audio[data-sample]');
      await audio.waitFor(POLL);
      expect(await audio.getAttribute('src')).toMatch(/^\/tts\/[0-9a-f]{64}\.wav$/);
      // It plays in the dashboard: the sample is heard, not just linked.
      await expect
        .poll(() => audio.evaluate((a: HTMLAudioElement) => a.currentTime > 0 || a.ended), POLL)
        .toBe(true);
      await shot(dashboard, 'dashboard-settings.png');
    } finally {
      await obs.close();
    }
  });
});

describe('history and backups', () => {
  it('shows stream sessions with totals, a per-minute chart, top gifters, and a CSV download', async () => {
    const post = (event: unknown) => api('/api/events', { method: 'POST', body: JSON.stringify(event) });
    const viewer = (name: string) => ({ uniqueId: name.toLowerCase(), nickname: name });
    await post({
      type: 'gift',
      user: viewer('Whale'),
      data: { giftName: 'Lion', repeatCount: 1, diamondCount: 29999 },
    });
    await post({
      type: 'gift',
      user: viewer('Rosa'),
      data: { giftName: 'Rose', repeatCount: 12, diamondCount: 1 },
    });
    await post({ type: 'like', user: viewer('Fan'), data: { likeCount: 40 } });
    await post({ type: 'chat', user: viewer('Fan'), data: { comment: 'what a stream' } });
    await openTab('History');
    const sessions = dashboard.getByRole('list', { name: 'Stream sessions' });
    await sessions.getByRole('button').first().waitFor();
    const details = dashboard.getByRole('region', { name: /^Stream of / });
    await expect
      .poll(() => details.locator('[data-total="Diamonds"]').textContent(), POLL)
      .toMatch(/^[\d,]+$/);
    const diamonds = Number(
      (await details.locator('[data-total="Diamonds"]').textContent())?.replace(/,/g, ''),
    );
    expect(diamonds).toBeGreaterThanOrEqual(30_011);
    // uPlot drew the chart on a canvas.
    await details.locator('.history-chart canvas').first().waitFor();
    const top = dashboard.getByRole('list', { name: 'Top gifters of this stream' });
    expect(await top.locator('li').first().textContent()).toBe('Whale — 29,999 diamonds');
    await dashboard.getByLabel('Rank by').selectOption('likes');
    await dashboard.getByRole('list', { name: 'All-time leaderboard' }).getByText('Fan — 40 likes').waitFor();
    const [download] = await Promise.all([
      dashboard.waitForEvent('download'),
      details.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const csv = await readFile((await download.path()) ?? '', 'utf8');
    expect(csv.split('\r\n')[0]).toBe(
      'seq,time,platform,type,uniqueId,nickname,giftName,repeatCount,diamonds,likeCount,comment,viewerCount',
    );
    expect(csv).toContain(',gift,whale,Whale,Lion,1,29999,');
    await shot(dashboard, 'dashboard-history.png');
  });

  it('exports a backup and imports it back, checked before anything changes', async () => {
    await openTab('Settings');
    const [download] = await Promise.all([
      dashboard.waitForEvent('download'),
      dashboard.getByRole('button', { name: 'Export a backup' }).click(),
    ]);
    const archive = await readFile((await download.path()) ?? '');
    expect([archive[0], archive[1]]).toEqual([0x1f, 0x8b]);
    await dashboard.getByText(/^Backup downloaded/).waitFor();

    await dashboard.getByLabel('Import a backup').setInputFiles({
      name: 'broken.tar.gz',
      mimeType: 'application/gzip',
      buffer: Buffer.from('not a backup'),
    });
    await dashboard.getByText(/^Not imported, nothing changed: backup: it is not a readable/).waitFor();
    await dashboard.getByLabel('Import a backup').setInputFiles({
      name: 'backup.tar.gz',
      mimeType: 'application/gzip',
      buffer: archive,
    });
    await dashboard.getByText(/restart overlay-daemon to put it in place/).waitFor();
    const pending = join(daemon.dataDir.root, 'restore-pending.tar.gz');
    expect((await readFile(pending)).equals(archive)).toBe(true);
    await rm(pending);
  });
});
