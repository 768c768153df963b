// Paired devices through the tunnel: the device cookie lets a phone reach /api/* and /dashboard with its
// role's rights (owner or moderator), every change needs the X-Overlay-CSRF header, the admin key is never
// accepted there, and a revoked device (DELETE /api/devices/:id, `devices --revoke`, a new admin key) is
// refused at once and loses its open sockets.

import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../daemon/src/cli/main.js';
import { rotateAdminKey } from '../../daemon/src/store/data-dir.js';
import { api, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';
import type { FakeTimers } from '../support/fake-timers.js';
import { listenLoopback, readBody } from '../support/fakes/listen.js';
import { PHONE_IP, startTunnelledDaemon, TUNNEL, viaTunnel } from '../support/tunnel-phone.js';
import { until } from '../support/wait.js';

let daemon: TestDaemon;
let clock: FakeTimers;

beforeEach(async () => {
  ({ daemon, clock } = await startTunnelledDaemon());
});
afterEach(async () => {
  await daemon.stop();
});

interface Device {
  id: string;
  /** `__Host-overlay_device=<token>`, as the phone's browser sends it back. */
  cookie: string;
  csrf: string;
}

interface Call {
  /** The device whose cookie rides along (none: no cookie). */
  as?: Device;
  /** Any other Cookie header (a forged one). */
  cookie?: string;
  /** The X-Overlay-CSRF header: the device's own by default on a change, `null` for none. */
  csrf?: string | null;
  body?: unknown;
  ip?: string;
  host?: string;
  headers?: Record<string, string>;
}

/**
 * A request through the tunnel, as the phone's browser makes it: the tunnel's Host, the real client in
 * CF-Connecting-IP, the device cookie, and on a change the page's own Origin and the CSRF header.
 */
function tunnel(method: string, path: string, call: Call = {}) {
  const change = method !== 'GET' && method !== 'HEAD';
  const csrf = call.csrf === undefined ? call.as?.csrf : call.csrf;
  const cookie = call.cookie ?? call.as?.cookie;
  const host = call.host ?? TUNNEL;
  return viaTunnel(daemon, method, path, {
    body: call.body,
    ip: call.ip,
    host,
    headers: {
      ...(cookie ? { Cookie: cookie } : {}),
      ...(change ? { Origin: `https://${host}` } : {}),
      ...(change && csrf ? { 'X-Overlay-CSRF': csrf } : {}),
      ...call.headers,
    },
  });
}

async function local<T = unknown>(path: string): Promise<T> {
  const res = await api(daemon, 'GET', path);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

/** Pairs a phone with `role` the way the streamer does (offer, the phone's code, approve) and opens its session. */
async function pairDevice(role: 'owner' | 'moderator', name = `${role} phone`): Promise<Device> {
  const offered = await api(daemon, 'POST', '/api/pairings/offer', { role });
  expect(offered.status).toBe(201);
  const { code } = (await offered.json()) as { code: string };
  const asked = await tunnel('POST', '/pair', { body: { code, deviceName: name } });
  expect(asked.status).toBe(202);
  const { pairingId } = asked.json() as { pairingId: string };
  expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`)).status).toBe(204);
  const approved = await tunnel('GET', `/pair/${pairingId}`);
  const setCookie = approved.headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
  expect(cookie).toMatch(/^__Host-overlay_device=/);
  const session = await tunnel('GET', '/api/session', { cookie });
  expect(session.status).toBe(200);
  const { deviceId, csrf } = session.json() as { deviceId: string; csrf: string };
  return { id: deviceId, cookie, csrf };
}

function expectError(res: { status: number; json(): unknown }, status: number, code: string): void {
  expect({ status: res.status, body: res.json() }).toEqual({
    status,
    body: { error: { code, message: expect.any(String) } },
  });
}

/** A valid rule list: one gift rule showing a widget of the daemon's first overlay. */
const someRules = () => [
  {
    id: 'r',
    name: 'Roses',
    trigger: 'gift',
    actions: [{ overlayId: daemon.overlays.list()[0]?.id, widgetId: 'w', command: 'show' }],
  },
];

const testGift = {
  type: 'gift',
  user: { uniqueId: 'tester', nickname: 'Tester' },
  data: { giftName: 'Rose', repeatCount: 1, diamondCount: 1 },
};

describe('through the tunnel without a device session', () => {
  it('/api/* and /dashboard do not exist without the device cookie', async () => {
    for (const path of ['/api/session', '/api/status', '/api/overlays', '/api/events', '/dashboard']) {
      expectError(await tunnel('GET', path), 404, 'not_found');
    }
    expectError(await tunnel('POST', '/api/events?test=true', { body: testGift }), 404, 'not_found');
  });

  it('never accepts the admin key', async () => {
    const bearer = { Authorization: `Bearer ${daemon.adminKey}` };
    expectError(await tunnel('GET', '/api/overlays', { headers: bearer }), 404, 'not_found');
    expectError(await tunnel('GET', '/api/devices', { headers: bearer }), 404, 'not_found');
    expectError(
      await tunnel('PUT', '/api/rules', {
        headers: bearer,
        body: someRules(),
      }),
      404,
      'not_found',
    );
    expect(await local('/api/rules')).toEqual([]);
  });

  it('answers 401 unauthenticated on /api/* to a cookie of no paired device', async () => {
    await pairDevice('owner');
    const forged = `__Host-overlay_device=${'A'.repeat(43)}`;
    expectError(await tunnel('GET', '/api/session', { cookie: forged }), 401, 'unauthenticated');
    expectError(await tunnel('GET', '/api/overlays', { cookie: forged }), 401, 'unauthenticated');
    expectError(
      await tunnel('POST', '/api/events?test=true', { cookie: forged, csrf: 'x', body: testGift }),
      401,
      'unauthenticated',
    );
  });
});

describe('a device session', () => {
  it('GET /api/session names the device, its role and the CSRF value', async () => {
    const owner = await pairDevice('owner', 'Pixel');
    const moderator = await pairDevice('moderator', 'iPhone');
    const devices = await local<{ id: string; name: string }[]>('/api/devices');
    const session = (await tunnel('GET', '/api/session', { as: moderator })).json();
    expect(session).toEqual({
      deviceId: devices.find((d) => d.name === 'iPhone')?.id,
      name: 'iPhone',
      role: 'moderator',
      csrf: expect.stringMatching(/.{16,}/),
    });
    expect((await tunnel('GET', '/api/session', { as: owner })).json()).toEqual({
      deviceId: devices.find((d) => d.name === 'Pixel')?.id,
      name: 'Pixel',
      role: 'owner',
      csrf: owner.csrf,
    });
    expect(owner.csrf).not.toBe(moderator.csrf);
  });

  it('opens the dashboard through the tunnel', async () => {
    const moderator = await pairDevice('moderator');
    const page = await tunnel('GET', '/dashboard', { as: moderator });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
  });

  it('refuses a change without the X-Overlay-CSRF header or with a wrong one (403), and nothing changes', async () => {
    const owner = await pairDevice('owner');
    const moderator = await pairDevice('moderator');
    const rules = someRules();
    for (const csrf of [null, 'wrong', moderator.csrf]) {
      expectError(await tunnel('PUT', '/api/rules', { as: owner, csrf, body: rules }), 403, 'forbidden');
    }
    for (const csrf of [null, 'wrong', owner.csrf]) {
      expectError(
        await tunnel('POST', '/api/events?test=true', { as: moderator, csrf, body: testGift }),
        403,
        'forbidden',
      );
    }
    expect(await local('/api/rules')).toEqual([]);
    expect(await local<{ events: unknown[] }>('/api/events')).toMatchObject({ events: [] });
  });

  it('notes when and from where the device was last seen', async () => {
    const moderator = await pairDevice('moderator', 'iPhone');
    clock.advance(90_000);
    expect((await tunnel('GET', '/api/actions/log', { as: moderator, ip: '198.51.100.44' })).status).toBe(
      200,
    );
    const devices = await local<Record<string, unknown>[]>('/api/devices');
    expect(devices).toEqual([
      expect.objectContaining({
        name: 'iPhone',
        lastSeenAt: new Date(clock.now()).toISOString(),
        lastIp: '198.51.100.44',
      }),
    ]);
  });

  it('is refused under a Host that is neither local nor the tunnel`s, and from another origin', async () => {
    const owner = await pairDevice('owner');
    expectError(await tunnel('GET', '/api/session', { as: owner, host: 'evil.example' }), 403, 'forbidden');
    const elsewhere = await tunnel('PUT', '/api/rules', {
      as: owner,
      body: someRules(),
      headers: { Origin: 'https://evil.example' },
    });
    expectError(elsewhere, 403, 'forbidden');
    expect(await local('/api/rules')).toEqual([]);
  });
});

