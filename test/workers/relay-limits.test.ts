// The overlay relay's refusals and limits, each as the daemon or a viewer notices it, and each leaving
// the other viewers as they were.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { VIEWER_PING, VIEWER_PONG } from '../../shared/protocol/index.js';
import { OPENS_PER_IP_PER_MINUTE } from '../../workers/src/relay/admission.js';
import { shardOrder } from '../../workers/src/relay/names.js';
import { VIEWER_INIT_MS, VIEWER_PINGS_HELD } from '../../workers/src/relay/shard.js';
import { gatekeeper, uniqueIp, WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import {
  event,
  hubStub,
  member,
  newOverlayId,
  ORIGIN,
  openSocket,
  publisher,
  type Socket,
  setMember,
  snapshot,
  viewer,
  viewerSocket,
} from './helpers/relay-sockets.js';

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);

async function errorOf(res: Socket | Response): Promise<{ status: number; code: string; headers: Headers }> {
  if (!(res instanceof Response)) throw new Error('the socket was accepted');
  const body = (await res.json()) as { error: { code: string } };
  return { status: res.status, code: body.error.code, headers: res.headers };
}

/** A published overlay with one viewer watching, to check that a refusal changes nothing for it. */
async function publishedWithViewer(label: string) {
  const m = await member(label);
  const overlayId = newOverlayId();
  const daemon = await publisher(m.token, overlayId);
  daemon.socket.send(snapshot(label));
  await expect.poll(() => hubStub(m.subdomain, overlayId).published()).toBe(true);
  const watching = await viewer(m.subdomain, overlayId);
  return { ...m, overlayId, daemon: daemon.socket, watching: watching.socket };
}

