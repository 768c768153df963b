// The audit of paired devices through the control API: what a paired phone changed is there (and nothing
// else it did); GET /api/audit pages oldest first after an id, bounds its limit, names a bad field, wants
// the admin key and is not there through the tunnel.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../daemon/src/devices/audit.js';
import { api, rawRequest, startTestDaemon, type TestDaemon } from '../support/daemon.js';

const TUNNEL = 'o-abc.tunnel.example';
let daemon: TestDaemon;
let audit: AuditLog;

beforeEach(async () => {
  daemon = await startTestDaemon();
  daemon.tunnelHost = TUNNEL;
  // The daemon's own events.db: what is recorded here is what the route reads.
  audit = new AuditLog(daemon.journal.database, {
    log: () => {},
    now: () => Date.parse('2026-11-28T21:00:00Z'),
  });
});
afterEach(async () => {
  await daemon.stop();
});

interface Page {
  entries: {
    id: number;
    at: string;
    deviceId: string;
    deviceName: string;
    method: string;
    path: string;
    status: number;
  }[];
  next: number | null;
}

async function page(query: string): Promise<Page> {
  const res = await api(daemon, 'GET', `/api/audit${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
}

function recordMany(count: number): void {
  for (let n = 1; n <= count; n++)
    audit.record({
      deviceId: n % 2 ? 'dev-a' : 'dev-b',
      deviceName: n % 2 ? 'Ada’s phone' : 'Mod laptop',
      method: 'POST',
      path: `/api/actions/queues/q${n}/skip`,
      status: 204,
    });
}

describe('GET /api/audit', () => {
  it('answers what devices did, 100 at a time by default, oldest first, with the id to ask after', async () => {
    recordMany(250);
    const first = await page('');
    expect(first.entries).toHaveLength(100);
    expect(first.entries[0]).toEqual({
      id: 1,
      at: '2026-11-28T21:00:00.000Z',
      deviceId: 'dev-a',
      deviceName: 'Ada’s phone',
      method: 'POST',
      path: '/api/actions/queues/q1/skip',
      status: 204,
    });
    expect(first.entries.at(-1)?.id).toBe(100);
    expect(first.next).toBe(100);

    const rest = await page(`?after=${first.next}&limit=500`);
    expect(rest.entries.map((e) => e.id)).toEqual(Array.from({ length: 150 }, (_, i) => 101 + i));
    expect(rest.next).toBeNull();

    const small = await page('?after=240&limit=5');
    expect(small.entries.map((e) => e.path)).toEqual(
      [241, 242, 243, 244, 245].map((n) => `/api/actions/queues/q${n}/skip`),
    );
    expect(small.next).toBe(245);
  });

  it('is an empty page, not an error, before any device changed anything', async () => {
    expect(await page('')).toEqual({ entries: [], next: null });
  });

  it('refuses a limit above 500 or not a whole number above 0, and a bad after, naming the field', async () => {
    for (const [query, field] of [
      ['?limit=501', 'limit'],
      ['?limit=0', 'limit'],
      ['?limit=-3', 'limit'],
      ['?limit=2.5', 'limit'],
      ['?limit=ten', 'limit'],
      ['?limit=', 'limit'],
      ['?after=abc', 'after'],
      ['?after=-1', 'after'],
      ['?after=1&after=2', 'after'],
    ] as const) {
      const res = await api(daemon, 'GET', `/api/audit${query}`);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code, query).toBe('bad_request');
      expect(body.error.message, query).toMatch(new RegExp(`^${field}: `));
    }
  });

  it('wants the admin key', async () => {
    recordMany(1);
    const res = await fetch(`${daemon.url}/api/audit`);
    expect(res.status).toBe(401);
    const wrong = await fetch(`${daemon.url}/api/audit`, { headers: { Authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
  });

  it('is not there through the tunnel, not even with the admin key', async () => {
    recordMany(1);
    const res = await rawRequest(daemon.port, {
      path: '/api/audit',
      headers: {
        Host: TUNNEL,
        'CF-Connecting-IP': '203.0.113.9',
        Authorization: `Bearer ${daemon.adminKey}`,
      },
    });
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('dev-a');
  });
});

/** A request through the tunnel as the phone's browser makes it (cookie, and on a change Origin and CSRF). */
function phone(method: string, path: string, device?: { cookie: string; csrf: string }, body?: unknown) {
  const change = method !== 'GET';
  return rawRequest(daemon.port, {
    method,
    path,
    headers: {
      Host: TUNNEL,
      'CF-Connecting-IP': '203.0.113.9',
      ...(device ? { Cookie: device.cookie } : {}),
      ...(change ? { Origin: `https://${TUNNEL}` } : {}),
      ...(change && device?.csrf ? { 'X-Overlay-CSRF': device.csrf } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Pairs a moderator's phone as the streamer does (offer, code, approve) and opens its session. */
async function pairPhone(name: string): Promise<{ id: string; cookie: string; csrf: string }> {
  const { code } = (await (await api(daemon, 'POST', '/api/pairings/offer', {})).json()) as { code: string };
  const asked = await phone('POST', '/pair', undefined, { code, deviceName: name });
  const { pairingId } = asked.json() as { pairingId: string };
  expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`)).status).toBe(204);
  const setCookie = (await phone('GET', `/pair/${pairingId}`)).headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
  const session = (await phone('GET', '/api/session', { cookie, csrf: '' })).json() as {
    deviceId: string;
    csrf: string;
  };
  return { id: session.deviceId, cookie, csrf: session.csrf };
}

describe('what a paired device changed', () => {
  it('is recorded once accepted: its test events and rule tests, not its reads nor what was refused', async () => {
    const device = await pairPhone('Sam’s phone');
    const gift = {
      type: 'gift',
      user: { uniqueId: 'tester', nickname: 'Tester' },
      data: { giftName: 'Rose', repeatCount: 1, diamondCount: 1 },
    };
    expect((await phone('POST', '/api/events?test=true', device, gift)).status).toBe(202);
    expect((await phone('GET', '/api/status', device)).status).toBe(200);
    // Refused (no such queue; no CSRF header; not a moderator's): nothing changed, nothing recorded.
    expect((await phone('POST', '/api/actions/queues/none/skip', device)).status).toBe(404);
    expect((await phone('POST', '/api/events?test=true', { ...device, csrf: '' }, gift)).status).toBe(403);
    expect((await phone('PUT', '/api/rules', device, [])).status).toBe(403);
    const rule = { id: 'r', trigger: 'gift', actions: [{ kind: 'webhook', url: 'http://127.0.0.1:9/x' }] };
    // A rule of the device's own making is refused; the saved one is tested.
    expect((await phone('POST', '/api/rules/test', device, { rule })).status).toBe(403);
    expect((await api(daemon, 'PUT', '/api/rules', [{ ...rule, name: 'Camera' }])).status).toBe(200);
    expect((await phone('POST', '/api/rules/test', device, { ruleId: 'r' })).status).toBe(200);

    const { entries, next } = await page('');
    expect(next).toBeNull();
    expect(entries.map(({ id: _, at: __, ...rest }) => rest)).toEqual([
      { deviceId: device.id, deviceName: 'Sam’s phone', method: 'POST', path: '/api/events', status: 202 },
      {
        deviceId: device.id,
        deviceName: 'Sam’s phone',
        method: 'POST',
        path: '/api/rules/test',
        status: 200,
        detail: 'rule "Camera" (r)',
      },
    ]);
    expect(Date.parse(entries[0]?.at ?? '')).not.toBeNaN();
  });
});
