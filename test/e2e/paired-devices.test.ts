// Paired devices end to end (decisions-3 §11): the Gatekeeper under `wrangler dev` with the fake Patreon and fake
// Cloudflare API, the daemon's CLI, the stand-in connector on a TLS "public" port, and Chromium as the streamer's
// phones at https://<subdomain>.overlays.test: pairing, a moderator's and an owner's dashboard, revocation.
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { openTab } from '../support/dashboard.js';
import type { LocalStack } from '../support/local-stack.js';
import { until } from '../support/wait.js';
import { type RemoteStack, STACK_WAIT_MS, signIn, startRemoteStack, TUNNEL_DOMAIN } from './harness.js';

const DEVICE_COOKIE = '__Host-overlay_device';
const PHONE = { width: 390, height: 844 };

let remote: RemoteStack;
let dataDir: string;
let stack: LocalStack;
let publicPort: number;
let browser: Browser;
let daemonPort: number;
let adminKey: string;
let tunnelHost: string;
let overlayId: string;
const contexts: BrowserContext[] = [];

/** Runs one CLI command to completion, the way a user would in another terminal. */
const cli = (...args: string[]) => remote.cli(...args);

/** The control API on this computer, with the admin key. */
function local(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${daemonPort}${path}`, {
    method,
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

interface TunnelAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request to the public side of the tunnel, as a visitor at `from` would make it (the edge names it in CF-Connecting-IP). */
function viaTunnel(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; from?: string } = {},
): Promise<TunnelAnswer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolveAnswer, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: publicPort,
        method,
        path,
        servername: tunnelHost,
        headers: {
          host: tunnelHost,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        localAddress: options.from ?? '127.0.0.1',
        rejectUnauthorized: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const errorCode = (answer: TunnelAnswer): unknown => JSON.parse(answer.body).error.code;

/** A phone: its own browser context (its own cookies), screen-sized like one. */
async function phone(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: PHONE, ignoreHTTPSErrors: true });
  context.setDefaultTimeout(STACK_WAIT_MS);
  contexts.push(context);
  return { context, page: await context.newPage() };
}

interface Waiting {
  pairingId: string;
  deviceName: string;
  ip: string;
  role: string;
}

/**
 * The streamer offers a pairing with `role` on their computer; the phone opens the offer's URL, names itself
 * and sends; the streamer sees it waiting and approves; the phone says so and opens the dashboard. Returns
 * what the streamer saw.
 */
async function pair(page: Page, role: 'owner' | 'moderator', deviceName: string): Promise<Waiting> {
  const offered = await local('POST', '/api/pairings/offer', { role });
  expect(offered.status).toBe(201);
  const offer = (await offered.json()) as { code: string; url: string; role: string };
  expect(offer.role).toBe(role);
  expect(offer.url).toBe(`https://${tunnelHost}/pair#${offer.code}`);

  expect((await page.goto(offer.url))?.status()).toBe(200);
  expect(await page.getByLabel('Pairing code').inputValue()).toBe(offer.code);
  await page.getByLabel('Name of this device').fill(deviceName);
  await page.getByRole('button', { name: 'Pair' }).click();
  await page.getByText('Waiting for the streamer to approve on their computer…').waitFor();

  const waiting = (await (await local('GET', '/api/pairings')).json()) as Waiting[];
  const mine = waiting.find((p) => p.deviceName === deviceName);
  expect(mine).toBeDefined();
  expect((await local('POST', `/api/pairings/${mine?.pairingId}/approve`, {})).status).toBe(204);
  await page.getByText('Approved — opening the dashboard').waitFor();
  // The page opens the dashboard by itself, a moment after saying so.
  await page.waitForURL(`https://${tunnelHost}/dashboard`);
  return mine as Waiting;
}