describe('the publisher socket', () => {
  const publish = (overlayId: string, headers: Record<string, string>) =>
    openSocket(`/relay/publish/${overlayId}`, headers);

  it('refuses before the upgrade: no licence 401, a Free licence or a Free member 403, a signed-out licence 401', async () => {
    const overlayId = newOverlayId();
    expect(await errorOf(await publish(overlayId, {}))).toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
    const free = await member('relay-free', { tier: 'free' });
    expect(await errorOf(await publish(overlayId, { Authorization: `Bearer ${free.token}` }))).toMatchObject({
      status: 403,
      code: 'premium_required',
    });
    // A Premium licence whose member a re-check found Free.
    const lapsed = await member('relay-lapsed', { tier: 'free', licenceTier: 'premium' });
    expect(
      await errorOf(await publish(overlayId, { Authorization: `Bearer ${lapsed.token}` })),
    ).toMatchObject({
      status: 403,
      code: 'premium_required',
    });
    const revoked = await member('relay-revoked');
    await setMember(revoked.userId, { tier: 'premium', epoch: 2 });
    expect(
      await errorOf(await publish(overlayId, { Authorization: `Bearer ${revoked.token}` })),
    ).toMatchObject({
      status: 401,
      code: 'invalid_token',
    });
  });

  it('answers 404 for an overlay id that is not a lowercase UUID, and 426 without an upgrade', async () => {
    const { token } = await member('relay-ids');
    const auth = { Authorization: `Bearer ${token}` };
    for (const id of [newOverlayId().toUpperCase(), 'not-a-uuid', `${newOverlayId()}x`]) {
      expect(await errorOf(await publish(id, auth))).toMatchObject({ status: 404, code: 'not_found' });
    }
    const plain = await gatekeeper(`/relay/publish/${newOverlayId()}`, { headers: auth });
    expect(plain.status).toBe(426);
    expect(plain.headers.get('Upgrade')).toBe('websocket');
  });

  it('keeps one member from reaching another member’s relay of the same overlay id', async () => {
    const a = await publishedWithViewer('relay-member-a');
    const b = await member('relay-member-b');
    const other = await publisher(b.token, a.overlayId);
    expect(other.hello.lastSeq).toBeNull();
    expect(other.hello.viewerUrl).toContain(`/v/${b.subdomain}/`);
    other.socket.send(snapshot('Intruder'));
    a.daemon.send(event(1));
    expect(await a.watching.next()).toMatchObject({ type: 'stream-event', seq: 1 });
    other.socket.close();
    a.daemon.close();
  });

  it('closes a replaced publisher with 4409; the new one publishes to the same viewers', async () => {
    const s = await publishedWithViewer('relay-replace');
    const second = await publisher(s.token, s.overlayId, '198.51.100.77');
    // The replaced daemon learns where the other one connects from.
    expect(await s.daemon.closed).toMatchObject({
      code: 4409,
      reason: 'another daemon publishes this overlay (from 198.51.100.77)',
    });
    second.socket.send(event(5));
    expect(await s.watching.next()).toMatchObject({ type: 'stream-event', seq: 5 });
    second.socket.close();
  });

  it('closes with 1008 a frame over 256 KiB, a frame that is not in the protocol, and a flood over 200 frames/s', async () => {
    const s = await publishedWithViewer('relay-frames');
    const big = event(1);
    (big.msg.event.data as Record<string, unknown>).padding = 'x'.repeat(256 * 1024);
    s.daemon.send(big);
    expect(await s.daemon.closed).toMatchObject({ code: 1008 });

    const bad = await publisher(s.token, s.overlayId);
    bad.socket.send({ type: 'message', msg: { type: 'chat', text: 'not a page message' } });
    expect(await bad.socket.closed).toMatchObject({ code: 1008 });

    // The clock stands still during the flood: nothing refills the bucket of 200.
    vi.useFakeTimers({ toFake: ['Date'] });
    const got: number[] = [];
    try {
      vi.setSystemTime(Date.now() + 1000);
      const flood = await publisher(s.token, s.overlayId);
      for (let seq = 1; seq <= 300; seq++) flood.socket.send(event(seq));
      expect(await flood.socket.closed).toMatchObject({ code: 1008 });
      // A second later the bucket has refilled: the daemon comes back and publishes a marker.
      vi.setSystemTime(Date.now() + 1000);
      const back = await publisher(s.token, s.overlayId);
      expect(back.viewers.count).toBe(1);
      back.socket.send(event(5000));
      // The viewer is still there and got what came under the limit, in order, nothing past it.
      for (;;) {
        const f = await s.watching.next<{ seq: number }>();
        if (f.seq === 5000) break;
        got.push(f.seq);
      }
      back.socket.close();
    } finally {
      vi.useRealTimers();
    }
    expect(got.length).toBe(200);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => i + 1));
  });

  it('takes 200 frames at once (the bucket holds 200)', async () => {
    const s = await publishedWithViewer('relay-burst');
    for (let seq = 1; seq <= 200; seq++) s.daemon.send(event(seq));
    const got = await s.watching.take<{ seq: number }>(200);
    expect(got.at(-1)?.seq).toBe(200);
    s.daemon.send(event(201));
    expect(await s.watching.next()).toMatchObject({ seq: 201 });
    s.daemon.close();
  });

  it('closes the publisher with 4401 when its licence expires, without tolerance; viewers stay', async () => {
    const s = await publishedWithViewer('relay-exp');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(s.expiresAt.getTime() - 1000);
      await runDurableObjectAlarm(hubStub(s.subdomain, s.overlayId));
      await hubStub(s.subdomain, s.overlayId).published(); // a turn of the hub: a close would have been sent
      expect(s.daemon.unread().filter((f) => !f.includes('"viewers"'))).toEqual([]);
      vi.setSystemTime(s.expiresAt.getTime());
      await runDurableObjectAlarm(hubStub(s.subdomain, s.overlayId));
      expect(await s.daemon.closed).toMatchObject({ code: 4401 });
    } finally {
      vi.useRealTimers();
    }
    expect(await hubStub(s.subdomain, s.overlayId).published()).toBe(true);
    const back = await publisher(s.token, s.overlayId);
    back.socket.send(event(3));
    expect(await s.watching.next()).toMatchObject({ seq: 3 });
    back.socket.close();
  });

  it('sends the viewer count right after hello and when it changed, at most every 5 s', async () => {
    const s = await publishedWithViewer('relay-count');
    const hub = hubStub(s.subdomain, s.overlayId);
    // The viewer joined within 5 s of the count in hello's wake: it comes when 5 s have passed.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect(s.daemon.unread()).toEqual([]);
      vi.setSystemTime(Date.now() + 5000);
      await runDurableObjectAlarm(hub);
      expect(await s.daemon.next()).toEqual({ type: 'viewers', count: 1 });
      // Past 5 s since the last one, a change goes out at once.
      vi.setSystemTime(Date.now() + 5000);
      const second = await viewer(s.subdomain, s.overlayId);
      expect(await s.daemon.next()).toEqual({ type: 'viewers', count: 2 });
      second.socket.close();
      await second.socket.closed;
      vi.setSystemTime(Date.now() + 5000);
      await runDurableObjectAlarm(hub);
      expect(await s.daemon.next()).toEqual({ type: 'viewers', count: 1 });
    } finally {
      vi.useRealTimers();
    }
    s.daemon.close();
  });
});

