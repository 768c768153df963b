// The daemon's feed of Kick events (GET /kick/events) and the member's KickChannel behind it: the licence
// and `after` checked before the upgrade, replay in order then live events, a gap when `after` is older
// than what is kept, one store per delivery id, and the 24 h / 10,000 bounds on a fake clock.

import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import * as v from 'valibot';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KICK_WEBHOOK_LIMITS, KickEventsFrame, type KickFeedEvent } from '../../shared/protocol/kick.js';
import {
  feedHeaders,
  type KeptKickEvent,
  KickChannel,
  kickChannelOf,
} from '../../workers/src/kick/channel.js';
import { signLicence } from '../../workers/src/licence.js';
import { gatekeeper, logout, WARM_UP_TIMEOUT_MS } from './helpers/gatekeeper.js';
import { member, openSocket, type Socket } from './helpers/relay-sockets.js';

const HOUR = 60 * 60 * 1000;

const chat = (comment: string): KickFeedEvent => ({
  type: 'chat',
  platform: 'kick',
  user: { uniqueId: 'viewer-one', nickname: 'Viewer_One' },
  data: { comment, messageId: `m-${comment}` },
});

type Frame = v.InferOutput<typeof KickEventsFrame>;

/** The next frame, checked against the feed's schema. */
async function nextFrame(socket: Socket): Promise<Frame> {
  const frame = await socket.next();
  const parsed = v.safeParse(KickEventsFrame, frame);
  if (!parsed.success) throw new Error(`not a feed frame: ${JSON.stringify(frame)}`);
  return parsed.output;
}

const comments = (frames: Frame[]) =>
  frames.map((f) => (f.type === 'event' && f.event.type === 'chat' ? `${f.seq}:${f.event.data.comment}` : f));

async function feed(token: string, query = ''): Promise<Socket> {
  const opened = await openSocket(`/kick/events${query}`, { Authorization: `Bearer ${token}` });
  if (opened instanceof Response)
    throw new Error(`/kick/events answered ${opened.status}: ${await opened.text()}`);
  return opened;
}

/** Stores `count` chat events in the member's channel, in one step inside the object. */
async function storeMany(userId: string, count: number, label = 'd'): Promise<void> {
  await runInDurableObject(kickChannelOf(env, userId), (instance: KickChannel) => {
    for (let i = 0; i < count; i++) instance.store(`${label}-${i}`, chat(`${label}${i}`));
  });
}

/** What a channel keeps (the RPC type of `event` does not survive serialisation typing). */
const kept = async (channel: ReturnType<typeof kickChannelOf>) =>
  (await channel.kept()) as unknown as KeptKickEvent[];

const storedRows = (userId: string) =>
  runInDurableObject(
    kickChannelOf(env, userId),
    (_i, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM events').one().n,
  );

beforeAll(async () => {
  // The first object call loads the Worker's modules into the object's context (slow on a busy machine).
  await kickChannelOf(env, 'warm-up').kept();
}, WARM_UP_TIMEOUT_MS);

afterEach(() => {
  vi.useRealTimers();
});

describe('GET /kick/events: refused before the upgrade', () => {
  it('without a licence, or with one that is not valid: 401 and no socket', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-a-licence' }] as Record<string, string>[]) {
      const res = await gatekeeper('/kick/events?after=0', { headers: { Upgrade: 'websocket', ...headers } });
      expect(res.status).toBe(401);
      expect(res.webSocket).toBeNull();
    }
  });

  it('an after that is not a seq: 400 naming it', async () => {
    const { token } = await member('kick-feed-bad-after');
    for (const after of ['abc', '-1', '1.5', '', '01']) {
      const res = await gatekeeper(`/kick/events?after=${after}`, {
        headers: { Upgrade: 'websocket', Authorization: `Bearer ${token}` },
      });
      expect(res.status, after).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/after/);
    }
  });

  it('a plain request: 426 with the protocol to upgrade to', async () => {
    const { token } = await member('kick-feed-plain');
    const res = await gatekeeper('/kick/events', { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(426);
    expect(res.headers.get('Upgrade')).toBe('websocket');
  });
});