/** A local receiver that holds every webhook call open until released. */
class HoldingReceiver {
  readonly held: ServerResponse[] = [];
  readonly server: Server = createServer((req, res) => {
    req.resume();
    this.held.push(res);
  });
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }
  close(): void {
    for (const res of this.held.splice(0)) res.end('ok');
    this.server.closeAllConnections();
    this.server.close();
  }
}

describe('a moderator', () => {
  it('reads status (the local view), history, sessions, leaderboard, the action log and queues', async () => {
    const moderator = await pairDevice('moderator');
    daemon.statusFields.set('licence', () => ({
      tier: 'premium',
      valid_until: '2026-12-01T00:00:00.000Z',
      last_validated_at: null,
      state: 'valid',
    }));
    const status = await tunnel('GET', '/api/status', { as: moderator });
    expect(status.status).toBe(200);
    expect(status.json()).toEqual(await local('/status'));
    expect(status.json()).toMatchObject({ running: true, port: daemon.port, licence: { tier: 'premium' } });

    for (const path of [
      '/api/events',
      '/api/sessions',
      '/api/leaderboard',
      '/api/actions/log',
      '/api/actions/queues',
    ]) {
      const res = await tunnel('GET', path, { as: moderator });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.json()).toEqual(await local(path));
    }
  });

  it('reads the overlay and rule lists its views show', async () => {
    const moderator = await pairDevice('moderator');
    expect((await api(daemon, 'PUT', '/api/rules', someRules())).status).toBe(200);
    for (const path of ['/api/overlays', '/api/rules']) {
      const res = await tunnel('GET', path, { as: moderator });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.json()).toEqual(await local(path));
    }
  });

  it('sends a test event and tests a rule', async () => {
    const moderator = await pairDevice('moderator');
    const sent = await tunnel('POST', '/api/events?test=true', { as: moderator, body: testGift });
    expect(sent.status).toBe(202);
    expect(sent.json()).toMatchObject({ accepted: true });
    const history = await local<{ events: { test: boolean; event: { user: { nickname: string } } }[] }>(
      '/api/events',
    );
    expect(history.events.map((e) => [e.event.user.nickname, e.test])).toEqual([['Tester', true]]);

    expect((await api(daemon, 'PUT', '/api/rules', someRules())).status).toBe(200);
    const tested = await tunnel('POST', '/api/rules/test', { as: moderator, body: { rule: someRules()[0] } });
    expect(tested.status).toBe(200);
    expect(tested.json()).toMatchObject({ event: { type: 'gift' }, unfinished: 0 });
  });

  it('skips and clears a queue', async () => {
    const receiver = new HoldingReceiver();
    await receiver.listen();
    try {
      const moderator = await pairDevice('moderator');
      const rules = [
        {
          id: 'cam',
          trigger: 'gift',
          actions: [{ kind: 'webhook', url: `${receiver.url}/cam`, queue: 'camera' }],
        },
      ];
      expect((await api(daemon, 'PUT', '/api/rules', rules)).status).toBe(200);
      for (let i = 0; i < 3; i++) await api(daemon, 'POST', '/api/events', testGift);
      await until(
        async () =>
          (await local<{ waiting: number }[]>('/api/actions/queues'))[0]?.waiting === 2 || undefined,
        'two calls waiting behind the first',
        3000,
      );
      const skipped = await tunnel('POST', '/api/actions/queues/camera/skip', { as: moderator });
      expect({ status: skipped.status, body: skipped.json() }).toEqual({
        status: 200,
        body: { name: 'camera', running: true, waiting: 1 },
      });
      const cleared = await tunnel('POST', '/api/actions/queues/camera/clear', { as: moderator });
      expect({ status: cleared.status, body: cleared.json() }).toEqual({
        status: 200,
        body: { name: 'camera', running: true, waiting: 0 },
      });
    } finally {
      receiver.close();
    }
  });

  it('may not change rules, overlays, settings or media (403 forbidden), and nothing changes', async () => {
    const moderator = await pairDevice('moderator');
    const overlays = daemon.overlays.list();
    const settings = await local('/api/settings');
    await writeFile(join(daemon.dataDir.mediaDir, 'x.png'), 'png');
    const refused: [string, string, unknown?][] = [
      ['PUT', '/api/rules', someRules()],
      ['POST', '/api/overlays', { name: 'Mine', width: 1920, height: 1080 }],
      ['DELETE', `/api/overlays/${overlays[0]?.id}`],
      ['PUT', '/api/settings', { ...(settings as object), streamerbot: { url: 'ws://127.0.0.1:9/' } }],
      ['DELETE', '/api/media/x.png'],
      ['DELETE', '/api/test-events'],
    ];
    for (const [method, path, body] of refused) {
      const res = await tunnel(method, path, { as: moderator, ...(body === undefined ? {} : { body }) });
      expect({ method, path, status: res.status, body: res.json() }).toEqual({
        method,
        path,
        status: 403,
        body: { error: { code: 'forbidden', message: expect.any(String) } },
      });
    }
    expect(await local('/api/rules')).toEqual([]);
    expect(daemon.overlays.list()).toEqual(overlays);
    expect(await local('/api/settings')).toEqual(settings);
    expect(await readFile(join(daemon.dataDir.mediaDir, 'x.png'), 'utf8')).toBe('png');
  });
});