describe('the viewer socket', () => {
  it('refuses a missing or foreign Origin (403), a bad id (404), a plain request (426)', async () => {
    const s = await publishedWithViewer('relay-viewer-refusals');
    const path = `/v/${s.subdomain}/${s.overlayId}/ws`;
    expect(await errorOf(await openSocket(path, {}))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(await errorOf(await openSocket(path, { Origin: 'https://evil.example' }))).toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    for (const id of [s.overlayId.toUpperCase(), 'nope']) {
      expect(await errorOf(await openSocket(`/v/${s.subdomain}/${id}/ws`, { Origin: ORIGIN }))).toMatchObject(
        {
          status: 404,
          code: 'not_found',
        },
      );
    }
    const plain = await gatekeeper(path, { headers: { Origin: ORIGIN } });
    expect(plain.status).toBe(426);
    s.daemon.send(event(1));
    expect(await s.watching.next()).toMatchObject({ seq: 1 });
    s.daemon.close();
  });

  it('closes with 1008 a frame before init, a second init, any other frame and one over 1 KiB', async () => {
    const s = await publishedWithViewer('relay-viewer-frames');
    const open = async () => {
      const socket = await viewerSocket(s.subdomain, s.overlayId);
      if (socket instanceof Response) throw new Error(`refused: ${socket.status}`);
      return socket;
    };
    const before = await open();
    before.send({ action: 'ping', extra: 1 });
    expect(await before.closed).toMatchObject({ code: 1008 });

    const twice = await viewer(s.subdomain, s.overlayId);
    twice.socket.send({ action: 'init', overlayId: s.overlayId });
    expect(await twice.socket.closed).toMatchObject({ code: 1008 });

    const other = await viewer(s.subdomain, s.overlayId);
    other.socket.send({ action: 'kick', user: 'x' });
    expect(await other.socket.closed).toMatchObject({ code: 1008 });

    const big = await open();
    big.send({ action: 'init', overlayId: s.overlayId, pad: 'x'.repeat(1100) });
    expect(await big.closed).toMatchObject({ code: 1008 });

    const wrong = await open();
    wrong.send({ action: 'init', overlayId: newOverlayId() });
    expect(await wrong.closed).toMatchObject({ code: 1008 });

    // The viewer already there noticed nothing; its count is back to one.
    s.daemon.send(event(9));
    expect(await s.watching.next()).toMatchObject({ seq: 9 });
    expect(s.watching.unread()).toEqual([]);
    await expect.poll(async () => (await publisher(s.token, s.overlayId)).viewers.count).toBe(1);
  });

  it('closes with 1008 a socket that sends no init within 10 s; a joined viewer stays', async () => {
    const s = await publishedWithViewer('relay-viewer-init-deadline');
    const silent = await viewerSocket(s.subdomain, s.overlayId);
    if (silent instanceof Response) throw new Error(`refused: ${silent.status}`);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 10_000);
      for (let i = 0; i < Number(env.RELAY_SHARDS); i++) {
        const shard = env.RELAY_SHARD.get(env.RELAY_SHARD.idFromName(`${s.subdomain}/${s.overlayId}#${i}`));
        await runDurableObjectAlarm(shard);
      }
      expect(await silent.closed).toMatchObject({ code: 1008, reason: 'init first' });
    } finally {
      vi.useRealTimers();
    }
    s.daemon.send(event(1));
    expect(await s.watching.next()).toMatchObject({ seq: 1 });
    s.daemon.close();
  });

  it('answers the exact ping with the exact pong', async () => {
    const s = await publishedWithViewer('relay-ping');
    s.watching.send(VIEWER_PING);
    await expect.poll(() => s.watching.frames.at(-1)).toBe(VIEWER_PONG);
    s.daemon.close();
  });

  it('refuses a sixth socket from one address (429) and takes it again once one closed', async () => {
    const s = await publishedWithViewer('relay-per-ip');
    const ip = uniqueIp();
    const five = [];
    for (let i = 0; i < 5; i++) five.push(await viewer(s.subdomain, s.overlayId, { ip }));
    expect(await errorOf(await viewerSocket(s.subdomain, s.overlayId, ip))).toMatchObject({
      status: 429,
      code: 'rate_limited',
    });
    // Another address is not affected.
    const elsewhere = await viewer(s.subdomain, s.overlayId);
    five[0]?.socket.close();
    await five[0]?.socket.closed;
    await expect
      .poll(async () => {
        const again = await viewerSocket(s.subdomain, s.overlayId, ip);
        if (again instanceof Response) return again.status;
        again.close();
        return 101;
      })
      .toBe(101);
    for (const v of [...five, elsewhere]) v.socket.close();
    s.daemon.close();
  });

  it('answers 503 with Retry-After when every shard is full (RELAY_SHARDS × RELAY_SHARD_SIZE)', async () => {
    const s = await publishedWithViewer('relay-full');
    const capacity = 3 * 4; // the test bindings
    const more = [];
    for (let i = 1; i < capacity; i++) more.push(await viewer(s.subdomain, s.overlayId));
    const full = await errorOf(await viewerSocket(s.subdomain, s.overlayId));
    expect(full).toMatchObject({ status: 503, code: 'unavailable' });
    expect(Number(full.headers.get('Retry-After'))).toBeGreaterThan(0);
    // Everyone inside still gets every message.
    s.daemon.send(event(1));
    for (const v of [s.watching, ...more.map((m) => m.socket)])
      expect(await v.next()).toMatchObject({ seq: 1 });
    for (const v of more) v.socket.close();
    s.daemon.close();
  });
});

