// The overlay relay in workerd: a daemon publishing one overlay, viewers on shards getting every message
// once and in order, resume and gap, replacement, unpublish, and what a fresh object finds after eviction.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { RelayEntry } from '../../workers/src/relay/batches.js';
import { OverlayRelay } from '../../workers/src/relay/hub.js';
import { shardOrder } from '../../workers/src/relay/names.js';
import { REPLAY_CAP_BYTES } from '../../workers/src/relay/resume-buffer.js';
import { RelayShard } from '../../workers/src/relay/shard.js';
import { uniqueIp, WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import {
  event,
  hubStub,
  member,
  newOverlayId,
  publisher,
  snapshot,
  viewer,
  viewerSocket,
} from './helpers/relay-sockets.js';

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);

type Frame = { type: string; seq?: number; replayed?: true; [key: string]: unknown };

describe('publishing an overlay', () => {
  it('greets a first publisher with lastSeq null, its viewer URL and the viewer count', async () => {
    const { token, subdomain } = await member('relay-hello');
    const overlayId = newOverlayId();
    const { socket, hello, viewers } = await publisher(token, overlayId);
    expect(hello).toEqual({
      type: 'hello',
      lastSeq: null,
      viewerUrl: `${env.PUBLIC_BASE_URL}/v/${subdomain}/${overlayId}`,
    });
    expect(viewers).toEqual({ type: 'viewers', count: 0 });
    socket.close();
  });

  it('gives viewers the snapshot as init, then every message once and in order', async () => {
    const { token, subdomain } = await member('relay-fanout');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Alerts'));
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(true);
    const viewers = await Promise.all([1, 2, 3].map(() => viewer(subdomain, overlayId)));
    for (const v of viewers) expect(v.init).toEqual(snapshot('Alerts').init);
    for (let seq = 1; seq <= 120; seq++) daemon.send(event(seq));
    for (const { socket } of viewers) {
      const got = await socket.take<Frame>(120);
      expect(got.map((f) => f.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      expect(got.every((f) => f.type === 'stream-event' && f.replayed === undefined)).toBe(true);
    }
    // A new snapshot reaches viewers already watching as an init.
    daemon.send(snapshot('Alerts v2'));
    for (const { socket } of viewers) expect(await socket.next()).toEqual(snapshot('Alerts v2').init);
    daemon.close();
  });

  it('does not unpublish when the publisher merely disconnects: viewers stay and new ones get the last snapshot', async () => {
    const { token, subdomain } = await member('relay-disconnect');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Kept'));
    daemon.send(event(7));
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(true);
    const watching = await viewer(subdomain, overlayId);
    daemon.close();
    await daemon.closed;
    const late = await viewer(subdomain, overlayId);
    expect(late.init).toEqual(snapshot('Kept').init);
    // The daemon comes back: the hub tells it the last seq it has, and the viewer gets what follows.
    const again = await publisher(token, overlayId);
    expect(again.hello.lastSeq).toBe(7);
    again.socket.send(event(8));
    expect(await watching.socket.next()).toMatchObject({ type: 'stream-event', seq: 8 });
    expect(await late.socket.next()).toMatchObject({ type: 'stream-event', seq: 8 });
    again.socket.close();
  });
});

describe('resume', () => {
  it('replays what a viewer missed after resumeFrom, marked replayed, then resumed without a gap', async () => {
    const { token, subdomain } = await member('relay-resume');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Resume'));
    for (let seq = 10; seq <= 15; seq++) daemon.send(event(seq));
    await expect
      .poll(() =>
        hubStub(subdomain, overlayId)
          .join(12)
          .then((a) => a?.frames.length),
      )
      .toBe(5);
    const { socket } = await viewer(subdomain, overlayId, { resumeFrom: 12 });
    const replayed = await socket.take<Frame>(3);
    expect(replayed.map((f) => [f.seq, f.replayed])).toEqual([
      [13, true],
      [14, true],
      [15, true],
    ]);
    expect(await socket.next()).toEqual({ type: 'resumed', from: 12, to: 15, replayed: 3, gap: false });
    daemon.send(event(16));
    expect(await socket.next()).toMatchObject({ type: 'stream-event', seq: 16 });
    expect(socket.unread()).toEqual([]);
    daemon.close();
  });

  it('says gap when resumeFrom is older than what is kept or above the current seq', async () => {
    const { token, subdomain } = await member('relay-gap');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Gap'));
    for (let seq = 100; seq <= 102; seq++) daemon.send(event(seq));
    await expect
      .poll(() =>
        hubStub(subdomain, overlayId)
          .join(0)
          .then((a) => a?.frames.length),
      )
      .toBe(5);
    // From before the first message the relay got (it started from the snapshot): a gap.
    const older = await viewer(subdomain, overlayId, { resumeFrom: 50 });
    await older.socket.take(3);
    expect(await older.socket.next()).toEqual({ type: 'resumed', from: 50, to: 102, replayed: 3, gap: true });
    // From numbers above every one relayed (another history): a gap, nothing replayed.
    const ahead = await viewer(subdomain, overlayId, { resumeFrom: 500 });
    expect(await ahead.socket.next()).toEqual({
      type: 'resumed',
      from: 500,
      to: 500,
      replayed: 0,
      gap: true,
    });
    daemon.close();
  });

  it('keeps the last 500 messages: a resume from before them has a gap, one within them none', async () => {
    const { token, subdomain } = await member('relay-keep');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Keep'));
    // 750 messages, 150 a second (under the publisher limit), each second ten minutes after the
    // previous one, so only the minimum of 500 holds the older ones.
    const hub = hubStub(subdomain, overlayId);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      for (let seq = 1; seq <= 750; seq++) {
        daemon.send(event(seq));
        if (seq % 150 === 0) {
          await expect.poll(() => hub.join(seq - 1).then((a) => a?.frames.length)).toBe(3);
          vi.setSystemTime(Date.now() + 10 * 60_000);
        }
      }
    } finally {
      vi.useRealTimers();
    }
    const within = await viewer(subdomain, overlayId, { resumeFrom: 250 });
    const replayed = await within.socket.take<Frame>(500);
    expect(replayed[0]?.seq).toBe(251);
    expect(await within.socket.next()).toEqual({
      type: 'resumed',
      from: 250,
      to: 750,
      replayed: 500,
      gap: false,
    });
    const before = await viewer(subdomain, overlayId, { resumeFrom: 249 });
    await before.socket.take(500);
    expect(await before.socket.next()).toMatchObject({
      type: 'resumed',
      from: 249,
      replayed: 500,
      gap: true,
    });
    daemon.close();
  }, 30_000);

  it('replays at most 2 MiB, the newest messages, and then says gap', async () => {
    const { token, subdomain } = await member('relay-replay-cap');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Big'));
    for (let seq = 1; seq <= 40; seq++) {
      const big = event(seq);
      (big.msg.event.data as Record<string, unknown>).padding = 'x'.repeat(100 * 1024);
      daemon.send(big);
    }
    const hub = hubStub(subdomain, overlayId);
    await expect.poll(() => hub.join(39).then((a) => a?.frames.length)).toBe(3);
    const { socket } = await viewer(subdomain, overlayId, { resumeFrom: 0 });
    const replayed: number[] = [];
    let chars = 0;
    for (;;) {
      const f = await socket.next<Frame>();
      // The frame just read, as sent (the first was the init).
      const text = socket.frames[replayed.length + 1] ?? '';
      if (f.type === 'resumed') {
        expect(f).toMatchObject({ from: 0, to: 40, replayed: replayed.length, gap: true });
        break;
      }
      chars += text.length;
      replayed.push(f.seq as number);
    }
    // As many of the newest as fit in 2 MiB, and not one more.
    expect(chars).toBeLessThanOrEqual(REPLAY_CAP_BYTES);
    expect(chars + chars / replayed.length).toBeGreaterThan(REPLAY_CAP_BYTES);
    expect(replayed.at(-1)).toBe(40);
    expect(replayed).toEqual(Array.from({ length: replayed.length }, (_, i) => 41 - replayed.length + i));
    daemon.close();
  });

  it('gives a viewer joining while a batch is in flight every message exactly once, in order', async () => {
    const { token, subdomain } = await member('relay-join-race');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Race'));
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(true);
    const first = await viewer(subdomain, overlayId); // so the shards have batches to carry
    let seq = 0;
    const joiners = [];
    for (let round = 0; round < 8; round++) {
      for (let i = 0; i < 15; i++) daemon.send(event(++seq));
      joiners.push(await viewer(subdomain, overlayId, { resumeFrom: 0 }));
    }
    for (let i = 0; i < 15; i++) daemon.send(event(++seq));
    const total = seq;
    const firstGot = await first.socket.take<Frame>(total);
    expect(firstGot.map((f) => f.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    for (const { socket } of joiners) {
      const seen: number[] = [];
      for (;;) {
        const f = await socket.next<Frame>();
        if (f.type === 'resumed') continue;
        seen.push(f.seq as number);
        if (f.seq === total) break;
      }
      expect(seen).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    }
    daemon.close();
  });
});

describe('a slow shard', () => {
  it('gets what came while it was busy as one merged batch, in order, not one batch per 50 ms', async () => {
    const { token, subdomain } = await member('relay-slow-shard');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Slow'));
    const hub = hubStub(subdomain, overlayId);
    await expect.poll(() => hub.published()).toBe(true);
    // Two viewers on two shards (an address's first shard is its own).
    const shards = Number(env.RELAY_SHARDS);
    const ips = [uniqueIp()];
    for (;;) {
      const ip = uniqueIp();
      if (shardOrder(ip, shards)[0] !== shardOrder(ips[0] as string, shards)[0]) {
        ips.push(ip);
        break;
      }
    }
    for (const ip of ips) await viewer(subdomain, overlayId, { ip });
    const [slow, fast] = ips.map((ip) => shardOrder(ip, shards)[0] as number) as [number, number];
    const received = await runInDurableObject(hub, async (_instance, state) => {
      // The same hub over the same storage, with shards that record each batch; the slow one holds its first.
      const batches = new Map<number, number[][]>([
        [slow, []],
        [fast, []],
      ]);
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const shardsNs = {
        idFromName: (name: string) => name,
        get: (name: string) => {
          const idx = Number(name.slice(name.lastIndexOf('#') + 1));
          return {
            deliver: async (entries: RelayEntry[]) => {
              const got = batches.get(idx) ?? [];
              got.push(entries.map((e) => JSON.parse(e.text).seq));
              if (idx === slow && got.length === 1) await held;
            },
          };
        },
      };
      const fresh = new OverlayRelay(state, { ...env, RELAY_SHARD: shardsNs } as unknown as typeof env);
      const [ws] = state.getWebSockets('publisher');
      if (!ws) throw new Error('no publisher socket');
      const until = async (done: () => boolean) => {
        for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
        if (!done()) throw new Error('timed out waiting for batches');
      };
      const of = (idx: number) => batches.get(idx) ?? [];
      await fresh.webSocketMessage(ws, JSON.stringify(event(1)));
      await until(() => of(fast).length === 1 && of(slow).length === 1);
      // Three more batches while the slow shard holds the first.
      for (let seq = 2; seq <= 4; seq++) {
        await fresh.webSocketMessage(ws, JSON.stringify(event(seq)));
        await until(() => of(fast).length === seq);
      }
      release();
      await until(() => of(slow).length === 2);
      await fresh.webSocketMessage(ws, JSON.stringify(event(5)));
      await until(() => of(fast).length === 5 && of(slow).length === 3);
      return { slow: of(slow), fast: of(fast) };
    });
    expect(received.fast).toEqual([[1], [2], [3], [4], [5]]);
    expect(received.slow).toEqual([[1], [2, 3, 4], [5]]);
    daemon.close();
  });
});

describe('after eviction', () => {
  it('a fresh hub on the same storage still has the snapshot, the buffer, the last seq and the viewers', async () => {
    const { token, subdomain } = await member('relay-evict-hub');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Evicted'));
    daemon.send(event(41));
    daemon.send(event(42));
    const hub = hubStub(subdomain, overlayId);
    await expect.poll(() => hub.join(40).then((a) => a?.frames.length)).toBe(4);
    const { socket: watching } = await viewer(subdomain, overlayId);
    const answer = await runInDurableObject(hub, async (_instance, state) => {
      const fresh = new OverlayRelay(state, env);
      const joined = fresh.join(41);
      // The publisher's socket survived too: a frame through the fresh object reaches the viewer.
      const [ws] = state.getWebSockets('publisher');
      if (ws) await fresh.webSocketMessage(ws, JSON.stringify(event(43)));
      return { published: await fresh.published(), joined };
    });
    expect(answer.published).toBe(true);
    expect(answer.joined?.frames.map((f) => JSON.parse(f))).toEqual([
      snapshot('Evicted').init,
      { ...event(42).msg, replayed: true },
      { type: 'resumed', from: 41, to: 42, replayed: 1, gap: false },
    ]);
    expect(await watching.next()).toMatchObject({ type: 'stream-event', seq: 43 });
    // And the daemon, reconnecting, learns the last seq the hub kept.
    daemon.close();
    const again = await publisher(token, overlayId);
    expect(again.hello.lastSeq).toBe(43);
    expect(again.viewers.count).toBe(1);
    again.socket.close();
  });

  it('a hub stored by the previous version drops its messages kept as sent: a resume from before is a gap', async () => {
    const { token, subdomain } = await member('relay-legacy');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Legacy'));
    const hub = hubStub(subdomain, overlayId);
    await expect.poll(() => hub.published()).toBe(true);
    const answer = await runInDurableObject(hub, (_instance, state) => {
      // As the previous version left it: messages kept as sent in `buffer`, per-address counts in `ips`.
      state.storage.sql.exec('DROP TABLE replay');
      state.storage.sql.exec(
        'CREATE TABLE buffer (pos INTEGER PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL, frame TEXT NOT NULL)',
      );
      state.storage.sql.exec('CREATE TABLE ips (ip TEXT PRIMARY KEY, viewers INTEGER NOT NULL)');
      const sent = JSON.stringify(event(5).msg);
      state.storage.sql.exec('INSERT INTO buffer VALUES (2, 5, ?, ?)', Date.now(), sent);
      state.storage.kv.put('stream', { pos: 2, lastSeq: 5, floor: 4, count: 1, bytes: sent.length });
      const fresh = new OverlayRelay(state, env);
      const joined = fresh.join(4);
      const tables = state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .toArray()
        .map((t) => t.name);
      return { frames: joined?.frames.map((f) => JSON.parse(f)), tables };
    });
    expect(answer.frames).toEqual([
      snapshot('Legacy').init,
      { type: 'resumed', from: 4, to: 5, replayed: 0, gap: true },
    ]);
    expect(answer.tables).not.toContain('buffer');
    expect(answer.tables).not.toContain('ips');
    // What comes next is kept and replayed as before.
    daemon.send(event(6));
    await expect.poll(() => hub.join(5).then((a) => a?.frames.length)).toBe(3);
    daemon.close();
  });

  it('a fresh shard still knows its viewers and what each has seen', async () => {
    const { token, subdomain } = await member('relay-evict-shard');
    const overlayId = newOverlayId();
    const { socket: daemon } = await publisher(token, overlayId);
    daemon.send(snapshot('Shard'));
    daemon.send(event(1));
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(true);
    const { socket: watching } = await viewer(subdomain, overlayId);
    const joined = await hubStub(subdomain, overlayId).join();
    const pos = joined?.pos ?? 0;
    // The shard is the only one with viewers; find it by asking each.
    const shards = Number(env.RELAY_SHARDS ?? 20);
    let delivered = false;
    for (let i = 0; i < shards && !delivered; i++) {
      const stub = env.RELAY_SHARD.get(env.RELAY_SHARD.idFromName(`${subdomain}/${overlayId}#${i}`));
      if ((await stub.viewerCount()) === 0) continue;
      delivered = await runInDurableObject(stub, (_instance, state) => {
        const fresh = new RelayShard(state, env);
        // An entry at or before where the viewer joined is not sent again; one after it is.
        fresh.deliver([
          { pos, text: JSON.stringify({ type: 'stream-event', seq: 1, note: 'again' }) },
          { pos: pos + 1, text: JSON.stringify(event(2).msg) },
        ]);
        return true;
      });
    }
    expect(delivered).toBe(true);
    expect(await watching.next()).toMatchObject({ type: 'stream-event', seq: 2 });
    expect(watching.unread()).toEqual([]);
    daemon.close();
  });
});

describe('refusals that change nothing for the others', () => {
  it('answers 404 to a viewer of an overlay not published', async () => {
    const { subdomain } = await member('relay-unpublished');
    const res = await viewerSocket(subdomain, newOverlayId());
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(404);
  });
});
