import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../../shared/protocol/index.js';
import { FakeTimers } from '../../../../test/support/fake-timers.js';
import v3 from './fixtures/tiktok-v3.json' with { type: 'json' };
import {
  classifyFailure,
  DEFAULT_BACKOFF,
  LiveSourceError,
  retryDelay,
  type SourceStatus,
  TikTokSource,
} from './source.js';

/** Stands in for TikTokLiveConnection: an EventEmitter whose connect() the test settles. */
class FakeConnection extends EventEmitter {
  disconnects = 0;
  /** Asked for the room's recent messages (a reconnect). */
  recent = false;
  private settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  connect(): Promise<unknown> {
    return new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }
  async disconnect(): Promise<void> {
    this.disconnects++;
  }
  accept(): void {
    this.settle?.resolve();
  }
  refuse(error: unknown): void {
    this.settle?.reject(error);
  }
}

class UserOfflineError extends Error {}
class SignatureRateLimitError extends Error {
  constructor(readonly retryAfter: number) {
    super('Rate Limited');
  }
}

/** Lets promise callbacks (connect resolution) run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(random = () => 0.5) {
  const timers = new FakeTimers();
  const connections: FakeConnection[] = [];
  const events: StreamEvent[] = [];
  const statuses: SourceStatus[] = [];
  const lines: string[] = [];
  const source = new TikTokSource({
    username: '@streamer',
    createConnection: (_username, options) => {
      const c = new FakeConnection();
      c.recent = options?.recent === true;
      connections.push(c);
      return c;
    },
    onEvent: (e) => events.push(e),
    onStatus: (s) => statuses.push(s),
    log: (l) => lines.push(l),
    timers,
    random,
  });
  const latest = () => connections[connections.length - 1]!;
  return { timers, connections, events, statuses, lines, source, latest };
}

async function connected(t: ReturnType<typeof setup>) {
  t.source.start();
  t.latest().accept();
  await flush();
  expect(t.source.status().state).toBe('connected');
  return t.latest();
}

describe('TikTokSource events', () => {
  it('emits normalised events from the connection, once per message id', async () => {
    const t = setup();
    const c = await connected(t);
    c.emit('chat', v3.chat);
    c.emit('chat', v3.chat);
    c.emit('follow', v3.follow);
    c.emit('share', v3.share);
    c.emit('subNotify', v3.subNotify);
    c.emit('roomUser', v3.roomUser);
    c.emit('gift', v3.giftLion);
    expect(t.events.map((e) => e.type)).toEqual(['chat', 'follow', 'share', 'subscribe', 'viewer', 'gift']);
    expect(t.events[4]).toEqual({
      type: 'viewer',
      platform: 'tiktok',
      user: { uniqueId: 'streamer', nickname: 'streamer' },
      data: { viewerCount: 1234 },
    });
  });

  it('fires a 99-rose streak as one gift of 99', async () => {
    const t = setup();
    const c = await connected(t);
    for (let n = 1; n <= 99; n++) {
      c.emit('gift', { ...v3.giftRoseStreakStart, common: { msgId: `m${n}` }, repeatCount: n });
    }
    expect(t.events).toHaveLength(0);
    c.emit('gift', v3.giftRoseStreakEnd);
    expect(t.events).toEqual([
      {
        type: 'gift',
        platform: 'tiktok',
        user: {
          uniqueId: 'rosa.fan',
          nickname: 'Rosa 🌹',
          profilePictureUrl: 'https://p16-sign.tiktokcdn.com/rosa.webp',
        },
        data: { giftName: 'Rose', repeatCount: 99, diamondCount: 1, giftId: 5655 },
      },
    ]);
  });

  it('ends a streak whose end never arrives after the streak timeout', async () => {
    const t = setup();
    const c = await connected(t);
    c.emit('gift', v3.giftRoseStreakStart);
    t.timers.advance(6000);
    expect(t.events.map((e) => e.type === 'gift' && e.data.repeatCount)).toEqual([1]);
  });

  it('gives back what a dropped connection missed: the recent messages, once, marked recovered', async () => {
    const t = setup();
    const c = await connected(t);
    expect(c.recent).toBe(false);
    const chat = (id: string, content: string) => ({ ...v3.chat, common: { msgId: id }, content });
    c.emit('chat', chat('m1', 'seen live'));
    c.emit('disconnected', { code: 1006 });
    t.timers.advance(1000);
    const again = t.latest();
    // The reconnect asks for the room's recent messages; the library emits them before connect() resolves.
    expect(again.recent).toBe(true);
    again.emit('chat', chat('m1', 'seen live'));
    again.emit('chat', chat('m2', 'said while we were away'));
    again.emit('follow', { ...v3.follow, common: { msgId: 'm3' } });
    again.accept();
    await flush();
    again.emit('chat', chat('m4', 'live again'));
    expect(t.events.map((e) => [e.type, e.type === 'chat' ? e.data.comment : '', e.data.recovered])).toEqual([
      ['chat', 'seen live', undefined],
      ['chat', 'said while we were away', true],
      ['follow', '', true],
      ['chat', 'live again', undefined],
    ]);
    const gaps = t.source.status().gaps ?? [];
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toMatchObject({ durationMs: 1000, recovered: 2 });
    expect(t.lines.some((l) => l.includes('2 missed messages recovered'))).toBe(true);
  });

  it('turns like totals into deltas and restarts them on a new connection', async () => {
    const t = setup();
    const c = await connected(t);
    const like = (id: string, count: number, total: number) => ({
      ...v3.like,
      common: { msgId: id },
      count,
      total: `${total}`,
    });
    c.emit('like', like('a', 15, 1015));
    c.emit('like', like('b', 2, 1100));
    c.emit('like', like('c', 2, 1050));
    expect(t.events.map((e) => (e.type === 'like' ? e.data.likeCount : 0))).toEqual([15, 85]);
    // A new live after a reconnect starts its total from zero again.
    c.emit('disconnected', { code: 1006 });
    t.timers.advance(1000);
    t.latest().accept();
    await flush();
    t.latest().emit('like', like('d', 3, 3));
    expect(t.events.at(-1)).toMatchObject({ type: 'like', data: { likeCount: 3, totalLikeCount: 3 } });
  });

  it('survives a payload it cannot read and an event handler that throws', async () => {
    const t = setup();
    const c = await connected(t);
    const hostile = { common: { msgId: 'x' }, user: { uniqueId: 'a' }, comment: 'hi' };
    Object.defineProperty(hostile, 'comment', {
      get: () => {
        throw new Error('boom');
      },
    });
    c.emit('chat', hostile);
    c.emit('chat', v3.chat);
    expect(t.events).toHaveLength(1);

    let calls = 0;
    const throwing = new TikTokSource({
      ...baseOptions(),
      createConnection: () => c,
      onEvent: () => {
        calls++;
        throw new Error('handler broke');
      },
      timers: t.timers,
    });
    throwing.start();
    c.accept();
    await flush();
    c.emit('follow', v3.follow);
    c.emit('share', v3.share);
    expect(calls).toBe(2);
    expect(throwing.status()).toMatchObject({
      state: 'connected',
      lastError: 'event handler failed: handler broke',
    });
  });

  it('reports only changed viewer counts', async () => {
    const t = setup();
    const c = await connected(t);
    c.emit('roomUser', { total: '10' });
    c.emit('roomUser', { total: '10' });
    c.emit('roomUser', { total: '11' });
    expect(t.events.map((e) => (e.type === 'viewer' ? e.data.viewerCount : -1))).toEqual([10, 11]);
  });
});

describe('TikTokSource connection life cycle', () => {
  it('goes connecting → connected and reports the username', async () => {
    const t = setup();
    t.source.start();
    expect(t.source.status()).toMatchObject({ state: 'connecting', username: 'streamer', source: 'tiktok' });
    t.latest().accept();
    await flush();
    expect(t.source.status().state).toBe('connected');
    expect(t.source.status().connectedSince).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(t.statuses.map((s) => s.state)).toEqual(['connecting', 'connected']);
  });

  it('reconnects after a disconnect with exponential backoff and jitter', async () => {
    const t = setup(() => 0.5); // jitter factor exactly 1
    const first = await connected(t);
    first.emit('disconnected', { code: 1006, reason: 'abnormal' });
    expect(t.source.status()).toMatchObject({ state: 'reconnecting', attempts: 1, retryInMs: 1000 });
    expect(t.source.status().lastError).toContain('1006 abnormal');
    expect(first.disconnects).toBe(1);
    t.timers.advance(999);
    expect(t.connections).toHaveLength(1);
    t.timers.advance(1);
    expect(t.connections).toHaveLength(2);
    // The retry fails twice more: 2 s, then 4 s.
    t.latest().refuse(new Error('socket hang up'));
    await flush();
    expect(t.source.status().retryInMs).toBe(2000);
    t.timers.advance(2000);
    t.latest().refuse(new Error('socket hang up'));
    await flush();
    expect(t.source.status()).toMatchObject({ state: 'reconnecting', retryInMs: 4000, attempts: 3 });
    t.timers.advance(4000);
    t.latest().accept();
    await flush();
    expect(t.source.status().state).toBe('connected');
  });

  it('ignores events of a connection it has left', async () => {
    const t = setup();
    const first = await connected(t);
    first.emit('disconnected', { code: 1006 });
    first.emit('chat', v3.chat);
    expect(t.events).toHaveLength(0);
  });

  it('goes offline when the stream ends or the user is not live, and looks again later', async () => {
    const t = setup();
    const c = await connected(t);
    c.emit('streamEnd', { action: 3 });
    c.emit('disconnected', { code: 1000 });
    expect(t.source.status()).toMatchObject({ state: 'offline', retryInMs: DEFAULT_BACKOFF.offlineMs });
    t.timers.advance(DEFAULT_BACKOFF.offlineMs);
    expect(t.connections).toHaveLength(2);
    t.latest().refuse(new UserOfflineError("The requested user isn't online :("));
    await flush();
    expect(t.source.status()).toMatchObject({ state: 'offline', retryInMs: DEFAULT_BACKOFF.offlineMs });
  });

  it('waits much longer after a rate limit, honouring Retry-After', async () => {
    const t = setup();
    t.source.start();
    t.latest().refuse(new SignatureRateLimitError(0));
    await flush();
    expect(t.source.status()).toMatchObject({ state: 'reconnecting', retryInMs: 60_000 });
    t.timers.advance(60_000);
    t.latest().refuse(new SignatureRateLimitError(0));
    await flush();
    expect(t.source.status().retryInMs).toBe(120_000);
    t.timers.advance(120_000);
    t.latest().refuse(new LiveSourceError('rate-limited', 'slow down', 600_000));
    await flush();
    expect(t.source.status().retryInMs).toBe(600_000);
  });

  it('abandons a connect that never answers', async () => {
    const t = setup();
    t.source.start();
    t.timers.advance(DEFAULT_BACKOFF.connectTimeoutMs);
    expect(t.source.status()).toMatchObject({ state: 'reconnecting', attempts: 1 });
    expect(t.connections[0]!.disconnects).toBe(1);
    // A late success of the abandoned attempt changes nothing.
    t.connections[0]!.accept();
    await flush();
    expect(t.source.status().state).toBe('reconnecting');
  });

  it('resets the backoff only after a connection that stayed up', async () => {
    const t = setup();
    let c = await connected(t);
    c.emit('disconnected', { code: 1006 });
    t.timers.advance(1000);
    t.latest().accept();
    await flush();
    // Dropped again at once: flapping keeps backing off.
    t.latest().emit('disconnected', { code: 1006 });
    expect(t.source.status().retryInMs).toBe(2000);
    t.timers.advance(2000);
    c = t.latest();
    c.accept();
    await flush();
    t.timers.advance(DEFAULT_BACKOFF.stableMs);
    c.emit('disconnected', { code: 1006 });
    expect(t.source.status()).toMatchObject({ retryInMs: 1000, attempts: 1 });
  });

  it('stops for good: no retry, pending streaks emitted, state disconnected', async () => {
    const t = setup();
    const c = await connected(t);
    c.emit('gift', v3.giftRoseStreakStart);
    await t.source.stop();
    expect(t.source.status().state).toBe('disconnected');
    expect(t.events).toHaveLength(1);
    expect(c.disconnects).toBe(1);
    t.timers.advance(3_600_000);
    expect(t.connections).toHaveLength(1);
  });

  it('records library errors as the last error without dropping the connection', async () => {
    const t = setup();
    const c = await connected(t);
    c.emit('error', { info: 'Websocket message decoding failed', exception: new Error('bad frame') });
    expect(t.source.status()).toMatchObject({
      state: 'connected',
      lastError: 'Websocket message decoding failed: bad frame',
    });
    expect(t.lines.at(-1)).toBe('tiktok @streamer: Websocket message decoding failed: bad frame');
  });

  it('says once per attempt, in words, that TikTok cannot be reached, and when it tries again', async () => {
    const t = setup();
    t.source.start();
    for (let attempt = 1; attempt <= 3; attempt++) {
      const c = t.latest();
      // What the library does without a network: an error event per room-id route, then the rejection.
      const offline = Object.assign(new Error('getaddrinfo ENOTFOUND www.tiktok.com'), { code: 'ENOTFOUND' });
      for (let i = 0; i < 3; i++)
        c.emit('error', { info: 'Failed to retrieve Room ID from all sources', exception: offline });
      c.refuse(
        Object.assign(new Error('Failed to retrieve Room ID from all sources'), {
          config: { routeId: 'fetchRoomId', requestErrs: [offline, offline, offline] },
        }),
      );
      await flush();
      t.timers.advance(t.source.status().retryInMs ?? 0);
    }
    expect(t.lines).toHaveLength(3);
    expect(t.lines[0]).toBe(
      'tiktok @streamer: cannot reach TikTok (is this computer online?); trying again in 1 s',
    );
    expect(t.lines[2]).toMatch(
      /^tiktok @streamer: cannot reach TikTok \(is this computer online\?\); trying again in \d+ s$/,
    );
    expect(t.source.status().lastError).toBe('cannot reach TikTok (is this computer online?)');
  });

  it('tells apart a user that does not exist, one not live, and a refusing sign server', async () => {
    expect(classifyFailure(new Error('User not found')).kind).toBe('not-found');
    expect(classifyFailure(new UserOfflineError("The requested user isn't online :(")).kind).toBe('offline');
    expect(classifyFailure(new SignatureRateLimitError(0)).kind).toBe('rate-limited');
    expect(classifyFailure(new Error('something else entirely')).kind).toBe('other');
    const t = setup();
    t.source.start();
    t.latest().refuse(new SignatureRateLimitError(0));
    await flush();
    expect(t.lines.at(-1)).toContain('--tiktok-sign-key');
    expect(t.lines.at(-1)).toMatch(/trying again in 1 min$/);
  });

  it('refuses a username that is not one', () => {
    expect(() => new TikTokSource({ ...baseOptions(), username: 'a b/../c' })).toThrow(RangeError);
    expect(new TikTokSource({ ...baseOptions(), username: ' @some.one_1 ' }).username).toBe('some.one_1');
  });
});

function baseOptions() {
  return { username: 'x', createConnection: () => new FakeConnection(), onEvent: () => {} };
}

describe('backoff arithmetic', () => {
  it('doubles up to the ceiling and spreads by ±25 %', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 7, 20].map((n) => retryDelay('other', n, DEFAULT_BACKOFF, mid))).toEqual([
      1000, 2000, 4000, 60_000, 60_000,
    ]);
    expect(retryDelay('other', 1, DEFAULT_BACKOFF, () => 0)).toBe(750);
    expect(retryDelay('other', 1, DEFAULT_BACKOFF, () => 0.999999)).toBe(1250);
    expect(retryDelay('rate-limited', 10, DEFAULT_BACKOFF, mid)).toBe(DEFAULT_BACKOFF.rateLimitMaxMs);
    expect(retryDelay('rate-limited', 1, DEFAULT_BACKOFF, () => 0, 90_000)).toBe(90_000);
  });

  it('classifies the library errors', () => {
    expect(classifyFailure(new SignatureRateLimitError(5000))).toEqual({
      kind: 'rate-limited',
      retryAfterMs: 5000,
    });
    expect(classifyFailure(new UserOfflineError('x'))).toEqual({ kind: 'offline' });
    expect(classifyFailure(new Error('Request failed with status code 429'))).toEqual({
      kind: 'rate-limited',
    });
    expect(classifyFailure(new Error('ECONNRESET'))).toEqual({ kind: 'other' });
    expect(classifyFailure('weird')).toEqual({ kind: 'other' });
  });
});
