import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, ControlApi } from './api.js';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}
let sent: Sent[] = [];

/** The daemon, stood in for by `fetch`: each request is recorded and answered by `answer`. */
function daemon(answer: (request: Sent) => Response): void {
  sent = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
    const request = {
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body,
    };
    sent.push(request);
    return answer(request);
  });
}
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
afterEach(() => {
  vi.unstubAllGlobals();
});

const OFFER = {
  code: 'ABCDEFGH23',
  url: 'https://o-abc.tunnel.example/pair#ABCDEFGH23',
  role: 'moderator',
  expiresAt: '2027-01-15T08:10:00.000Z',
};
const WAITING = {
  pairingId: 'p1',
  deviceName: 'Phone',
  ip: '203.0.113.9',
  role: 'moderator',
  at: '2027-01-15T08:01:00.000Z',
};
const DEVICE = {
  id: 'd1',
  name: 'Phone',
  role: 'owner',
  createdAt: '2027-01-15T08:02:00.000Z',
  lastSeenAt: null,
  lastIp: null,
};

describe('pairing and devices in the control API client', () => {
  it('offers a pairing with the chosen role and reads the code, URL and expiry', async () => {
    daemon(() => json(201, OFFER));
    const api = new ControlApi('k');
    expect(await api.offerPairing('owner')).toEqual(OFFER);
    expect(sent[0]).toMatchObject({
      url: '/api/pairings/offer',
      method: 'POST',
      body: { role: 'owner' },
      headers: { Authorization: 'Bearer k' },
    });
    await api.offerPairing();
    expect(sent[1]?.body).toEqual({});
  });

  it('says in words that pairing needs the tunnel (409)', async () => {
    daemon(() => json(409, { error: { code: 'conflict', message: 'no tunnel is running' } }));
    const error = await new ControlApi('k').offerPairing().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: 'conflict', message: 'no tunnel is running' });
  });

  it('lists waiting pairings and devices, and refuses answers of the wrong shape', async () => {
    daemon((r) => json(200, r.url === '/api/pairings' ? [WAITING] : [DEVICE]));
    const api = new ControlApi('k');
    expect(await api.pairings()).toEqual([WAITING]);
    expect(await api.devices()).toEqual([DEVICE]);
    daemon(() => json(200, [{ ...DEVICE, role: 'admin' }]));
    const error = await api.devices().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unexpected_response' });
  });

  it('approves (with a role when given), refuses and revokes with the ids in the path', async () => {
    daemon(() => new Response(null, { status: 204 }));
    const api = new ControlApi('k');
    await api.approvePairing('p/1', 'owner');
    await api.approvePairing('p2');
    await api.refusePairing('p3');
    await api.revokeDevice('d1');
    expect(sent.map((r) => [r.method, r.url, r.body])).toEqual([
      ['POST', '/api/pairings/p%2F1/approve', { role: 'owner' }],
      ['POST', '/api/pairings/p2/approve', {}],
      ['POST', '/api/pairings/p3/refuse', undefined],
      ['DELETE', '/api/devices/d1', undefined],
    ]);
  });
});