describe('an owner', () => {
  it('saves rules and creates overlays', async () => {
    const owner = await pairDevice('owner');
    const saved = await tunnel('PUT', '/api/rules', { as: owner, body: someRules() });
    expect(saved.status).toBe(200);
    expect(await local('/api/rules')).toEqual([expect.objectContaining({ id: 'r', name: 'Roses' })]);
    const created = await tunnel('POST', '/api/overlays', {
      as: owner,
      body: { name: 'From the phone', width: 1080, height: 1920 },
    });
    expect(created.status).toBe(201);
    expect(daemon.overlays.list().map((o) => o.name)).toContain('From the phone');
  });

  it('saves settings that keep every secret, never ones that change or clear a secret', async () => {
    const owner = await pairDevice('owner');
    const current = await local<Record<string, unknown>>('/api/settings');
    const secrets = {
      obs: { url: 'ws://127.0.0.1:4455', password: 'hunter2' },
      youtube: { apiKey: 'AIzaKey' },
    };
    expect((await api(daemon, 'PUT', '/api/settings', { ...current, ...secrets })).status).toBe(200);
    const stored = async () => JSON.parse(await readFile(daemon.dataDir.settingsFile, 'utf8'));

    const view = await local<Record<string, unknown>>('/api/settings');
    expect(view).toMatchObject({ obs: { password: { set: true } }, youtube: { apiKey: { set: true } } });
    const kept = await tunnel('PUT', '/api/settings', {
      as: owner,
      body: { ...view, points: { perLike: 2 }, obs: { url: 'ws://127.0.0.1:4455', password: { set: true } } },
    });
    expect(kept.status).toBe(200);
    expect(await stored()).toMatchObject({
      obs: { url: 'ws://127.0.0.1:4455', password: 'hunter2' },
      youtube: { apiKey: 'AIzaKey' },
      points: { perLike: 2 },
    });

    const changes = [
      { obs: { url: 'ws://127.0.0.1:4461', password: 'stolen' } },
      { obs: { url: 'ws://127.0.0.1:4461', password: null } },
      { youtube: { apiKey: 'AIzaOther' } },
      { youtube: { apiKey: { set: false } } },
    ];
    for (const change of changes) {
      const res = await tunnel('PUT', '/api/settings', { as: owner, body: { ...view, ...change } });
      expect({ change, status: res.status }).toEqual({ change, status: 403 });
      expectError(res, 403, 'forbidden');
    }
    expect(await stored()).toMatchObject({
      obs: { url: 'ws://127.0.0.1:4455', password: 'hunter2' },
      youtube: { apiKey: 'AIzaKey' },
    });
  });
});