/** What the page's own origin answers to `fetch(path, init)`, from inside the page (its cookie goes along). */
function fetchInPage(
  page: Page,
  method: string,
  path: string,
  options: { csrf?: boolean; body?: unknown; ifMatch?: string } = {},
): Promise<{ status: number; code: string | undefined; etag: string | null }> {
  return page.evaluate(
    async ({ method, path, options }) => {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (options.csrf) {
        const session = (await (await fetch('/api/session')).json()) as { csrf: string };
        headers['X-Overlay-CSRF'] = session.csrf;
      }
      if (options.ifMatch) headers['If-Match'] = options.ifMatch;
      const res = await fetch(path, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
      const body = (await res.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
      return { status: res.status, code: body?.error?.code, etag: res.headers.get('ETag') };
    },
    { method, path, options },
  );
}

/** Nothing wider than the phone: no sideways scrolling (decisions-3 §11). */
async function fitsThePhone(page: Page): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
}

const navigation = (page: Page) =>
  page.getByRole('navigation', { name: 'Sections' }).getByRole('button').allTextContents();

beforeAll(async () => {
  remote = await startRemoteStack('e2e-devices-');
  ({ dataDir, stack, publicPort, daemonPort } = remote);
  adminKey = (await readFile(join(dataDir, 'admin.key'), 'utf8')).trim();

  // A Premium member signs in; the running daemon validates the licence; `tunnel up` gives it a tunnel.
  await signIn(stack.gatekeeperUrl, stack.patreon.url, join(dataDir, 'license.json'));
  await until(
    async () => {
      const { licence } = (await (await local('GET', '/status')).json()) as { licence?: { state?: string } };
      return licence?.state === 'valid' ? true : undefined;
    },
    'the daemon to validate the licence',
    STACK_WAIT_MS,
  );
  const up = await cli('tunnel', 'up', '--port', String(daemonPort));
  expect(up.code).toBe(0);
  const subdomain = /Tunnel ready: https:\/\/(o-[a-z2-7]{16})\.overlays\.test/.exec(up.out)?.[1];
  expect(subdomain).toBeDefined();
  tunnelHost = `${subdomain}.${TUNNEL_DOMAIN}`;
  overlayId = /\/overlay\/([0-9a-f-]{36})/.exec(up.out)?.[1] ?? '';
  expect(overlayId).not.toBe('');
  await until(
    () =>
      viaTunnel('GET', '/status').then(
        (r) => (r.status === 200 ? r : undefined),
        () => undefined,
      ),
    'the connector',
    STACK_WAIT_MS,
  );

  // A rule a test gift fires, so the moderator sees it in the action log.
  expect(
    (
      await local('PUT', '/api/rules', [
        {
          id: 'thank-gifts',
          name: 'Thank gifts',
          trigger: 'gift',
          actions: [{ kind: 'overlay', overlayId, widgetId: 'alerts', command: 'show-alert' }],
        },
      ])
    ).status,
  ).toBe(200);

  // *.overlays.test is "the internet": it resolves to the connector's public port, as DNS would to the edge.
  browser = await launchChromium({ hostMap: { [`*.${TUNNEL_DOMAIN}`]: `127.0.0.1:${publicPort}` } });
});

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  if (tunnelHost) await cli('tunnel', 'down');
  await remote?.close();
});