describe('GET /kick/events: replay, gap, live', () => {
  it('every kept event after `after`, in order, then live ones', async () => {
    const { userId, token } = await member('kick-feed-replay');
    const channel = kickChannelOf(env, userId);
    for (const word of ['one', 'two', 'three']) await channel.store(`d-${word}`, chat(word));
    const socket = await feed(token, '?after=1');
    expect(comments([await nextFrame(socket), await nextFrame(socket)])).toEqual(['2:two', '3:three']);
    expect(await channel.store('d-four', chat('four'))).toEqual({ stored: true, seq: 4 });
    expect(comments([await nextFrame(socket)])).toEqual(['4:four']);
    // From the beginning: all of them.
    const again = await feed(token, '?after=0');
    expect(comments(await Promise.all([1, 2, 3, 4].map(() => nextFrame(again))))).toEqual([
      '1:one',
      '2:two',
      '3:three',
      '4:four',
    ]);
    socket.close();
    again.close();
  });

  it('every frame, replayed or live, carries `at`: when the event happened (here: when it was stored)', async () => {
    const { userId, token } = await member('kick-feed-at');
    const channel = kickChannelOf(env, userId);
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = Date.now();
    await channel.store('d-1', chat('one'));
    vi.setSystemTime(first + HOUR);
    // Kick's own time of the event, when its payload gives one.
    await channel.store('d-2', chat('two'), first + 30 * 60_000);
    const socket = await feed(token, '?after=0');
    expect(await socket.take(2)).toEqual([
      expect.objectContaining({ seq: 1, at: first }),
      expect.objectContaining({ seq: 2, at: first + 30 * 60_000 }),
    ]);
    vi.setSystemTime(first + 2 * HOUR);
    await channel.store('d-3', chat('three'));
    expect(await nextFrame(socket)).toMatchObject({ type: 'event', seq: 3, at: first + 2 * HOUR });
    socket.close();
  });

  it('events kept before the time of each was recorded replay with when they were stored', async () => {
    const { userId, token } = await member('kick-feed-at-before');
    const storedAt = Date.now() - HOUR;
    await runInDurableObject(kickChannelOf(env, userId), (_instance: KickChannel, state) => {
      const sql = state.storage.sql;
      sql.exec('DROP TABLE events');
      sql.exec('CREATE TABLE events (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, event TEXT NOT NULL)');
      sql.exec('INSERT INTO events (seq, at, event) VALUES (1, ?, ?)', storedAt, JSON.stringify(chat('old')));
      state.storage.kv.put('lastSeq', 1);
      // The object as it starts after the update, on the same storage.
      new KickChannel(state, env);
    });
    const socket = await feed(token, '?after=0');
    expect(await nextFrame(socket)).toMatchObject({ type: 'event', seq: 1, at: storedAt });
    await kickChannelOf(env, userId).store('d-2', chat('new'));
    expect(await nextFrame(socket)).toMatchObject({ type: 'event', seq: 2 });
    socket.close();
  });

  it('without after: only live events', async () => {
    const { userId, token } = await member('kick-feed-live');
    const channel = kickChannelOf(env, userId);
    await channel.store('d-old', chat('old'));
    const socket = await feed(token);
    await channel.store('d-new', chat('new'));
    expect(comments([await nextFrame(socket)])).toEqual(['2:new']);
    expect(socket.unread()).toEqual([]);
    socket.close();
  });

  it('a daemon that has everything gets no gap and no replay', async () => {
    const { userId, token } = await member('kick-feed-current');
    await kickChannelOf(env, userId).store('d-1', chat('one'));
    const socket = await feed(token, '?after=1');
    await kickChannelOf(env, userId).store('d-2', chat('two'));
    expect(comments([await nextFrame(socket)])).toEqual(['2:two']);
    socket.close();
  });

  it('each member has their own seq and sees only their own events', async () => {
    const a = await member('kick-feed-a');
    const b = await member('kick-feed-b');
    await kickChannelOf(env, a.userId).store('same-id', chat('for a'));
    expect(await kickChannelOf(env, b.userId).store('same-id', chat('for b'))).toEqual({
      stored: true,
      seq: 1,
    });
    const socket = await feed(b.token, '?after=0');
    expect(comments([await nextFrame(socket)])).toEqual(['1:for b']);
    socket.close();
  });

  it('past 10,000 kept events the oldest go: a daemon from before them gets a gap, then the rest', async () => {
    const { userId, token } = await member('kick-feed-count');
    await storeMany(userId, KICK_WEBHOOK_LIMITS.keptEvents + 5);
    expect(await storedRows(userId)).toBe(KICK_WEBHOOK_LIMITS.keptEvents);
    const socket = await feed(token, '?after=2');
    expect(await nextFrame(socket)).toEqual({ type: 'gap', from: 6 });
    const first = await nextFrame(socket);
    expect(first).toMatchObject({ type: 'event', seq: 6 });
    // A daemon that missed none of what is gone: no gap.
    const current = await feed(token, '?after=5');
    expect(await nextFrame(current)).toMatchObject({ type: 'event', seq: 6 });
    socket.close();
    current.close();
  }, 120_000);

  it('events are kept 24 hours: a daemon away longer gets a gap from what is left', async () => {
    const { userId, token } = await member('kick-feed-age');
    const channel = kickChannelOf(env, userId);
    vi.useFakeTimers({ toFake: ['Date'] });
    await channel.store('d-1', chat('old'));
    vi.setSystemTime(Date.now() + 23 * HOUR);
    await channel.store('d-2', chat('newer'));
    vi.setSystemTime(Date.now() + HOUR + 1000);
    // The first is past its 24 hours; the second is not.
    const socket = await feed(token, '?after=0');
    expect(await nextFrame(socket)).toEqual({ type: 'gap', from: 2 });
    expect(comments([await nextFrame(socket)])).toEqual(['2:newer']);
    socket.close();
    // Nothing kept at all: the gap says where the next event starts.
    vi.setSystemTime(Date.now() + 24 * HOUR);
    const later = await feed(token, '?after=1');
    expect(await nextFrame(later)).toEqual({ type: 'gap', from: 3 });
    await channel.store('d-3', chat('next'));
    expect(comments([await nextFrame(later)])).toEqual(['3:next']);
    later.close();
  });

  it('the alarm drops events at the end of their 24 hours even when nothing new comes', async () => {
    const { userId } = await member('kick-feed-alarm');
    vi.useFakeTimers({ toFake: ['Date'] });
    await kickChannelOf(env, userId).store('d-1', chat('one'));
    expect(await storedRows(userId)).toBe(1);
    vi.setSystemTime(Date.now() + 24 * HOUR + 1000);
    expect(await runDurableObjectAlarm(kickChannelOf(env, userId))).toBe(true);
    expect(await storedRows(userId)).toBe(0);
  });

  it('a seq from another history (above any given): a gap from the next seq, then live', async () => {
    const { userId, token } = await member('kick-feed-ahead');
    await kickChannelOf(env, userId).store('d-1', chat('one'));
    const socket = await feed(token, '?after=500');
    expect(await nextFrame(socket)).toEqual({ type: 'gap', from: 1 });
    expect(comments([await nextFrame(socket)])).toEqual(['1:one']);
    socket.close();
  });
});