describe('what stays the admin key`s alone', () => {
  it('pairing, the devices, the audit, backup and restore are 403 for an owner and a moderator', async () => {
    const owner = await pairDevice('owner');
    const moderator = await pairDevice('moderator');
    // A phone waiting for approval, which no device may approve.
    const { code } = (await (await api(daemon, 'POST', '/api/pairings/offer', {})).json()) as {
      code: string;
    };
    const waiting = (
      await tunnel('POST', '/pair', { body: { code, deviceName: 'Intruder' }, ip: '192.0.2.5' })
    ).json() as {
      pairingId: string;
    };
    const refused: [string, string, unknown?][] = [
      ['GET', '/api/devices'],
      ['DELETE', `/api/devices/${moderator.id}`],
      ['DELETE', '/api/devices/x'],
      ['POST', '/api/pairings/offer', { role: 'owner' }],
      ['GET', '/api/pairings'],
      ['POST', `/api/pairings/${waiting.pairingId}/approve`, { role: 'owner' }],
      ['GET', '/api/audit'],
      ['GET', '/api/backup'],
      ['POST', '/api/restore', {}],
    ];
    for (const device of [owner, moderator]) {
      for (const [method, path, body] of refused) {
        const res = await tunnel(method, path, { as: device, ...(body === undefined ? {} : { body }) });
        expect({ method, path, status: res.status, body: res.json() }).toEqual({
          method,
          path,
          status: 403,
          body: { error: { code: 'forbidden', message: expect.any(String) } },
        });
      }
    }
    expect((await local<unknown[]>('/api/devices')).length).toBe(2);
    expect(await local('/api/pairings')).toEqual([expect.objectContaining({ deviceName: 'Intruder' })]);
  });

  it('with the device cookie and the admin key, the key is ignored and the device`s role applies', async () => {
    const owner = await pairDevice('owner');
    const moderator = await pairDevice('moderator');
    const bearer = { Authorization: `Bearer ${daemon.adminKey}` };
    expectError(
      await tunnel('PUT', '/api/rules', {
        as: moderator,
        headers: bearer,
        body: someRules(),
      }),
      403,
      'forbidden',
    );
    expectError(await tunnel('GET', '/api/devices', { as: owner, headers: bearer }), 403, 'forbidden');
    expectError(await tunnel('GET', '/api/backup', { as: owner, headers: bearer }), 403, 'forbidden');
    expect(await local('/api/rules')).toEqual([]);
  });
});