describe('what one address may ask of a hub', () => {
  it(`refuses a socket past ${OPENS_PER_IP_PER_MINUTE} an address opened on one overlay within a minute (429, Retry-After), and takes one again a minute later`, async () => {
    const s = await publishedWithViewer('relay-opens');
    const ip = uniqueIp();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // Each one joins from 0, the most a join may cost.
      for (let i = 0; i < OPENS_PER_IP_PER_MINUTE; i++) {
        const v = await viewer(s.subdomain, s.overlayId, { ip, resumeFrom: 0 });
        v.socket.close();
        await v.socket.closed;
      }
      const refused = await errorOf(await viewerSocket(s.subdomain, s.overlayId, ip));
      expect(refused).toMatchObject({ status: 429, code: 'rate_limited' });
      const retryAfter = Number(refused.headers.get('Retry-After'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const elsewhere = await viewer(s.subdomain, s.overlayId);
      elsewhere.socket.close();
      vi.setSystemTime(Date.now() + 60_000);
      const again = await viewer(s.subdomain, s.overlayId, { ip });
      again.socket.close();
    } finally {
      vi.useRealTimers();
    }
    s.daemon.send(event(1));
    expect(await s.watching.next()).toMatchObject({ seq: 1 });
    s.daemon.close();
  });
});

describe('viewer counts when leave reports are lost', () => {
  /** Closes every viewer socket on the overlay's shards so that no leave report reaches the hub. */
  async function loseViewers(subdomain: string, overlayId: string): Promise<void> {
    for (let i = 0; i < Number(env.RELAY_SHARDS); i++) {
      const shard = env.RELAY_SHARD.get(env.RELAY_SHARD.idFromName(`${subdomain}/${overlayId}#${i}`));
      await runInDurableObject(shard, (_instance, state) => {
        // A shard that does not know its hub cannot tell it anything: every report is lost.
        state.storage.kv.delete('membership');
        for (const ws of state.getWebSockets()) ws.close(1001, 'gone');
      });
    }
  }

  it('lets an address whose sockets went without a report open its 5 again at once', async () => {
    const s = await publishedWithViewer('relay-lost-ip');
    const ip = uniqueIp();
    const five = [];
    for (let i = 0; i < 5; i++) five.push(await viewer(s.subdomain, s.overlayId, { ip }));
    await loseViewers(s.subdomain, s.overlayId);
    for (const v of five) await v.socket.closed;
    const again = [];
    for (let i = 0; i < 5; i++) again.push(await viewer(s.subdomain, s.overlayId, { ip }));
    expect(await errorOf(await viewerSocket(s.subdomain, s.overlayId, ip))).toMatchObject({ status: 429 });
    s.daemon.send(event(1));
    for (const v of again) expect(await v.socket.next()).toMatchObject({ seq: 1 });
    s.daemon.close();
  });

  it('gives the places of a full relay’s lost viewers back within a minute, and the publisher the true count', async () => {
    const s = await publishedWithViewer('relay-lost-full');
    const hub = hubStub(s.subdomain, s.overlayId);
    const more = [];
    for (let i = 1; i < 12; i++) more.push(await viewer(s.subdomain, s.overlayId));
    expect(await errorOf(await viewerSocket(s.subdomain, s.overlayId))).toMatchObject({ status: 503 });
    await loseViewers(s.subdomain, s.overlayId);
    for (const v of [s.watching, ...more.map((m) => m.socket)]) await v.closed;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      await runDurableObjectAlarm(hub);
      await runDurableObjectAlarm(hub);
      await expect.poll(() => s.daemon.frames.at(-1)).toBe(JSON.stringify({ type: 'viewers', count: 0 }));
      const back = [];
      for (let i = 0; i < 12; i++) back.push(await viewer(s.subdomain, s.overlayId));
      expect(await errorOf(await viewerSocket(s.subdomain, s.overlayId))).toMatchObject({ status: 503 });
      s.daemon.send(event(1));
      for (const v of back) expect(await v.socket.next()).toMatchObject({ seq: 1 });
    } finally {
      vi.useRealTimers();
    }
    s.daemon.close();
  });
});

