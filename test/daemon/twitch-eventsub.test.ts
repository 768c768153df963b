// The signed-in Twitch parts against a local server speaking Twitch's own protocols (sign-in service,
// Helix, EventSub WebSocket), over real sockets: the device code flow and twitch.json, renewal on expiry
// and after a 401, disconnecting; EventSub's subscriptions, each notification as a stream event,
// duplicates and stale messages, a reconnect that loses and doubles nothing, a silent connection
// replaced, revocations, malformed frames dropped, and stop().
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  readTwitchTokens,
  startDeviceFlow,
  TWITCH_FILE,
  TWITCH_SCOPES,
  TwitchAuth,
  writeTwitchTokens,
} from '../../daemon/src/sources/twitch/auth.js';
import { EventSubClient, type EventSubState } from '../../daemon/src/sources/twitch/eventsub.js';
import { Helix, type HelixAuth } from '../../daemon/src/sources/twitch/helix.js';
import type { StreamEvent } from '../../shared/protocol/index.js';
import { hostTimers, type Timers } from '../../shared/timers.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeTwitch, startFakeTwitch, storedTokens, twitchEvent } from '../support/fakes/twitch.js';
import { waitFor } from '../support/wait.js';

let fake: FakeTwitch;
let dataDir: string;
let logs: string[];
let client: EventSubClient | undefined;

beforeEach(async () => {
  fake = await startFakeTwitch();
  dataDir = await mkdtemp(join(tmpdir(), 'twitch-'));
  logs = [];
});

