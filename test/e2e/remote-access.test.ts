// The whole remote-access path on one machine: the Gatekeeper Worker under `wrangler dev` with the fake Patreon and
// fake Cloudflare API, the daemon's CLI, the stand-in connector on a TLS "public" port, and Chromium as the viewer.
import { readFile, stat } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import { readLicence } from '../../daemon/src/licence/licence-file.js';
import { login } from '../../daemon/src/licence/login.js';
import { launchChromium } from '../support/chromium.js';
import type { LocalStack } from '../support/local-stack.js';
import { until } from '../support/wait.js';
import { type RemoteStack, STACK_WAIT_MS, startRemoteStack, TUNNEL_DOMAIN } from './harness.js';

let remote: RemoteStack;
let dataDir: string;
let stack: LocalStack;
let publicPort: number;
let browser: Browser;
let context: BrowserContext;
let daemonPort: number;

/** Runs one CLI command to completion, the way a user would in another terminal. */
const cli = (...args: string[]) => remote.cli(...args);

const local = (path: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${daemonPort}${path}`, init);

/** A request to the public side of the tunnel, as a visitor at `from` would make it. */
function viaTunnel(path: string, headers: Record<string, string> = {}, from = '127.0.0.1') {
  return new Promise<{ status: number; body: string }>((resolveResponse, reject) => {
    request(
      { host: '127.0.0.1', port: publicPort, path, headers, localAddress: from, rejectUnauthorized: false },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolveResponse({ status: res.statusCode ?? 0, body }));
      },
    )
      .on('error', reject)
      .end();
  });
}

/**
 * Subscribes to an overlay through the tunnel as a visitor at `from` would (page load, then `init`):
 * 'open' once the server's `init` arrives, 'refused' when the connection is refused or closed instead.
 */
async function wsVia(
  from: string,
  overlayId: string,
): Promise<{ outcome: 'open' | 'refused'; ws: WebSocket }> {
  const page = await viaTunnel(`/overlay/${overlayId}`, {}, from);
  const token = /window\.__APP_TOKEN__="([A-Za-z0-9_-]+)"/.exec(page.body)?.[1] ?? '';
  const ws = new WebSocket(`wss://127.0.0.1:${publicPort}/`, {
    localAddress: from,
    rejectUnauthorized: false,
  });
  return new Promise((r) => {
    ws.once('open', () => ws.send(JSON.stringify({ action: 'init', overlayId, token })));
    ws.once('message', (data) => {
      r({ outcome: String(data).includes('"type":"init"') ? 'open' : 'refused', ws });
    });
    ws.once('unexpected-response', () => r({ outcome: 'refused', ws }));
    ws.once('error', () => r({ outcome: 'refused', ws }));
    ws.once('close', () => r({ outcome: 'refused', ws }));
  });
}

beforeAll(async () => {
  remote = await startRemoteStack('e2e-remote-');
  ({ dataDir, stack, publicPort, daemonPort } = remote);

  // *.overlays.test is "the internet": it resolves to the connector's public port, as DNS would to the edge.
  browser = await launchChromium({ hostMap: { [`*.${TUNNEL_DOMAIN}`]: `127.0.0.1:${publicPort}` } });
  context = await browser.newContext({ ignoreHTTPSErrors: true });
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await remote?.close();
});