describe('pings and the init deadline', () => {
  it('closes with 1008 a viewer pinging faster than once a second in another spelling; one a second or every 30 s is answered', async () => {
    const s = await publishedWithViewer('relay-ping-flood');
    const flooder = await viewer(s.subdomain, s.overlayId);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      for (let i = 0; i < 10; i++) flooder.socket.send('{"action":"ping" }');
      expect(await flooder.socket.closed).toMatchObject({ code: 1008 });
      const pongs = flooder.socket.frames.filter((f) => f === VIEWER_PONG).length;
      expect(pongs).toBeLessThanOrEqual(VIEWER_PINGS_HELD);
      for (const every of [30_000, 30_000, 1000, 1000, 1000, 1000, 1000, 1000]) {
        vi.setSystemTime(Date.now() + every);
        s.watching.send('{ "action": "ping" }');
        expect(await s.watching.next()).toEqual({ type: 'pong' });
      }
    } finally {
      vi.useRealTimers();
    }
    s.daemon.send(event(1));
    expect(await s.watching.next()).toMatchObject({ seq: 1 });
    s.daemon.close();
  });

  it('closes a socket that sent no init 10 s after it opened, whatever opened after it; the alarm runs twice', async () => {
    // Published with no viewer yet: the shard's alarm is only these sockets' deadlines.
    const m = await member('relay-init-due');
    const overlayId = newOverlayId();
    const daemon = (await publisher(m.token, overlayId)).socket;
    daemon.send(snapshot('relay-init-due'));
    await expect.poll(() => hubStub(m.subdomain, overlayId).published()).toBe(true);
    const s = { ...m, overlayId, daemon };
    const ip = uniqueIp();
    const index = shardOrder(ip, Number(env.RELAY_SHARDS))[0];
    const shard = env.RELAY_SHARD.get(env.RELAY_SHARD.idFromName(`${s.subdomain}/${s.overlayId}#${index}`));
    const alarmAt = () => runInDurableObject(shard, (_instance, state) => state.storage.getAlarm());
    const open = async () => {
      const socket = await viewerSocket(s.subdomain, s.overlayId, ip);
      if (socket instanceof Response) throw new Error(`refused: ${socket.status}`);
      return socket;
    };
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const opened = Date.now();
      const silent = await open();
      expect(await alarmAt()).toBe(opened + VIEWER_INIT_MS);
      // Its deadline has passed and the alarm has not run yet when another socket opens.
      vi.setSystemTime(opened + VIEWER_INIT_MS + 500);
      const later = await open();
      expect(await alarmAt()).toBe(opened + VIEWER_INIT_MS);
      await runDurableObjectAlarm(shard);
      await runDurableObjectAlarm(shard);
      expect(await silent.closed).toMatchObject({ code: 1008, reason: 'init first' });
      expect(await alarmAt()).toBe(opened + 2 * VIEWER_INIT_MS + 500);
      later.send({ action: 'init', overlayId: s.overlayId });
      expect(await later.next()).toEqual(snapshot('relay-init-due').init);
      vi.setSystemTime(opened + 2 * VIEWER_INIT_MS + 500);
      await runDurableObjectAlarm(shard);
      expect(await alarmAt()).toBeNull();
      s.daemon.send(event(1));
      expect(await later.next()).toMatchObject({ seq: 1 });
    } finally {
      vi.useRealTimers();
    }
    s.daemon.close();
  });
});

