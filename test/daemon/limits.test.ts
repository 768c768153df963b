// Per-IP connection limit (interface §8, decisions §3): 10 open connections per client IP, HTTP and WebSocket together.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../helpers/daemon.js';
import { connectWs, type TestWsClient, UpgradeRefused } from '../helpers/ws.js';

let daemon: TestDaemon;
let overlayId: string;
const open: TestWsClient[] = [];

beforeAll(async () => {
  daemon = await startTestDaemon({ initTimeoutMs: 10_000 });
  overlayId = daemon.overlays.list()[0]!.id;
});
afterAll(async () => {
  for (const client of open) client.ws.terminate();
  await daemon?.stop();
});

const wsUrl = () => `ws://127.0.0.1:${daemon.port}`;

async function fill(localAddress: string, count: number): Promise<TestWsClient[]> {
  const clients: TestWsClient[] = [];
  for (let i = 0; i < count; i++) clients.push(await connectWs(wsUrl(), { localAddress }));
  open.push(...clients);
  return clients;
}

async function refusal(promise: Promise<unknown>): Promise<UpgradeRefused> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof UpgradeRefused))
    throw new Error(`expected the upgrade to be refused, got ${String(err)}`);
  return err;
}

describe('connections per IP', () => {
  it('refuses the 11th WebSocket from one IP with 429, while another IP has its own quota', async () => {
    const clients = await fill('127.0.0.2', 10);
    const eleventh = await refusal(connectWs(wsUrl(), { localAddress: '127.0.0.2' }));
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers['retry-after']).toBeDefined();
    // Another source address is another client.
    const other = await subscribe(daemon, overlayId, { localAddress: '127.0.0.3' });
    other.close();
    // An HTTP request from the full IP is refused too: the limit counts both kinds.
    const http = await rawRequest(daemon.port, {
      path: '/status',
      headers: { Host: 'localhost' },
      localAddress: '127.0.0.2',
    });
    expect(http.status).toBe(429);
    expect(http.headers['retry-after']).toBe('1');
    expect(JSON.parse(http.body)).toMatchObject({ error: { code: 'rate_limited' } });
    expect(http.headers['x-content-type-options']).toBe('nosniff');
    // Closing one frees one slot.
    clients[0]!.close();
    await clients[0]!.closed;
    await waitFor(
      async () =>
        (
          await rawRequest(daemon.port, {
            path: '/status',
            headers: { Host: 'localhost' },
            localAddress: '127.0.0.2',
          })
        ).status === 200,
    );
    for (const client of clients) client.close();
    await Promise.all(clients.map((c) => c.closed));
  });

  it('counts HTTP requests in flight', async () => {
    // Nine WebSockets plus one slow upload in flight make ten; the next request is refused.
    const clients = await fill('127.0.0.4', 9);
    const slow = request({
      host: '127.0.0.1',
      port: daemon.port,
      method: 'POST',
      path: '/api/events',
      localAddress: '127.0.0.4',
      agent: false,
      headers: { Host: 'localhost', Authorization: `Bearer ${daemon.adminKey}`, 'Content-Length': '100' },
    });
    slow.on('error', () => {});
    slow.write('{');
    await waitFor(
      async () =>
        (
          await rawRequest(daemon.port, {
            path: '/status',
            headers: { Host: 'localhost' },
            localAddress: '127.0.0.4',
          })
        ).status === 429,
    );
    slow.destroy();
    for (const client of clients) client.close();
  });

  it('through the tunnel, counts per CF-Connecting-IP rather than per loopback peer', async () => {
    daemon.tunnelHost = 'o-abc.tunnel.example';
    try {
      const tunnel = (ip: string) => ({
        headers: { Host: 'o-abc.tunnel.example', 'CF-Connecting-IP': ip },
        localAddress: '127.0.0.5',
      });
      const viewers = [];
      for (let i = 0; i < 10; i++) viewers.push(await connectWs(wsUrl(), tunnel('203.0.113.7')));
      open.push(...viewers);
      expect((await refusal(connectWs(wsUrl(), tunnel('203.0.113.7')))).status).toBe(429);
      const another = await connectWs(wsUrl(), tunnel('198.51.100.9'));
      another.close();
      // Without the tunnel Host the header is not believed: the peer itself is counted.
      await fill('127.0.0.6', 10);
      const forged = connectWs(wsUrl(), {
        headers: { 'CF-Connecting-IP': '192.0.2.1' },
        localAddress: '127.0.0.6',
      });
      expect((await refusal(forged)).status).toBe(429);
      for (const viewer of viewers) viewer.close();
    } finally {
      daemon.tunnelHost = undefined;
    }
  });
});