describe('revocation', () => {
  it('DELETE /api/devices/:id refuses the device`s next request at once (401); others go on', async () => {
    const owner = await pairDevice('owner');
    const moderator = await pairDevice('moderator');
    expect((await api(daemon, 'DELETE', `/api/devices/${moderator.id}`)).status).toBe(204);
    expectError(await tunnel('GET', '/api/session', { as: moderator }), 401, 'unauthenticated');
    expectError(
      await tunnel('POST', '/api/events?test=true', { as: moderator, body: testGift }),
      401,
      'unauthenticated',
    );
    expect((await tunnel('GET', '/api/session', { as: owner })).status).toBe(200);
  });

  it('a revoked device opening /dashboard gets the signed-out page; its files and no cookie stay 404', async () => {
    const moderator = await pairDevice('moderator');
    expect((await api(daemon, 'DELETE', `/api/devices/${moderator.id}`)).status).toBe(204);
    const page = await tunnel('GET', '/dashboard', { as: moderator });
    expect(page.status).toBe(401);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(page.body).toContain('<h1>Signed out</h1>');
    expect(page.body).toContain('href="/pair"');
    expectError(await tunnel('GET', '/dashboard/assets/index.js', { as: moderator }), 404, 'not_found');
    expectError(await tunnel('GET', '/dashboard'), 404, 'not_found');
  });

  it('overlay-daemon devices --revoke ID does the same', async () => {
    const moderator = await pairDevice('moderator');
    expect((await tunnel('GET', '/api/session', { as: moderator })).status).toBe(200);
    const io = {
      output: '',
      errors: '',
      out: (text: string) => {
        io.output += text;
      },
      err: (text: string) => {
        io.errors += text;
      },
      stopSignal: () => new Promise<string>(() => {}),
      ask: async () => 'n',
      pollMs: 10,
    };
    expect(await main(['devices', '--revoke', moderator.id, '--data-dir', daemon.dataDir.root], io)).toBe(0);
    expectError(await tunnel('GET', '/api/session', { as: moderator }), 401, 'unauthenticated');
  });

  it('a new admin key revokes every device', async () => {
    const owner = await pairDevice('owner');
    const moderator = await pairDevice('moderator');
    const old = daemon.adminKey;
    await rotateAdminKey(daemon.dataDir);
    await waitFor(() => daemon.adminKey !== old);
    for (const device of [owner, moderator]) {
      expectError(await tunnel('GET', '/api/session', { as: device }), 401, 'unauthenticated');
    }
  });

  it('closes an overlay socket the device opened through the tunnel', async () => {
    const moderator = await pairDevice('moderator');
    const owner = await pairDevice('owner');
    const overlayId = daemon.overlays.list()[0]?.id ?? '';
    const through = (device: Device) => ({
      headers: {
        Host: TUNNEL,
        'CF-Connecting-IP': PHONE_IP,
        Cookie: device.cookie,
        Origin: `https://${TUNNEL}`,
      },
    });
    const revoked = await subscribe(daemon, overlayId, through(moderator));
    const kept = await subscribe(daemon, overlayId, through(owner));
    try {
      expect((await api(daemon, 'DELETE', `/api/devices/${moderator.id}`)).status).toBe(204);
      await revoked.closed;
      // The other device's socket stays open and still receives.
      await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, {
        widgetId: 'w',
        command: 'show',
        payload: {},
      });
      await kept.next((m) => m.type === 'overlay-command');
    } finally {
      revoked.close();
      kept.close();
    }
  });
});

