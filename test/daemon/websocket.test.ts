// The WebSocket life cycle of interface §3 and decisions §3 against the real daemon and real `ws` clients.

import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWith, type ServerMessage } from '../../shared/protocol/index.js';
import { api, pageToken, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';
import { connectWs, UpgradeRefused } from '../support/ws.js';

let daemon: TestDaemon;
let overlayId: string;
let clock = 0;

beforeAll(async () => {
  clock = Date.now();
  daemon = await startTestDaemon({ initTimeoutMs: 300, now: () => clock });
  overlayId = daemon.overlays.list()[0]!.id;
});
afterAll(() => daemon?.stop());

const wsUrl = () => `ws://127.0.0.1:${daemon.port}`;

async function createOverlay(name: string): Promise<string> {
  const res = await api(daemon, 'POST', '/api/overlays', { name, width: 800, height: 600 });
  expect(res.status).toBe(201);
  const parsed = parseWith(v.object({ id: v.string() }), await res.json());
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value.id;
}

/** GET /api/clients, as a dashboard would read it. */
async function subscribedClients(id: string): Promise<number> {
  const body: unknown = await (await api(daemon, 'GET', '/api/clients')).json();
  const parsed = parseWith(v.object({ clients: v.record(v.string(), v.number()) }), body);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value.clients[id] ?? 0;
}

describe('init', () => {
  it('answers a valid init with the overlay and its widgets', async () => {
    const token = await pageToken(daemon, overlayId);
    const client = await connectWs(wsUrl());
    client.sendInit(overlayId, token);
    const init = await client.next();
    const overlay = daemon.overlays.get(overlayId)!;
    expect(init).toEqual({
      type: 'init',
      overlay: { name: overlay.name, width: overlay.width, height: overlay.height },
      widgets: overlay.widgets,
    });
    client.close();
  });

  it('closes with 1008 when no init arrives within the init window', async () => {
    const client = await connectWs(wsUrl());
    const started = Date.now();
    expect((await client.closed).code).toBe(1008);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it.each([
    ['bad JSON', '{"action":"init",'],
    [
      'a message that is not init',
      JSON.stringify({ action: 'subscribe', overlayId: '00000000-0000-4000-8000-000000000000' }),
    ],
    [
      'init without token',
      JSON.stringify({ action: 'init', overlayId: '00000000-0000-4000-8000-000000000000' }),
    ],
  ])('closes with 1008 on %s', async (_what, text) => {
    const client = await connectWs(wsUrl());
    client.ws.send(text);
    expect((await client.closed).code).toBe(1008);
  });

  it('closes with 1008 on a token that was never issued', async () => {
    const client = await connectWs(wsUrl());
    client.sendInit(overlayId, 'A'.repeat(32));
    expect((await client.closed).code).toBe(1008);
  });

  it('accepts a token once: the second use is refused with 1008', async () => {
    const token = await pageToken(daemon, overlayId);
    const first = await connectWs(wsUrl());
    first.sendInit(overlayId, token);
    expect((await first.next()).type).toBe('init');
    const second = await connectWs(wsUrl());
    second.sendInit(overlayId, token);
    expect((await second.closed).code).toBe(1008);
    first.close();
  });

  it('refuses a token issued for another overlay (and burns it)', async () => {
    const otherId = await createOverlay('Other');
    const token = await pageToken(daemon, otherId);
    const wrong = await connectWs(wsUrl());
    wrong.sendInit(overlayId, token);
    expect((await wrong.closed).code).toBe(1008);
    const right = await connectWs(wsUrl());
    right.sendInit(otherId, token);
    expect((await right.closed).code).toBe(1008);
  });

  it('refuses a token left unused for 5 minutes', async () => {
    const fresh = await pageToken(daemon, overlayId);
    const stale = await pageToken(daemon, overlayId);
    clock += 4 * 60_000;
    const ok = await connectWs(wsUrl());
    ok.sendInit(overlayId, fresh);
    expect((await ok.next()).type).toBe('init');
    clock += 60_000 + 1;
    const late = await connectWs(wsUrl());
    late.sendInit(overlayId, stale);
    expect((await late.closed).code).toBe(1008);
    ok.close();
  });

  it('closes with 1008 on a second init', async () => {
    const client = await subscribe(daemon, overlayId);
    client.sendInit(overlayId, await pageToken(daemon, overlayId));
    expect((await client.closed).code).toBe(1008);
  });

  it('closes with 1009 on a message over 512 KiB, before or after init', async () => {
    const before = await connectWs(wsUrl());
    before.ws.send('x'.repeat(512 * 1024 + 1));
    expect((await before.closed).code).toBe(1009);
    const after = await subscribe(daemon, overlayId);
    after.ws.send(JSON.stringify({ action: 'init', pad: 'x'.repeat(600 * 1024) }));
    expect((await after.closed).code).toBe(1009);
  });

  it('accepts a message of exactly 512 KiB as far as size goes (then judges its content)', async () => {
    const client = await connectWs(wsUrl());
    client.ws.send('x'.repeat(512 * 1024));
    expect((await client.closed).code).toBe(1008);
  });
});

describe('upgrade checks', () => {
  it('refuses a foreign Origin with 403 and nosniff', async () => {
    const err = await connectWs(wsUrl(), { origin: 'https://evil.example' }).catch((e: unknown) => e);
    if (!(err instanceof UpgradeRefused)) throw new Error(`expected a refusal, got ${String(err)}`);
    expect(err.status).toBe(403);
    expect(err.headers['x-content-type-options']).toBe('nosniff');
  });

  it('accepts a localhost Origin', async () => {
    const client = await connectWs(wsUrl(), { origin: 'http://localhost:5173' });
    client.close();
  });

  it('refuses a foreign Host with 403 (DNS rebinding)', async () => {
    const err = await connectWs(wsUrl(), { headers: { Host: 'attacker.example' } }).catch((e: unknown) => e);
    if (!(err instanceof UpgradeRefused)) throw new Error(`expected a refusal, got ${String(err)}`);
    expect(err.status).toBe(403);
  });
});

describe('broadcasts', () => {
  it('sends overlay-update with the full state to every client of that overlay when the API changes it', async () => {
    const otherId = await createOverlay('Bystander');
    const [a, b, bystander] = await Promise.all([
      subscribe(daemon, overlayId),
      subscribe(daemon, overlayId),
      subscribe(daemon, otherId),
    ]);
    const widgets = [{ id: 'title', type: 'text', x: 1, y: 2, content: 'Updated' }];
    const res = await api(daemon, 'PUT', `/api/overlays/${overlayId}`, {
      name: 'Renamed',
      width: 1280,
      height: 720,
      widgets,
    });
    expect(res.status).toBe(200);
    for (const client of [a, b]) {
      const update = await client.next((m) => m.type === 'overlay-update');
      expect(update).toEqual({
        type: 'overlay-update',
        overlayId,
        overlay: { name: 'Renamed', width: 1280, height: 720 },
        widgets,
      });
    }
    await api(daemon, 'POST', '/api/events', {
      type: 'follow',
      user: { uniqueId: 'u', nickname: 'U' },
      data: {},
    });
    await bystander.next((m) => m.type === 'stream-event');
    expect(bystander.received.some((m) => m.type === 'overlay-update')).toBe(false);
    for (const c of [a, b, bystander]) c.close();
  });

  it('sends stream-event to subscribed clients of every overlay, not to clients before init', async () => {
    const otherId = await createOverlay('Second');
    const [a, b] = await Promise.all([subscribe(daemon, overlayId), subscribe(daemon, otherId)]);
    const pending = await connectWs(wsUrl());
    const event = {
      type: 'gift',
      user: { uniqueId: 'fan1', nickname: 'Fan' },
      data: { giftName: 'Rose', repeatCount: 3, extra: 'kept' },
    };
    expect((await api(daemon, 'POST', '/api/events', event)).status).toBe(202);
    for (const client of [a, b]) {
      expect(await client.next((m) => m.type === 'stream-event')).toEqual({
        type: 'stream-event',
        seq: expect.any(Number),
        at: expect.any(Number),
        event: { ...event, platform: 'api' },
      });
    }
    expect(pending.received).toEqual([]);
    for (const c of [a, b, pending]) c.close();
  });

  it('sends overlay-command only to the clients of the targeted overlay', async () => {
    const otherId = await createOverlay('Untargeted');
    const [target, other] = await Promise.all([subscribe(daemon, overlayId), subscribe(daemon, otherId)]);
    const command = { command: 'show-alert', widgetId: 'alerts', payload: { text: 'Hi', duration: 1500 } };
    const res = await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, command);
    expect(res.status).toBe(202);
    expect(await target.next((m) => m.type === 'overlay-command')).toEqual({
      type: 'overlay-command',
      seq: expect.any(Number),
      at: expect.any(Number),
      ...command,
    });
    // The untargeted client gets the next broadcast but never the command.
    await api(daemon, 'POST', '/api/events', {
      type: 'share',
      user: { uniqueId: 'u', nickname: 'U' },
      data: {},
    });
    await other.next((m) => m.type === 'stream-event');
    expect(other.received.some((m: ServerMessage) => m.type === 'overlay-command')).toBe(false);
    target.close();
    other.close();
  });

  it('closes the clients of an overlay that is deleted', async () => {
    const id = await createOverlay('Doomed');
    const client = await subscribe(daemon, id);
    expect((await api(daemon, 'DELETE', `/api/overlays/${id}`)).status).toBe(204);
    expect((await client.closed).code).toBe(1000);
  });
});

describe('slow and dead clients', () => {
  it('drops a client that stops reading instead of buffering for it without bound', async () => {
    const slow = await subscribe(daemon, overlayId);
    const healthy = await subscribe(daemon, overlayId);
    // Stop reading: the kernel buffers fill, then the daemon's queue for this client grows.
    slow.socket.pause();
    const payload = { blob: 'x'.repeat(900 * 1024) };
    let sent = 0;
    await waitFor(
      async () => {
        sent++;
        if (sent > 80) throw new Error('slow client was never dropped');
        await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, {
          command: 'noop',
          widgetId: 'w',
          payload,
        });
        // The healthy client keeps reading, so it stays; the count falls to 1 once the slow one is dropped.
        return (await subscribedClients(overlayId)) === 1 && healthy.ws.readyState === healthy.ws.OPEN;
      },
      20_000,
      'the slow client to be dropped',
    );
    expect(sent).toBeGreaterThan(2);
    expect(daemon.logs.some((line) => line.includes('not reading'))).toBe(true);
    healthy.close();
    slow.ws.terminate();
  }, 30_000);
});

describe('heartbeat and shutdown', () => {
  it('terminates a client that does not answer pings', async () => {
    const quick = await startTestDaemon({ pingIntervalMs: 100 });
    try {
      const id = quick.overlays.list()[0]!.id;
      const silent = await subscribe(quick, id, { clientOptions: { autoPong: false } });
      const polite = await subscribe(quick, id);
      const closed = await silent.closed;
      expect(closed.code).toBe(1006);
      expect(polite.ws.readyState).toBe(polite.ws.OPEN);
      polite.close();
    } finally {
      await quick.stop();
    }
  });

  it('closes every client with 1001 on shutdown, subscribed or not', async () => {
    const doomed = await startTestDaemon();
    const id = doomed.overlays.list()[0]!.id;
    const subscribed = await subscribe(doomed, id);
    const pending = await connectWs(`ws://127.0.0.1:${doomed.port}`);
    await doomed.stop();
    expect((await subscribed.closed).code).toBe(1001);
    expect((await pending.closed).code).toBe(1001);
  });
});