describe('viewers of an overlay never published', () => {
  it('get 404 not_found', async () => {
    const { subdomain } = await member('relay-never');
    expect(await errorOf(await viewerSocket(subdomain, newOverlayId()))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  /** What the hub's storage holds: its tables and its size (a hub nobody asked anything is the measure). */
  const storageOf = (overlay: { subdomain: string; overlayId: string }) =>
    runInDurableObject(hubStub(overlay.subdomain, overlay.overlayId), (_instance, state) => ({
      tables: state.storage.sql.exec('SELECT name FROM sqlite_master').toArray(),
      bytes: state.storage.sql.databaseSize,
    }));

  it('answer 404 to the page, the socket and a media file without writing anything', async () => {
    const { subdomain } = await member('relay-never-storage');
    const asked = Array.from({ length: 10 }, () => ({ subdomain, overlayId: newOverlayId() }));
    const media = `${'ab'.repeat(32)}.png`;
    for (const { overlayId } of asked) {
      const base = `/v/${subdomain}/${overlayId}`;
      for (const res of [
        await gatekeeper(base),
        await gatekeeper(`${base}/ws`, { headers: { Upgrade: 'websocket', Origin: ORIGIN } }),
        await gatekeeper(`${base}/assets/${media}`),
      ]) {
        expect(await errorOf(res)).toMatchObject({ status: 404, code: 'not_found' });
      }
    }
    const untouched = await storageOf({ subdomain, overlayId: newOverlayId() });
    expect(untouched.tables).toEqual([]);
    for (const overlay of asked) expect(await storageOf(overlay)).toEqual(untouched);
  });

  it('limits /v/* to 300 requests a minute per address (429 with Retry-After), others unaffected', async () => {
    const { subdomain } = await member('relay-never-flood');
    const ip = uniqueIp();
    // Addresses that name no overlay (answered without asking a hub, so the loop is quick) count too.
    const path = `/v/${subdomain}/not-an-overlay`;
    let refused: Response | undefined;
    let sent = 0;
    // In rounds of 20 at once; the bound allows for the limiter's window turning over once.
    while (!refused && sent < 620) {
      const round = await Promise.all(Array.from({ length: 20 }, () => gatekeeper(path, { ip })));
      for (const res of round) {
        if (res.status !== 429) expect((await errorOf(res)).status).toBe(404);
        else if (refused) await res.body?.cancel();
        else refused = res;
      }
      sent += round.length;
    }
    expect(sent).toBeGreaterThan(300);
    expect(refused?.headers.get('Retry-After')).toBe('60');
    expect(await errorOf(refused as Response)).toMatchObject({ code: 'rate_limited' });
    const page = await gatekeeper(`/v/${subdomain}/${newOverlayId()}`, { ip });
    expect(page.status).toBe(429);
    await page.body?.cancel();
    expect((await errorOf(await gatekeeper(path))).status).toBe(404);
  }, 90_000);
});