describe('GET /kick/events: how long a feed socket lasts', () => {
  const alarmAt = (userId: string) =>
    runInDurableObject(kickChannelOf(env, userId), (_i, state) => state.storage.getAlarm());

  it('closes with 4401 when the licence’s exp passes (the object’s alarm, armed at the exp)', async () => {
    const { userId, token, expiresAt } = await member('kick-feed-exp');
    const socket = await feed(token);
    expect(await alarmAt(userId)).toBe(expiresAt.getTime());
    vi.useFakeTimers({ toFake: ['Date'] });
    // A second early (an alarm that ran ahead of time): nothing closes, the alarm stays at the exp.
    vi.setSystemTime(expiresAt.getTime() - 1000);
    await runInDurableObject(kickChannelOf(env, userId), (instance: KickChannel) => instance.alarm());
    expect(socket.unread()).toEqual([]);
    expect(await alarmAt(userId)).toBe(expiresAt.getTime());
    vi.setSystemTime(expiresAt.getTime());
    expect(await runDurableObjectAlarm(kickChannelOf(env, userId))).toBe(true);
    expect(await socket.closed).toMatchObject({ code: 4401 });
  });

  it('the alarm run twice at the same instant closes once and arms nothing in the past', async () => {
    const { userId, token, expiresAt } = await member('kick-feed-exp-twice');
    const socket = await feed(token);
    const closes: number[] = [];
    void socket.closed.then((c) => closes.push(c.code));
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(expiresAt.getTime() + 1000);
    // The daemon is already back with a refreshed licence: that socket stays.
    const refreshed = await signLicence(env, { sub: userId, tier: 'premium', epoch: 1 });
    const later = await feed(refreshed.token);
    await runInDurableObject(kickChannelOf(env, userId), async (instance: KickChannel) => {
      await instance.alarm();
      await instance.alarm();
    });
    expect(await socket.closed).toMatchObject({ code: 4401 });
    expect(closes).toEqual([4401]);
    expect(await alarmAt(userId)).toBe(refreshed.expiresAt.getTime());
    await kickChannelOf(env, userId).store('d-1', chat('after'));
    expect(comments([await nextFrame(later)])).toEqual(['1:after']);
    later.close();
  });

  it('a licence past its exp (within the clock tolerance) gets 4401 at once', async () => {
    const { token, expiresAt } = await member('kick-feed-expired');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(expiresAt.getTime() + 10_000);
    const socket = await feed(token, '?after=0');
    expect(await socket.closed).toMatchObject({ code: 4401 });
  });

  it('closes with 4403 when the member signs out; the revoked licence opens no new one', async () => {
    const { userId, token } = await member('kick-feed-logout');
    const socket = await feed(token);
    const other = await feed(token, '?after=0');
    expect((await logout(token)).status).toBe(204);
    expect(await socket.closed).toMatchObject({ code: 4403 });
    expect(await other.closed).toMatchObject({ code: 4403 });
    const res = await gatekeeper('/kick/events', {
      headers: { Upgrade: 'websocket', Authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(401);
    // Where the member's record is not yet seen as signed out, the channel still refuses that licence.
    const direct = await kickChannelOf(env, userId).fetch('https://kick-channel/events', {
      headers: { Upgrade: 'websocket', ...feedHeaders({ exp: Date.now() / 1000 + 3600, epoch: 1 }) },
    });
    expect(direct.status).toBe(401);
    expect(direct.webSocket).toBeNull();
  });

  it('a member holds at most 2 feed sockets: a third closes the oldest with 4409', async () => {
    const { userId, token } = await member('kick-feed-three');
    const first = await feed(token);
    const second = await feed(token);
    const third = await feed(token);
    expect(await first.closed).toMatchObject({ code: 4409 });
    await kickChannelOf(env, userId).store('d-1', chat('to both'));
    expect(comments([await nextFrame(second)])).toEqual(['1:to both']);
    expect(comments([await nextFrame(third)])).toEqual(['1:to both']);
    const fourth = await feed(token);
    expect(await second.closed).toMatchObject({ code: 4409 });
    third.close();
    fourth.close();
  });
});

describe('KickChannel: one store per delivery id', () => {
  it('a delivery id already stored is not stored again and gets no seq', async () => {
    const { userId } = await member('kick-dedupe');
    const channel = kickChannelOf(env, userId);
    expect(await channel.store('d-1', chat('one'))).toEqual({ stored: true, seq: 1 });
    expect(await channel.store('d-1', chat('one'))).toEqual({ stored: false, reason: 'duplicate' });
    expect(await channel.store('d-2', chat('two'))).toEqual({ stored: true, seq: 2 });
    expect((await kept(channel)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('the last 10,000 delivery ids are remembered; older ones are forgotten', async () => {
    const { userId } = await member('kick-dedupe-window');
    await storeMany(userId, KICK_WEBHOOK_LIMITS.deliveryIds + 1);
    const channel = kickChannelOf(env, userId);
    expect(await channel.store(`d-${KICK_WEBHOOK_LIMITS.deliveryIds}`, chat('x'))).toMatchObject({
      stored: false,
    });
    expect(await channel.store('d-1', chat('x'))).toMatchObject({ stored: false });
    expect(await channel.store('d-0', chat('x'))).toMatchObject({ stored: true });
  }, 120_000);

  it('forget drops events and delivery ids and closes feed sockets; the seq goes on', async () => {
    const { userId, token } = await member('kick-forget');
    const channel = kickChannelOf(env, userId);
    await channel.store('d-1', chat('one'));
    const socket = await feed(token);
    await channel.forget();
    expect((await socket.closed).code).toBe(1000);
    expect(await kept(channel)).toEqual([]);
    expect(await channel.store('d-1', chat('again'))).toEqual({ stored: true, seq: 2 });
  });
});
