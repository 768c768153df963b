// Per-IP connection limit (interface §8, decisions §3): 10 open connections per client IP, HTTP and WebSocket together.
import { writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  pageToken,
  rawRequest,
  startTestDaemon,
  subscribe,
  type TestDaemon,
  waitFor,
} from '../support/daemon.js';
import { connectWs, type TestWsClient } from '../support/ws.js';

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

/** Subscribed connections (page loaded, `init` sent): what counts against the limit of 10 per IP. */
async function fill(
  localAddress: string,
  count: number,
  headers?: Record<string, string>,
): Promise<TestWsClient[]> {
  const clients: TestWsClient[] = [];
  for (let i = 0; i < count; i++)
    clients.push(await subscribe(daemon, overlayId, { localAddress, ...(headers ? { headers } : {}) }));
  open.push(...clients);
  return clients;
}

/** A connection over the address's limit is let in, then closed 1008 when its `init` would take a slot. */
async function refusedAtInit(localAddress: string, headers?: Record<string, string>): Promise<number> {
  const token = await pageToken(daemon, overlayId);
  const client = await connectWs(wsUrl(), { localAddress, ...(headers ? { headers } : {}) });
  open.push(client);
  client.sendInit(overlayId, token);
  return (await client.closed).code;
}

/** One GET through a keep-alive agent; resolves with the status once the body has been read. */
function agentGet(agent: Agent, path: string, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: daemon.port, path, agent, localAddress, headers: { Host: 'localhost' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Writes raw HTTP requests back to back on one connection (the last asks to close) and returns each response's status. */
function pipelined(localAddress: string, requests: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: daemon.port, localAddress });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('no end of the responses within 3 s')), 3000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      // The bodies are short JSON without a status line in them: every match starts a response.
      resolve([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])));
    });
    socket.write(
      requests
        .map((head, i) => `${head}${i === requests.length - 1 ? 'Connection: close\r\n' : ''}\r\n`)
        .join(''),
    );
  });
}

describe('connections per IP', () => {
  it('closes the 11th subscribed WebSocket from one IP (1008), while another IP has its own quota', async () => {
    const clients = await fill('127.0.0.2', 10);
    expect(await refusedAtInit('127.0.0.2')).toBe(1008);
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

  it('counts a keep-alive connection once across its requests, and still refuses an 11th open request', async () => {
    // Large enough that the response is streamed: the next request on the connection can arrive
    // before the previous response's close event.
    await writeFile(join(daemon.dataDir.mediaDir, 'keep-alive.png'), Buffer.alloc(256 * 1024, 7));
    const agent = new Agent({ keepAlive: true, maxSockets: 10 });
    const sockets = new Set<unknown>();
    agent.on('free', (socket) => sockets.add(socket));
    try {
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let i = 0; i < 40; i++)
            statuses.push(await agentGet(agent, '/assets/keep-alive.png', '127.0.0.7'));
        }),
      );
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(statuses).toHaveLength(400);
      expect(sockets.size).toBe(10);

      // The same ten connections each with an upload in flight fill the quota: the next request is refused.
      const slow = Array.from({ length: 10 }, () => {
        const req = request({
          host: '127.0.0.1',
          port: daemon.port,
          method: 'POST',
          path: '/api/events',
          localAddress: '127.0.0.7',
          agent,
          headers: { Host: 'localhost', Authorization: `Bearer ${daemon.adminKey}`, 'Content-Length': '100' },
        });
        req.on('error', () => {});
        req.write('{');
        return req;
      });
      await waitFor(
        async () =>
          (
            await rawRequest(daemon.port, {
              path: '/status',
              headers: { Host: 'localhost' },
              localAddress: '127.0.0.7',
            })
          ).status === 429,
        3000,
        'the 11th request to be refused',
      );
      for (const req of slow) req.destroy();
    } finally {
      agent.destroy();
    }
  });

  it('through the tunnel, visitors sharing one connector connection take a slot each', async () => {
    daemon.tunnelHost = 'o-abc.tunnel.example';
    const get = (ip: string) =>
      `GET /status HTTP/1.1\r\nHost: o-abc.tunnel.example\r\nCF-Connecting-IP: ${ip}\r\n`;
    const tunnel = (ip: string) => ({
      headers: { Host: 'o-abc.tunnel.example', 'CF-Connecting-IP': ip },
      localAddress: '127.0.0.8',
    });
    try {
      const full = await fill('127.0.0.8', 10, tunnel('198.51.100.20').headers);
      // One visitor's request holds the connection's slot; the next visitor's, right behind it on the
      // same connection, is counted against its own address, which is full.
      expect(await pipelined('127.0.0.9', [get('198.51.100.21'), get('198.51.100.20')])).toEqual([200, 429]);
      // Nothing is left held for the first visitor: it still has all ten of its own.
      const first = await fill('127.0.0.8', 10, tunnel('198.51.100.21').headers);
      expect(await refusedAtInit('127.0.0.8', tunnel('198.51.100.21').headers)).toBe(1008);
      for (const client of [...full, ...first]) client.close();
    } finally {
      daemon.tunnelHost = undefined;
    }
  });

  it('through the tunnel, counts per CF-Connecting-IP rather than per loopback peer', async () => {
    daemon.tunnelHost = 'o-abc.tunnel.example';
    try {
      const tunnel = (ip: string) => ({
        headers: { Host: 'o-abc.tunnel.example', 'CF-Connecting-IP': ip },
        localAddress: '127.0.0.5',
      });
      const viewers = await fill('127.0.0.5', 10, tunnel('203.0.113.7').headers);
      expect(await refusedAtInit('127.0.0.5', tunnel('203.0.113.7').headers)).toBe(1008);
      const another = await subscribe(daemon, overlayId, tunnel('198.51.100.9'));
      another.close();
      // IPv6 visitors are counted per /64: another address of a full /64 is refused, another /64 is not.
      await fill('127.0.0.5', 10, tunnel('2001:db8:1:2::1').headers);
      expect(await refusedAtInit('127.0.0.5', tunnel('2001:db8:1:2:ffff::9').headers)).toBe(1008);
      (await subscribe(daemon, overlayId, tunnel('2001:db8:1:3::1'))).close();
      // Without the tunnel Host the header is not believed: the peer itself is counted.
      await fill('127.0.0.6', 10);
      expect(await refusedAtInit('127.0.0.6', { 'CF-Connecting-IP': '192.0.2.1' })).toBe(1008);
      for (const viewer of viewers) viewer.close();
    } finally {
      daemon.tunnelHost = undefined;
    }
  });
});

describe('connections that have not sent init', () => {
  it('have a budget of their own: ten idle sockets lock neither OBS nor the dashboard out', async () => {
    const idle = [];
    for (let i = 0; i < 10; i++) idle.push(await connectWs(wsUrl(), { localAddress: '127.0.0.11' }));
    open.push(...idle);
    const obs = await subscribe(daemon, overlayId, { localAddress: '127.0.0.11' });
    open.push(obs);
    const dashboard = await rawRequest(daemon.port, {
      path: '/status',
      headers: { Host: 'localhost' },
      localAddress: '127.0.0.11',
    });
    expect(dashboard.status).toBe(200);
    // The eleventh idle socket evicts the oldest one (1008), not anyone subscribed.
    open.push(await connectWs(wsUrl(), { localAddress: '127.0.0.11' }));
    expect((await idle[0]!.closed).code).toBe(1008);
    expect(obs.ws.readyState).toBe(obs.ws.OPEN);
    for (const client of [...idle, obs]) client.close();
  });
});