afterEach(async () => {
  await client?.stop();
  client = undefined;
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

const log = (line: string) => logs.push(line);

/** The real clock, with every wait a thousand times shorter; the waits asked for are recorded. */
function quickTimers(asked: number[]): Timers {
  return hostTimers({
    now: () => Date.now(),
    setTimeout: (callback, ms) => {
      asked.push(ms);
      return setTimeout(callback, ms / 1000);
    },
    clearTimeout: (handle: NodeJS.Timeout) => clearTimeout(handle),
  });
}

const requestsTo = (path: string, method = 'POST') =>
  fake.requests.filter((r) => r.path === path && r.method === method);

function helixFor(auth: TwitchAuth): Helix {
  return new Helix({
    baseUrl: fake.urls.api,
    clientId: fake.clientId,
    auth: {
      accessToken: async () => (await auth.accessToken())?.accessToken,
      invalidate: () => auth.invalidate(),
    },
  });
}

describe('Twitch sign-in (device code flow)', () => {
  it('polls while pending, slows down when asked, and writes the tokens (0600) once approved', async () => {
    const asked: number[] = [];
    const flow = await startDeviceFlow({
      authUrl: fake.urls.auth,
      clientId: fake.clientId,
      dataDir,
      timers: quickTimers(asked),
    });
    expect(flow.userCode).toMatch(/^[0-9A-F]{8}$/);
    expect(flow.verificationUri).toContain('/activate');
    expect(flow.expiresInS).toBe(1800);
    const device = requestsTo('/oauth2/device')[0];
    expect(device?.body).toEqual({ client_id: fake.clientId, scopes: TWITCH_SCOPES.join(' ') });
    expect(TWITCH_SCOPES.join(' ')).toBe(
      'moderator:read:followers channel:read:subscriptions bits:read user:write:chat',
    );

    fake.slowDownNext();
    const done = flow.wait();
    await waitFor(() => requestsTo('/oauth2/token').length >= 3, 3000, 'three polls');
    fake.approve();
    const tokens = await done;

    // 5 s as Twitch asked, then 5 s more after slow_down.
    expect(asked[0]).toBe(5000);
    expect(new Set(asked.slice(1))).toEqual(new Set([10_000]));
    expect(requestsTo('/oauth2/token')[0]?.body).toEqual({
      client_id: fake.clientId,
      scopes: TWITCH_SCOPES.join(' '),
      device_code: expect.any(String),
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    });
    const issued = fake.issuedTokens[0]!;
    expect(requestsTo('/oauth2/validate', 'GET')[0]?.authorization).toBe(`OAuth ${issued.accessToken}`);
    expect(tokens).toEqual({
      accessToken: issued.accessToken,
      refreshToken: issued.refreshToken,
      expiresAt: expect.any(String),
      scopes: [...TWITCH_SCOPES],
      userId: '1001',
      login: 'streamer',
      clientId: fake.clientId,
    });
    expect(Math.abs(Date.parse(tokens.expiresAt) - issued.expiresAt)).toBeLessThan(5000);
    const file = join(dataDir, TWITCH_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readTwitchTokens(dataDir)).toEqual(tokens);
  });

  it('fails clearly when the streamer declines, the code expires, or the wait is cancelled', async () => {
    const start = () =>
      startDeviceFlow({ authUrl: fake.urls.auth, clientId: fake.clientId, timers: quickTimers([]) });
    const denied = await start();
    fake.deny();
    await expect(denied.wait()).rejects.toMatchObject({
      code: 'denied',
      message: expect.stringMatching(/declined/),
    });

    const expired = await start();
    fake.expireDeviceCodes();
    await expect(expired.wait()).rejects.toMatchObject({
      code: 'expired',
      message: expect.stringMatching(/expired/),
    });

    const cancelled = await start();
    const abort = new AbortController();
    const waiting = cancelled.wait(abort.signal);
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' });

    await expect(
      startDeviceFlow({ authUrl: fake.urls.auth, clientId: 'someone-else' }),
    ).rejects.toMatchObject({
      code: 'rejected',
      message: expect.stringMatching(/client id/),
    });
    expect(await readTwitchTokens(dataDir)).toBeUndefined();
  });
});

describe('Twitch tokens in use', () => {
  it('renews a token about to end once, for every caller at the same time, and saves the renewal', async () => {
    const first = fake.issueTokens();
    await writeTwitchTokens(
      dataDir,
      storedTokens(first, { expiresAt: new Date(Date.now() + 60_000).toISOString() }),
    );
    const auth = new TwitchAuth({ authUrl: fake.urls.auth, dataDir, log });
    const [a, b, c] = await Promise.all([auth.accessToken(), auth.accessToken(), auth.accessToken()]);
    expect(requestsTo('/oauth2/token')).toHaveLength(1);
    expect(requestsTo('/oauth2/token')[0]?.body).toEqual({
      grant_type: 'refresh_token',
      refresh_token: first.refreshToken,
      client_id: fake.clientId,
    });
    const second = fake.issuedTokens[1]!;
    expect(a?.accessToken).toBe(second.accessToken);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(await readTwitchTokens(dataDir)).toEqual(a);
    expect((await stat(join(dataDir, TWITCH_FILE))).mode & 0o777).toBe(0o600);
    // Good for hours now: no further renewal.
    expect((await auth.accessToken())?.accessToken).toBe(second.accessToken);
    expect(requestsTo('/oauth2/token')).toHaveLength(1);
  });

  it('renews after Helix answers 401 and tries the request once more', async () => {
    await writeTwitchTokens(dataDir, storedTokens(fake.issueTokens()));
    const auth = new TwitchAuth({ authUrl: fake.urls.auth, dataDir, log });
    const helix = helixFor(auth);
    expect(await helix.userByLogin('streamer')).toEqual({
      id: '1001',
      login: 'streamer',
      displayName: 'Streamer',
    });
    expect(await helix.userByLogin('nobody')).toBeUndefined();

    fake.expireAccessTokens();
    fake.setStream('1001', 17);
    expect(await helix.viewerCount('1001')).toBe(17);
    expect(requestsTo('/oauth2/token')).toHaveLength(1);
    expect(requestsTo('/helix/streams', 'GET')).toHaveLength(2);
    const second = fake.issuedTokens[1]!;
    expect(requestsTo('/helix/streams', 'GET')[1]).toMatchObject({
      clientId: fake.clientId,
      authorization: `Bearer ${second.accessToken}`,
    });
    expect((await readTwitchTokens(dataDir))?.accessToken).toBe(second.accessToken);
    fake.setStream('1001', undefined);
    expect(await helix.viewerCount('1001')).toBeUndefined();
  });

  it('treats a refused refresh token as the end of the sign-in: undefined, logged once, the file kept', async () => {
    const token = fake.issueTokens();
    await writeTwitchTokens(
      dataDir,
      storedTokens(token, { expiresAt: new Date(Date.now() - 1000).toISOString() }),
    );
    fake.forgetAllTokens();
    const auth = new TwitchAuth({ authUrl: fake.urls.auth, dataDir, log });
    expect(await auth.accessToken()).toBeUndefined();
    expect(await auth.accessToken()).toBeUndefined();
    expect(requestsTo('/oauth2/token')).toHaveLength(1);
    expect(logs.filter((l) => l.includes('overlay-daemon connect twitch'))).toHaveLength(1);
    expect(await readTwitchTokens(dataDir)).toBeDefined();
    await expect(helixFor(auth).userByLogin('streamer')).rejects.toMatchObject({ code: 'signed_out' });
  });

  it('waits for a rate limit that resets within seconds, and fails clearly for a longer one', async () => {
    await writeTwitchTokens(dataDir, storedTokens(fake.issueTokens()));
    const helix = helixFor(new TwitchAuth({ authUrl: fake.urls.auth, dataDir, log }));
    fake.limitNext(1);
    expect((await helix.userByLogin('streamer'))?.id).toBe('1001');
    fake.limitNext(3600);
    await expect(helix.userByLogin('streamer')).rejects.toMatchObject({
      code: 'rate_limited',
      message: expect.stringMatching(/limit is used up for (59 min|1 h|60 min)/),
    });
  });

  it('disconnect revokes the token at Twitch and deletes twitch.json, even when Twitch cannot be reached', async () => {
    const token = fake.issueTokens();
    await writeTwitchTokens(dataDir, storedTokens(token));
    await new TwitchAuth({ authUrl: fake.urls.auth, dataDir, log }).disconnect();
    expect(fake.revokedTokens).toEqual([token.accessToken]);
    expect(requestsTo('/oauth2/revoke')[0]?.body).toEqual({
      client_id: fake.clientId,
      token: token.accessToken,
    });
    await expect(stat(join(dataDir, TWITCH_FILE))).rejects.toMatchObject({ code: 'ENOENT' });

    await writeTwitchTokens(dataDir, storedTokens(fake.issueTokens()));
    await new TwitchAuth({ authUrl: 'http://127.0.0.1:1', dataDir, log }).disconnect();
    expect(logs.some((l) => /revoking the sign-in at Twitch failed/.test(l))).toBe(true);
    expect(await readTwitchTokens(dataDir)).toBeUndefined();
  });
});

describe('EventSub WebSocket', () => {
  let events: StreamEvent[];
  let states: { state: EventSubState; detail?: string }[];

  beforeEach(() => {
    events = [];
    states = [];
  });

  function connect(
    options: {
      scopes?: string[];
      auth?: HelixAuth;
      keepaliveMarginMs?: number;
      target?: FakeTwitch;
      timers?: Timers;
    } = {},
  ): EventSubClient {
    const target = options.target ?? fake;
    const token = target.issueTokens(options.scopes);
    const auth = options.auth ?? { accessToken: async () => token.accessToken, invalidate: () => {} };
    client = new EventSubClient({
      url: target.urls.eventsub,
      helix: new Helix({ baseUrl: target.urls.api, clientId: target.clientId, auth }),
      broadcasterId: '1001',
      userId: '1001',
      onEvent: (event) => events.push(event),
      onState: (state, detail) => states.push({ state, ...(detail ? { detail } : {}) }),
      log,
      // No jitter: the first retry comes after exactly 1 s.
      random: () => 0.5,
      ...(options.keepaliveMarginMs ? { keepaliveMarginMs: options.keepaliveMarginMs } : {}),
      ...(options.timers ? { timers: options.timers } : {}),
    });
    client.start();
    return client;
  }

  const connected = () => waitFor(() => states.at(-1)?.state === 'connected', 3000, 'connected');
  const subscribePosts = (target = fake) =>
    target.requests.filter((r) => r.path === '/helix/eventsub/subscriptions' && r.method === 'POST');

  it('subscribes to the six types at the welcome, each with its version and condition', async () => {
    const eventSub = connect();
    await connected();
    expect(states).toEqual([{ state: 'connecting' }, { state: 'connected' }]);
    const sessionId = fake.sessions[0]?.id;
    const made = fake
      .activeSubscriptions(sessionId)
      .map((s) => ({ type: s.type, version: s.version, condition: s.condition }));
    expect(made).toHaveLength(6);
    expect(made).toEqual(
      expect.arrayContaining([
        {
          type: 'channel.follow',
          version: '2',
          condition: { broadcaster_user_id: '1001', moderator_user_id: '1001' },
        },
        { type: 'channel.subscribe', version: '1', condition: { broadcaster_user_id: '1001' } },
        { type: 'channel.subscription.gift', version: '1', condition: { broadcaster_user_id: '1001' } },
        { type: 'channel.subscription.message', version: '1', condition: { broadcaster_user_id: '1001' } },
        { type: 'channel.cheer', version: '1', condition: { broadcaster_user_id: '1001' } },
        { type: 'channel.raid', version: '1', condition: { to_broadcaster_user_id: '1001' } },
      ]),
    );
    expect(subscribePosts()[0]?.body).toMatchObject({
      transport: { method: 'websocket', session_id: sessionId },
    });
    expect([...eventSub.subscribed()].sort()).toEqual(made.map((s) => s.type).sort());
  });

  it('turns each notification into the stream event the platform mapping fixes', async () => {
    connect();
    await connected();
    const anonymous = { user_id: null, user_login: null, user_name: null, is_anonymous: true };
    const long = 'x'.repeat(150);
    fake.notify('channel.follow', twitchEvent('channel.follow', fake.user));
    fake.notify('channel.subscribe', twitchEvent('channel.subscribe', fake.user));
    fake.notify(
      'channel.subscribe',
      twitchEvent('channel.subscribe', fake.user, { tier: '3000', is_gift: true }),
    );
    fake.notify('channel.subscription.message', twitchEvent('channel.subscription.message', fake.user));
    fake.notify('channel.subscription.gift', twitchEvent('channel.subscription.gift', fake.user));
    fake.notify(
      'channel.subscription.gift',
      twitchEvent('channel.subscription.gift', fake.user, { ...anonymous, cumulative_total: null }),
    );
    fake.notify('channel.cheer', twitchEvent('channel.cheer', fake.user));
    fake.notify(
      'channel.cheer',
      twitchEvent('channel.cheer', fake.user, { ...anonymous, message: '', bits: 1 }),
    );
    fake.notify('channel.raid', twitchEvent('channel.raid', fake.user));
    fake.notify(
      'channel.follow',
      twitchEvent('channel.follow', fake.user, { user_login: long, user_name: long }),
    );
    await waitFor(() => events.length === 10, 3000, 'ten events');
    const viewer = { uniqueId: 'viewer', nickname: 'Viewer' };
    const anon = { uniqueId: 'anonymous', nickname: 'Anonymous' };
    expect(events).toEqual([
      { type: 'follow', platform: 'twitch', user: viewer, data: {} },
      { type: 'subscribe', platform: 'twitch', user: viewer, data: { tier: '1000', gifted: false } },
      { type: 'subscribe', platform: 'twitch', user: viewer, data: { tier: '3000', gifted: true } },
      {
        type: 'subscribe',
        platform: 'twitch',
        user: viewer,
        data: { subMonth: 15, tier: '2000', comment: 'Love the stream! FevziGG' },
      },
      {
        type: 'subscribe',
        platform: 'twitch',
        user: viewer,
        data: { tier: '1000', gifted: true, giftCount: 5 },
      },
      {
        type: 'subscribe',
        platform: 'twitch',
        user: anon,
        data: { tier: '1000', gifted: true, giftCount: 5 },
      },
      {
        type: 'gift',
        platform: 'twitch',
        user: viewer,
        data: { giftName: 'Bits', repeatCount: 100, diamondCount: 1, comment: 'pogchamp cheer100' },
      },
      {
        type: 'gift',
        platform: 'twitch',
        user: anon,
        data: { giftName: 'Bits', repeatCount: 1, diamondCount: 1 },
      },
      {
        type: 'share',
        platform: 'twitch',
        user: { uniqueId: 'raider', nickname: 'Raider' },
        data: { viewers: 42 },
      },
      {
        type: 'follow',
        platform: 'twitch',
        user: { uniqueId: 'x'.repeat(100), nickname: 'x'.repeat(100) },
        data: {},
      },
    ]);
  });

  it('delivers a message sent twice (same message_id) once, and ignores one older than 10 minutes', async () => {
    connect();
    await connected();
    const follow = twitchEvent('channel.follow', fake.user);
    fake.notify('channel.follow', follow, { messageId: 'same-id' });
    fake.notify('channel.follow', follow, { messageId: 'same-id' });
    fake.notify('channel.follow', follow, {
      timestamp: new Date(Date.now() - 11 * 60_000).toISOString().replace('Z', '123456Z'),
    });
    fake.notify('channel.raid', twitchEvent('channel.raid', fake.user));
    await waitFor(() => events.some((e) => e.type === 'share'), 3000, 'the raid');
    expect(events.map((e) => e.type)).toEqual(['follow', 'share']);
    expect(logs.some((l) => /more than 10 minutes ago/.test(l))).toBe(true);
  });

  it('follows session_reconnect: nothing lost or doubled, the subscriptions carried over, none made again', async () => {
    const eventSub = connect();
    await connected();
    const oldSession = fake.sessions[0]!.id;
    fake.notify('channel.follow', twitchEvent('channel.follow', fake.user), { messageId: 'before' });
    fake.reconnect();
    // Sent on the old connection while the new one is being opened.
    fake.notify('channel.cheer', twitchEvent('channel.cheer', fake.user), { messageId: 'during' });
    await waitFor(
      () => fake.sessions.length === 1 && fake.sessions[0]?.id !== oldSession,
      3000,
      'the old connection closed by the client',
    );
    const newSession = fake.sessions[0]!.id;
    // Twitch unsure whether one arrived sends it again, now on the new connection.
    fake.notify('channel.follow', twitchEvent('channel.follow', fake.user), { messageId: 'before' });
    fake.notify('channel.raid', twitchEvent('channel.raid', fake.user), { messageId: 'after' });
    await waitFor(() => events.some((e) => e.type === 'share'), 3000, 'the raid after the switch');
    expect(events.map((e) => e.type)).toEqual(['follow', 'gift', 'share']);
    expect(subscribePosts()).toHaveLength(6);
    expect(fake.activeSubscriptions(newSession)).toHaveLength(6);
    expect(eventSub.subscribed().size).toBe(6);
    expect(states.map((s) => s.state)).toEqual(['connecting', 'connected']);
    expect(logs.some((l) => /moved to the connection Twitch asked for/.test(l))).toBe(true);
  });

  it('replaces a connection that goes silent past the keepalive, and subscribes again', async () => {
    const quick = await startFakeTwitch({ keepaliveSeconds: 1 });
    try {
      const eventSub = connect({ target: quick, keepaliveMarginMs: 500 });
      await connected();
      const first = quick.sessions[0]!.id;
      quick.stall();
      await waitFor(() => states.some((s) => s.state === 'reconnecting'), 4000, 'the silence noticed');
      expect(logs.some((l) => /nothing heard for/.test(l))).toBe(true);
      await waitFor(
        () => states.at(-1)?.state === 'connected' && quick.activeSubscriptions().length === 6,
        4000,
        'subscribed again',
      );
      expect(quick.activeSubscriptions().every((s) => s.sessionId !== first)).toBe(true);
      expect(subscribePosts(quick)).toHaveLength(12);
      expect(eventSub.subscribed().size).toBe(6);
      quick.notify('channel.raid', twitchEvent('channel.raid', quick.user));
      await waitFor(() => events.length === 1, 3000, 'an event on the new connection');
      await client?.stop();
    } finally {
      await quick.close();
    }
  });

  it('starts afresh when Twitch closes the connection (4000, 4003, …)', async () => {
    connect();
    await connected();
    fake.dropConnections(4000);
    await waitFor(() => states.some((s) => s.state === 'reconnecting'), 3000, 'reconnecting');
    expect(states.find((s) => s.state === 'reconnecting')?.detail).toMatch(
      /4000 \(Twitch had an internal error\); retrying in 1 s/,
    );
    await waitFor(() => states.at(-1)?.state === 'connected', 4000, 'connected again');
    expect(subscribePosts()).toHaveLength(12);
    expect(fake.activeSubscriptions()).toHaveLength(6);
  });

  it('reports a revoked subscription: the type leaves subscribed(), the reason is logged and in the detail', async () => {
    const eventSub = connect();
    await connected();
    fake.revoke('channel.cheer', 'authorization_revoked');
    fake.revoke('channel.raid', 'user_removed');
    await waitFor(() => eventSub.subscribed().size === 4, 3000, 'two revocations');
    expect(eventSub.subscribed().has('channel.cheer')).toBe(false);
    expect(logs).toEqual(
      expect.arrayContaining([
        '[twitch] EventSub: Twitch ended the channel.cheer subscription (authorization_revoked)',
        '[twitch] EventSub: Twitch ended the channel.raid subscription (user_removed)',
      ]),
    );
    expect(states.at(-1)).toEqual({
      state: 'connected',
      detail:
        'not receiving channel.cheer (ended by Twitch: authorization_revoked), channel.raid (ended by Twitch: user_removed): run "overlay-daemon connect twitch" again',
    });
  });

  it('keeps the other subscriptions when one fails, and says which and why', async () => {
    const eventSub = connect({ scopes: ['moderator:read:followers', 'channel:read:subscriptions'] });
    await connected();
    expect(eventSub.subscribed().has('channel.cheer')).toBe(false);
    expect(eventSub.subscribed().size).toBe(5);
    expect(states.at(-1)?.detail).toBe(
      'not receiving channel.cheer (the sign-in lacks the scope bits:read): run "overlay-daemon connect twitch" again',
    );
    expect(
      logs.some((l) =>
        /subscribing to channel.cheer failed: channel.cheer needs the scope bits:read/.test(l),
      ),
    ).toBe(true);
  });

  it('stops with an error, not a reconnect loop, when nothing can be subscribed for good', async () => {
    connect({ auth: { accessToken: async () => undefined, invalidate: () => {} } });
    await waitFor(() => states.at(-1)?.state === 'error', 3000, 'error');
    expect(states.at(-1)?.detail).toMatch(
      /not receiving channel.follow, .*channel.raid \(not signed in to Twitch/,
    );
    await waitFor(() => fake.clients === 0, 3000, 'the unused connection closed');
  });

  it('drops malformed frames with a logged reason and keeps working', async () => {
    connect();
    await connected();
    fake.sendRaw('this is not JSON');
    fake.sendRaw('{"metadata":null}');
    fake.sendRaw(
      JSON.stringify({
        metadata: { message_id: 'x', message_type: 'mystery', message_timestamp: new Date().toISOString() },
        payload: {},
      }),
    );
    fake.sendRaw(
      JSON.stringify({
        metadata: {
          message_id: 'y',
          message_type: 'session_welcome',
          message_timestamp: new Date().toISOString(),
        },
        payload: { session: null },
      }),
    );
    fake.notify('channel.cheer', twitchEvent('channel.cheer', fake.user, { bits: 'lots' }));
    fake.notify('channel.follow', twitchEvent('channel.follow', fake.user));
    await waitFor(() => events.length === 1, 3000, 'the good notification');
    expect(events[0]?.type).toBe('follow');
    const drops = logs.filter((l) => l.startsWith('[twitch] EventSub: dropped a'));
    expect(drops).toEqual([
      '[twitch] EventSub: dropped a message: not JSON',
      expect.stringMatching(/dropped a message: metadata: .*Object/),
      expect.stringMatching(/dropped a message: metadata\.message_type: must be one of session_welcome/),
      expect.stringMatching(/dropped a message: session_welcome: payload\.session: /),
      expect.stringMatching(/dropped a notification: channel\.cheer: event\.bits: /),
    ]);
    expect(states.map((s) => s.state)).toEqual(['connecting', 'connected']);
    expect(fake.clients).toBe(1);
  });

  it('stop() closes every connection and cancels a pending reconnect', async () => {
    const clock = new FakeTimers();
    const eventSub = connect({ timers: clock });
    await connected();
    fake.dropConnections();
    await waitFor(() => states.at(-1)?.state === 'reconnecting', 3000, 'reconnecting');
    expect(clock.nextDelay()).toBe(1000); // the reconnect, due in 1 s
    await eventSub.stop();
    expect(eventSub.subscribed().size).toBe(0);
    // The reconnect was cancelled: nothing is left to fire, and well past its time nothing connects.
    expect(clock.size).toBe(0);
    clock.advance(60_000);
    expect(fake.clients).toBe(0);
    expect(states.at(-1)?.state).toBe('reconnecting');

    events = [];
    states = [];
    const again = connect();
    await connected();
    await again.stop();
    await waitFor(() => fake.clients === 0, 3000, 'closed');
    expect(fake.activeSubscriptions()).toHaveLength(0);
  });
});