/** A local service that records every request it gets (what a webhook would reach from the streamer's computer). */
async function recordingService() {
  const requests: { url: string; headers: Record<string, unknown> }[] = [];
  const server = await listenLoopback(async (req, res) => {
    await readBody(req);
    requests.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200);
    res.end('ok');
  });
  return { ...server, requests };
}

describe('the streamer`s credentials in rules and settings', () => {
  let service: Awaited<ReturnType<typeof recordingService>>;
  beforeEach(async () => {
    service = await recordingService();
  });
  afterEach(async () => {
    await service.close();
  });

  const webhookRule = (
    url: string,
    headers: Record<string, string> = { Authorization: 'Bearer s3cret' },
  ) => ({
    id: 'alert',
    name: 'Alert',
    trigger: 'gift',
    actions: [{ kind: 'webhook', url, headers }],
  });

  it('a moderator`s rule of its own making is refused (403) and sends nothing; the admin`s is tested', async () => {
    const moderator = await pairDevice('moderator');
    const madeUp = webhookRule(`${service.url}/internal/reset`, { 'X-Admin': 'yes' });
    expectError(
      await tunnel('POST', '/api/rules/test', { as: moderator, body: { rule: madeUp } }),
      403,
      'forbidden',
    );

    // Saved, then changed on the way: still not the saved rule.
    expect((await api(daemon, 'PUT', '/api/rules', [webhookRule(`${service.url}/hook`)])).status).toBe(200);
    const changed = { ...webhookRule(`${service.url}/hook`), actions: madeUp.actions };
    const refused = await tunnel('POST', '/api/rules/test', { as: moderator, body: { rule: changed } });
    expectError(refused, 403, 'forbidden');
    expect((refused.json() as { error: { message: string } }).error.message).toMatch(/saved/);
    expect(service.requests).toEqual([]);
    expect(await local<{ entries: unknown[] }>('/api/audit')).toEqual({ entries: [], next: null });

    // The streamer's own dashboard keeps testing rules that are not saved.
    const res = await api(daemon, 'POST', '/api/rules/test', { rule: madeUp });
    expect(res.status).toBe(200);
    expect(service.requests.map((r) => r.url)).toEqual(['/internal/reset']);
  });

  it('a moderator tests the saved rule, by id or as it read it, and the audit names the rule', async () => {
    const moderator = await pairDevice('moderator', 'Mod phone');
    expect((await api(daemon, 'PUT', '/api/rules', [webhookRule(`${service.url}/hook/t0ken`)])).status).toBe(
      200,
    );
    const [asRead] = (await tunnel('GET', '/api/rules', { as: moderator })).json() as unknown[];
    for (const body of [{ ruleId: 'alert' }, { rule: asRead }]) {
      const res = await tunnel('POST', '/api/rules/test', { as: moderator, body });
      expect({ body, status: res.status }).toEqual({ body, status: 200 });
    }
    // What ran is the saved rule, its stored header included.
    expect(service.requests.map((r) => [r.url, r.headers.authorization])).toEqual([
      ['/hook/t0ken', 'Bearer s3cret'],
      ['/hook/t0ken', 'Bearer s3cret'],
    ]);
    expectError(
      await tunnel('POST', '/api/rules/test', { as: moderator, body: { ruleId: 'none' } }),
      404,
      'not_found',
    );
    const { entries } = await local<{ entries: Record<string, unknown>[] }>('/api/audit');
    expect(entries.map(({ path, detail }) => ({ path, detail }))).toEqual([
      { path: '/api/rules/test', detail: 'rule "Alert" (alert)' },
      { path: '/api/rules/test', detail: 'rule "Alert" (alert)' },
    ]);
  });

  it('an owner tests only saved rules too', async () => {
    const owner = await pairDevice('owner');
    const rule = webhookRule(`${service.url}/hook`);
    expectError(await tunnel('POST', '/api/rules/test', { as: owner, body: { rule } }), 403, 'forbidden');
    expect(service.requests).toEqual([]);
    expect((await tunnel('PUT', '/api/rules', { as: owner, body: [rule] })).status).toBe(200);
    expect((await tunnel('POST', '/api/rules/test', { as: owner, body: { rule } })).status).toBe(200);
    expect(service.requests).toHaveLength(1);
  });

  it('an owner reads them hidden too, and what it sends back hidden keeps the stored values', async () => {
    const owner = await pairDevice('owner');
    const saved = webhookRule(`${service.url}/hook/t0ken`);
    expect((await api(daemon, 'PUT', '/api/rules', [saved])).status).toBe(200);
    const read = await tunnel('GET', '/api/rules', { as: owner });
    const [asRead] = read.json() as Record<string, unknown>[];
    expect(asRead).toMatchObject({
      actions: [{ url: `${service.url}/[redacted]`, headers: { Authorization: '[redacted]' } }],
    });
    // Renamed from the phone, quoting the version it read: the address and the header stay as stored.
    const renamed = await tunnel('PUT', '/api/rules', {
      as: owner,
      body: [{ ...asRead, name: 'Renamed' }],
      headers: { 'If-Match': String(read.headers.etag) },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json()).toMatchObject([
      { name: 'Renamed', actions: [{ headers: { Authorization: '[redacted]' } }] },
    ]);
    expect(await local('/api/rules')).toMatchObject([
      {
        name: 'Renamed',
        actions: [{ url: `${service.url}/hook/t0ken`, headers: { Authorization: 'Bearer s3cret' } }],
      },
    ]);
    // The stored header kept, to an address of the phone's choosing: changing the secret (403).
    const action = (asRead?.actions as Record<string, unknown>[] | undefined)?.[0];
    const moved = [{ ...asRead, actions: [{ ...action, url: 'http://127.0.0.1:9/steal' }] }];
    expectError(await tunnel('PUT', '/api/rules', { as: owner, body: moved }), 403, 'forbidden');
    // Hidden with nothing stored behind it: refused in words, never saved as "[redacted]".
    const hiddenNew = [{ ...webhookRule(`${service.url}/x`, { Authorization: '[redacted]' }), id: 'new' }];
    const refused = await tunnel('PUT', '/api/rules', { as: owner, body: hiddenNew });
    expectError(refused, 400, 'bad_request');
    expect((refused.json() as { error: { message: string } }).error.message).toMatch(/hidden; type it again/);
    expect(await local('/api/rules')).toMatchObject([{ id: 'alert', name: 'Renamed' }]);
  });

  it('a moderator reads rules and outcomes with webhook tokens and stored headers hidden, and no settings', async () => {
    const moderator = await pairDevice('moderator');
    const discord = 'https://discord.com/api/webhooks/1234/AbCdToken';
    const rules = [
      {
        id: 'discord',
        trigger: 'follow',
        actions: [
          {
            kind: 'webhook',
            url: discord,
            headers: {
              Authorization: 'Bearer s3cret',
              'X-Api-Key': 'k3y',
              'Content-Type': 'application/json',
            },
          },
        ],
      },
      // A tool that cannot be reached: its outcome's error names the address.
      { id: 'down', trigger: 'gift', actions: [{ kind: 'webhook', url: 'http://127.0.0.1:9/hook?key=abc' }] },
    ];
    expect((await api(daemon, 'PUT', '/api/rules', rules)).status).toBe(200);
    const read = await tunnel('GET', '/api/rules', { as: moderator });
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.json())).not.toMatch(/AbCdToken|s3cret|k3y|key=abc/);
    expect(read.json()).toMatchObject([
      {
        actions: [
          {
            url: 'https://discord.com/[redacted]',
            headers: {
              Authorization: '[redacted]',
              'X-Api-Key': '[redacted]',
              'Content-Type': 'application/json',
            },
          },
        ],
      },
      { actions: [{ url: 'http://127.0.0.1:9/[redacted]' }] },
    ]);
    // The streamer reads them as saved.
    expect(await local('/api/rules')).toMatchObject([{ actions: [{ url: discord }] }, expect.anything()]);

    const tested = await tunnel('POST', '/api/rules/test', { as: moderator, body: { ruleId: 'down' } });
    expect(tested.status).toBe(200);
    const outcome = (tested.json() as { outcomes: { ok: boolean; error?: string }[] }).outcomes[0];
    expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining('127.0.0.1:9') });
    expect(outcome?.error).not.toMatch(/key=abc|\/hook/);
    const log = (await tunnel('GET', '/api/actions/log', { as: moderator })).json() as { error?: string }[];
    expect(log.map((e) => e.error)).toEqual([outcome?.error]);
    expect(JSON.stringify(await local('/api/actions/log'))).toMatch(/hook/);

    expectError(await tunnel('GET', '/api/settings', { as: moderator }), 403, 'forbidden');
  });

  it('an owner may not send a stored secret elsewhere: the OBS or Streamer.bot address, a webhook`s host', async () => {
    const owner = await pairDevice('owner');
    const current = await local<Record<string, unknown>>('/api/settings');
    expect(
      (await api(daemon, 'PUT', '/api/settings', { ...current, obs: { url: 'ws://127.0.0.1:4455' } })).status,
    ).toBe(200);
    const view = async () => local<Record<string, unknown>>('/api/settings');
    // Without a stored password the OBS address is the owner's to change.
    const moved = await tunnel('PUT', '/api/settings', {
      as: owner,
      body: { ...(await view()), obs: { url: 'ws://127.0.0.1:4460' } },
    });
    expect(moved.status).toBe(200);
    expect(
      (
        await api(daemon, 'PUT', '/api/settings', {
          ...(await view()),
          obs: { url: 'ws://127.0.0.1:4455', password: 'hunter2' },
        })
      ).status,
    ).toBe(200);
    const stored = async () => JSON.parse(await readFile(daemon.dataDir.settingsFile, 'utf8'));
    const before = await stored();
    for (const change of [
      { obs: { url: 'ws://attacker.example:4455', password: { set: true } } },
      { obs: { url: 'ws://127.0.0.1:4461' } },
      { streamerbot: { url: 'http://127.0.0.1:9999' } },
    ]) {
      const res = await tunnel('PUT', '/api/settings', { as: owner, body: { ...(await view()), ...change } });
      expect({ change, status: res.status }).toEqual({ change, status: 403 });
      expectError(res, 403, 'forbidden');
    }
    expect(await stored()).toEqual(before);

    expect((await api(daemon, 'PUT', '/api/rules', [webhookRule(`${service.url}/hook`)])).status).toBe(200);
    const elsewhere = webhookRule('http://127.0.0.1:9/steal');
    const refused = await tunnel('PUT', '/api/rules', { as: owner, body: [elsewhere] });
    expectError(refused, 403, 'forbidden');
    expect(await local('/api/rules')).toMatchObject([{ actions: [{ url: `${service.url}/hook` }] }]);
    // Another path on the same host, or a webhook elsewhere with headers typed anew, is the owner's to save.
    for (const rules of [
      [webhookRule(`${service.url}/other`)],
      [webhookRule('http://127.0.0.1:9/new', { Authorization: 'Bearer typed-anew' })],
    ]) {
      expect((await tunnel('PUT', '/api/rules', { as: owner, body: rules })).status).toBe(200);
    }
  });
});