describe('remote access end to end', () => {
  let subdomain = '';
  let overlayId = '';

  it('starts on the free tier, signed out', async () => {
    const status = await (await local('/status')).json();
    expect(status.licence).toMatchObject({ tier: 'free', state: 'signed_out' });
    expect(status.tunnel).toMatchObject({ connector: 'stopped', public_url: null });
  });

  it('login: the browser goes through the platform and back to the loopback listener; the licence is stored 0600', async () => {
    const page = await context.newPage();
    const record = await login({
      client: new GatekeeperClient(stack.gatekeeperUrl),
      licenceFile: join(dataDir, 'license.json'),
      openUrl: async (url) => {
        await page.goto(url); // the Gatekeeper sends us to the platform's sign-in page
        const authorize = new URL(page.url());
        expect(authorize.origin).toBe(stack.patreon.url);
        authorize.searchParams.set('login_hint', 'patron-premium'); // the member signs in and approves
        await page.goto(authorize.toString());
        return true;
      },
      log: () => {},
    });
    expect(await page.content()).toContain('You can close this tab');
    await page.close();
    expect(record).toMatchObject({ tier: 'premium', user_id: 'patron-premium' });
    expect((await stat(join(dataDir, 'license.json'))).mode & 0o777).toBe(0o600);

    // The running daemon notices the new licence and validates it: /validate returns a fresh JWT, which it stores.
    const refreshed = await until(
      async () => {
        const stored = await readLicence(join(dataDir, 'license.json'));
        return stored.ok && stored.record && stored.record.token !== record.token ? stored.record : undefined;
      },
      'the daemon to validate the new licence',
      STACK_WAIT_MS,
    );
    expect(refreshed).toMatchObject({ tier: 'premium', verdict: 'ok', user_id: 'patron-premium' });
    const { licence } = await (await local('/status')).json();
    expect(licence).toMatchObject({
      tier: 'premium',
      state: 'valid',
      last_validated_at: refreshed.validated_at,
    });
    expect(Date.parse(licence.valid_until)).toBeGreaterThan(Date.now() + 70 * 3_600_000);
  });

  it('tunnel up: provisions through the Gatekeeper; the running daemon starts the connector and the tunnel becomes active', async () => {
    const up = await cli('tunnel', 'up', '--port', String(daemonPort));
    expect(up.err).toBe('');
    expect(up.code).toBe(0);
    const url = /Tunnel ready: (https:\/\/(o-[a-z2-7]{16})\.overlays\.test)/.exec(up.out);
    expect(url).not.toBeNull();
    subdomain = url?.[2] ?? '';
    overlayId = /\/overlay\/([0-9a-f-]{36})/.exec(up.out)?.[1] ?? '';
    expect(up.out).toContain(`${url?.[1]}/overlay/${overlayId}`);
    expect(up.out).toContain('The running overlay daemon connects the tunnel');

    await until(
      () =>
        viaTunnel('/status').then(
          (r) => (r.status === 200 ? r : undefined),
          () => undefined,
        ),
      'the connector',
      STACK_WAIT_MS,
    );
    const status = await until(
      async () => {
        const s = await cli('tunnel', 'status');
        return s.out.includes(': active (') ? s.out : undefined;
      },
      'the Gatekeeper to see the connection',
      STACK_WAIT_MS,
    );
    expect(status).toContain(`tunnel ${subdomain}: active (4 connections)`);
  });

  it('an overlay page loads in Chromium at https://<subdomain>.overlays.test and its wss:// WebSocket receives a stream event', async () => {
    const page = await context.newPage();
    const frames: string[] = [];
    let socketUrl = '';
    page.on('websocket', (ws) => {
      socketUrl = ws.url();
      ws.on('framereceived', (frame) => frames.push(String(frame.payload)));
    });
    const response = await page.goto(`https://${subdomain}.${TUNNEL_DOMAIN}/overlay/${overlayId}`);
    expect(response?.status()).toBe(200);
    await until(
      () => (frames.some((f) => f.includes('"type":"init"')) ? true : undefined),
      'init over the tunnel',
      STACK_WAIT_MS,
    );
    expect(socketUrl).toMatch(new RegExp(`^wss://${subdomain}\\.overlays\\.test/?`));

    const adminKey = (await readFile(join(dataDir, 'admin.key'), 'utf8')).trim();
    const event = {
      type: 'gift',
      user: { uniqueId: 'far-viewer', nickname: 'Far Viewer' },
      data: { giftName: 'Rose', repeatCount: 3 },
    };
    const posted = await local('/api/events', {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(event),
    });
    expect(posted.status).toBe(202);
    const received = await until(
      () => frames.find((f) => f.includes('"stream-event"') && f.includes('far-viewer')),
      'the stream event through the tunnel',
      STACK_WAIT_MS,
    );
    expect(JSON.parse(received).event).toMatchObject(event);
    await page.close();
  });

  it('counts the per-IP limit by CF-Connecting-IP: the 11th subscription of one visitor is refused, another visitor still gets in', async () => {
    const open: WebSocket[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        const { outcome, ws } = await wsVia('127.0.0.7', overlayId);
        open.push(ws);
        expect(outcome).toBe('open');
      }
      const eleventh = await wsVia('127.0.0.7', overlayId);
      open.push(eleventh.ws);
      expect(eleventh.outcome).toBe('refused');
      const other = await wsVia('127.0.0.8', overlayId);
      open.push(other.ws);
      expect(other.outcome).toBe('open');
    } finally {
      for (const ws of open) ws.terminate();
    }
  });

  it('refuses the control API through the tunnel (404), even with the admin key', async () => {
    const adminKey = (await readFile(join(dataDir, 'admin.key'), 'utf8')).trim();
    const res = await viaTunnel('/api/overlays', { authorization: `Bearer ${adminKey}` });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body).error.code).toBe('not_found');
    expect((await local('/api/overlays', { headers: { Authorization: `Bearer ${adminKey}` } })).status).toBe(
      200,
    );
  });

  it('tunnel down: the Gatekeeper deletes tunnel and DNS record, the daemon stops the connector', async () => {
    const down = await cli('tunnel', 'down');
    expect(down.code).toBe(0);
    expect(down.out).toContain('Tunnel deleted');
    await until(
      () =>
        viaTunnel('/status').then(
          () => undefined,
          () => true,
        ),
      'the public port to close',
      STACK_WAIT_MS,
    );
    const status = await (await local('/status')).json();
    expect(status.tunnel).toMatchObject({ connector: 'stopped', public_url: null });
    expect((await cli('tunnel', 'status')).out).toContain('No tunnel');
    const state = await (await fetch(`${stack.cloudflare.url}/__fake/state`)).json();
    expect(state.tunnels.every((t: { deleted_at: string | null }) => t.deleted_at !== null)).toBe(true);
    expect(state.dns_records).toEqual([]);
  });
});