describe('paired devices end to end', () => {
  let moderatorPage: Page;
  let ownerPage: Page;

  it('without a device cookie the dashboard and the API stay 404 through the tunnel, the admin key included', async () => {
    for (const path of ['/dashboard', '/api/status', '/api/session']) {
      const answer = await viaTunnel('GET', path);
      expect(answer.status, path).toBe(404);
    }
    const withKey = await viaTunnel('GET', '/api/status', {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(withKey.status).toBe(404);
    expect(errorCode(withKey)).toBe('not_found');
  });

  it('lists a waiting phone with the address the edge names (CF-Connecting-IP); a refused one gets no cookie', async () => {
    const { code } = (await (await local('POST', '/api/pairings/offer', {})).json()) as { code: string };
    const sent = await viaTunnel('POST', '/pair', {
      body: { code, deviceName: 'Far phone' },
      from: '127.0.0.9',
    });
    expect(sent.status).toBe(202);
    const { pairingId } = JSON.parse(sent.body) as { pairingId: string };
    const waiting = (await (await local('GET', '/api/pairings')).json()) as Waiting[];
    expect(waiting).toEqual([
      expect.objectContaining({ pairingId, deviceName: 'Far phone', ip: '127.0.0.9', role: 'moderator' }),
    ]);
    expect((await local('POST', `/api/pairings/${pairingId}/refuse`)).status).toBe(204);
    const polled = await viaTunnel('GET', `/pair/${pairingId}`, { from: '127.0.0.9' });
    expect(JSON.parse(polled.body)).toEqual({ state: 'refused' });
    expect(polled.headers['set-cookie']).toBeUndefined();
  });

  it('pairs a phone as a moderator: offered, named on the phone, approved on the computer; the phone holds the cookie', async () => {
    const { context, page } = await phone();
    moderatorPage = page;
    const waiting = await pair(page, 'moderator', 'Sam’s phone');
    expect(waiting).toMatchObject({ role: 'moderator', ip: '127.0.0.1' });

    const cookie = (await context.cookies(`https://${tunnelHost}/`)).find((c) => c.name === DEVICE_COOKIE);
    expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict', path: '/' });
    const devices = (await (await local('GET', '/api/devices')).json()) as { name: string; role: string }[];
    expect(devices).toEqual([expect.objectContaining({ name: 'Sam’s phone', role: 'moderator' })]);
  });

  it('opens the dashboard with Status, Actions, Test events and History only, and its name and role on top', async () => {
    const page = moderatorPage;
    await page.getByRole('heading', { name: 'Status', level: 1 }).waitFor();
    expect(new URL(page.url()).host).toBe(tunnelHost);
    expect(await navigation(page)).toEqual(['Status', 'Actions', 'Test events', 'History']);
    expect(await page.locator('.topbar').textContent()).toContain('Sam’s phone · moderator');
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    // The local view of /status, read at /api/status, in the words of `overlay-daemon status`: the
    // remote-access line names the tunnel's public address.
    await page.locator('[data-field="tunnel"]').getByText(`https://${tunnelHost}`).waitFor();
    expect(await page.getByText('Could not load everything').count()).toBe(0);
    await fitsThePhone(page);
  });

  it('sends a test event from the test panel (202, with the CSRF header and no key): it fires the rule, shows in the action log and the history', async () => {
    const page = moderatorPage;
    await openTab(page, 'Test events');
    await page.getByLabel('Event', { exact: true }).selectOption('gift');
    const answered = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/api/events' && r.request().method() === 'POST',
    );
    await page.getByRole('button', { name: 'Send gift event' }).click();
    const response = await answered;
    expect(response.status()).toBe(202);
    const sentHeaders = await response.request().allHeaders();
    const session = (await page.evaluate(() => fetch('/api/session').then((r) => r.json()))) as {
      name: string;
      role: string;
      csrf: string;
    };
    expect(session).toMatchObject({ name: 'Sam’s phone', role: 'moderator' });
    expect(sentHeaders['x-overlay-csrf']).toBe(session.csrf);
    expect(sentHeaders.authorization).toBeUndefined();
    // A moderator reads the rule list: the rule that fired is named as the streamer named it.
    await page.getByText('Fired: Thank gifts').waitFor();
    await fitsThePhone(page);

    await openTab(page, 'Actions');
    await page.getByText(/rule “Thank gifts” action 1 \(overlay\)/).waitFor();
    await fitsThePhone(page);

    await openTab(page, 'History');
    await page.getByText(/1 test event \(from the test panel/).waitFor();
    // Removing test events is not a moderator's to do: not offered.
    expect(await page.getByRole('button', { name: 'Remove test events' }).count()).toBe(0);
    await fitsThePhone(page);
  });

  it('refuses the moderator an owner’s change (403), and any change without the CSRF header (403)', async () => {
    const page = moderatorPage;
    expect(await fetchInPage(page, 'PUT', '/api/rules', { csrf: true, body: [] })).toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    expect(
      await fetchInPage(page, 'POST', '/api/events?test=true', { body: { type: 'like' } }),
    ).toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    expect(await fetchInPage(page, 'GET', '/api/devices')).toMatchObject({ status: 403, code: 'forbidden' });
    // The rules are as the streamer left them.
    const rules = (await (await local('GET', '/api/rules')).json()) as { id: string }[];
    expect(rules.map((r) => r.id)).toEqual(['thank-gifts']);
  });

  it('pairs a second phone as an owner: it saves rules, but may not list devices nor offer a pairing', async () => {
    const { page } = await phone();
    ownerPage = page;
    await pair(page, 'owner', 'Alex’s tablet');
    await page.getByRole('heading', { name: 'Overlays', level: 1 }).waitFor();
    expect(await page.locator('.topbar').textContent()).toContain('Alex’s tablet · owner');
    expect(await navigation(page)).toHaveLength(9);

    const read = await fetchInPage(page, 'GET', '/api/rules');
    expect(read.status).toBe(200);
    const rules = [
      {
        id: 'thank-gifts',
        name: 'Thank gifts',
        trigger: 'gift',
        actions: [{ kind: 'overlay', overlayId, widgetId: 'alerts', command: 'show-alert' }],
      },
      {
        id: 'thank-follows',
        name: 'Thank follows',
        trigger: 'follow',
        actions: [{ kind: 'overlay', overlayId, widgetId: 'alerts', command: 'show-alert' }],
      },
    ];
    expect(
      (await fetchInPage(page, 'PUT', '/api/rules', { csrf: true, body: rules, ifMatch: read.etag ?? '' }))
        .status,
    ).toBe(200);
    const saved = (await (await local('GET', '/api/rules')).json()) as { id: string }[];
    expect(saved.map((r) => r.id)).toEqual(['thank-gifts', 'thank-follows']);

    expect(await fetchInPage(page, 'GET', '/api/devices')).toMatchObject({ status: 403, code: 'forbidden' });
    expect(
      await fetchInPage(page, 'POST', '/api/pairings/offer', { csrf: true, body: { role: 'owner' } }),
    ).toMatchObject({ status: 403, code: 'forbidden' });

    // Settings without what stays on the streamer's computer: devices, backups, the OBS password.
    await openTab(page, 'Settings');
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    await page.getByLabel(/OBS WebSocket address/).waitFor();
    expect(await page.getByRole('heading', { name: 'Devices' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Backup' }).count()).toBe(0);
    expect(await page.getByLabel('OBS WebSocket password').count()).toBe(0);
  });

  it('revokes the moderator on the computer: its next call is 401 and its dashboard says it was signed out', async () => {
    const page = moderatorPage;
    // The Actions view asks again every two seconds.
    await openTab(page, 'Actions');
    const devices = (await (await local('GET', '/api/devices')).json()) as { id: string; name: string }[];
    const moderator = devices.find((d) => d.name === 'Sam’s phone');
    expect((await local('DELETE', `/api/devices/${moderator?.id}`)).status).toBe(204);

    await page.getByText(/This device was signed out \(revoked\)/).waitFor();
    await page.getByRole('link', { name: 'pair again' }).waitFor();
    // The views are gone, and with them every poll.
    expect(await page.getByRole('navigation', { name: 'Sections' }).count()).toBe(0);
    expect(await fetchInPage(page, 'GET', '/api/status')).toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });

    // The owner is still in; the admin key is still nothing through the tunnel.
    expect((await fetchInPage(ownerPage, 'GET', '/api/status')).status).toBe(200);
    const withKey = await viaTunnel('GET', '/api/status', {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(withKey.status).toBe(404);
    const remaining = (await (await local('GET', '/api/devices')).json()) as { name: string }[];
    expect(remaining.map((d) => d.name)).toEqual(['Alex’s tablet']);
  });
});
