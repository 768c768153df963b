// The TikFinity event feed in the real daemon: off by default, turned on and off live from the settings,
// every event in TikTok-Live-Connector's names and fields plus `platform`, receive-only, ten sockets per
// address, and a port in use said in words while the daemon goes on.
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { describeDaemonStatus } from '../../daemon/src/cli/status-text.js';
import type { DaemonStatus, TikfinityFeedStatus } from '../../shared/protocol/index.js';
import { api, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { freePort } from '../support/local-stack.js';
import { UpgradeRefused } from '../support/ws.js';

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

/** A game's client of the feed: every frame it received, in order, and how it closed. */
interface FeedClient {
  ws: WebSocket;
  frames: Frame[];
  next(event: string): Promise<Frame>;
  closed: Promise<{ code: number; reason: string }>;
}

const open: WebSocket[] = [];
let daemon: TestDaemon | undefined;
let blocker: Server | undefined;

afterEach(async () => {
  for (const ws of open.splice(0)) ws.terminate();
  await daemon?.stop();
  daemon = undefined;
  await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
  blocker = undefined;
});

function connectFeed(port: number, origin?: string): Promise<FeedClient> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, origin ? { origin } : {});
  open.push(ws);
  const frames: Frame[] = [];
  let read = 0;
  const waiting: (() => void)[] = [];
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Frame);
    for (const wake of waiting.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const client: FeedClient = {
    ws,
    frames,
    closed,
    async next(event) {
      const deadline = Date.now() + 3000;
      for (;;) {
        const index = frames.findIndex((f, i) => i >= read && f.event === event);
        const found = frames[index];
        if (found) {
          read = index + 1;
          return found;
        }
        if (Date.now() > deadline) throw new Error(`no ${event} frame in time`);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => {
      reject(new UpgradeRefused(res.statusCode ?? 0, res.headers));
      res.resume();
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

async function feedStatus(d: TestDaemon): Promise<TikfinityFeedStatus | undefined> {
  const body = (await (await fetch(`${d.url}/status`)).json()) as { tikfinityFeed?: TikfinityFeedStatus };
  return body.tikfinityFeed;
}

async function setFeed(d: TestDaemon, feed: { enabled: boolean; port: number }): Promise<void> {
  const current = (await (await api(d, 'GET', '/api/settings')).json()) as Record<string, unknown>;
  const res = await api(d, 'PUT', '/api/settings', { ...current, tikfinityFeed: feed });
  expect(res.status).toBe(200);
}

async function startWithFeed(port: number): Promise<TestDaemon> {
  const d = await startTestDaemon();
  daemon = d;
  await setFeed(d, { enabled: true, port });
  await waitFor(async () => (await feedStatus(d))?.state === 'listening', 3000, 'the feed to listen');
  return d;
}

async function post(d: TestDaemon, event: unknown, query = ''): Promise<void> {
  const res = await api(d, 'POST', `/api/events${query}`, event);
  expect(res.status).toBe(202);
}

const viewer = { uniqueId: 'rosefan', nickname: 'Rose Fan', profilePictureUrl: 'https://p16.example/a.webp' };

describe('the TikFinity event feed', () => {
  it('is off by default: nothing listens on its port and /status leaves it out', async () => {
    const port = await freePort();
    daemon = await startTestDaemon();
    const d = daemon;
    expect((await (await api(d, 'GET', '/api/settings')).json()) as unknown).toMatchObject({
      tikfinityFeed: { enabled: false, port: 21213 },
    });
    expect(await feedStatus(d)).toBeUndefined();
    await expect(connectFeed(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('starts live when enabled and sends every TikTok event by its TikTok-Live-Connector name and fields', async () => {
    const port = await freePort();
    const d = await startWithFeed(port);
    expect(await feedStatus(d)).toEqual({ state: 'listening', port, clients: 0 });
    // Any Origin: the games are local files and pages of their own.
    const game = await connectFeed(port, 'null');
    await waitFor(async () => (await feedStatus(d))?.clients === 1, 3000, 'the client in /status');

    await post(d, {
      type: 'gift',
      platform: 'tiktok',
      user: viewer,
      data: { giftName: 'Rose', repeatCount: 5, diamondCount: 1, giftId: 5655 },
    });
    const gift = await game.next('gift');
    expect(gift.data).toMatchObject({
      platform: 'tiktok',
      uniqueId: 'rosefan',
      nickname: 'Rose Fan',
      profilePictureUrl: 'https://p16.example/a.webp',
      giftId: 5655,
      giftName: 'Rose',
      repeatCount: 5,
      diamondCount: 1,
      repeatEnd: true,
      giftType: 1,
    });

    await post(d, { type: 'chat', platform: 'tiktok', user: viewer, data: { comment: 'hello game' } });
    const chat = await game.next('chat');
    expect(chat.data).toMatchObject({
      platform: 'tiktok',
      uniqueId: 'rosefan',
      nickname: 'Rose Fan',
      comment: 'hello game',
      profilePictureUrl: 'https://p16.example/a.webp',
    });
    expect(typeof chat.data.msgId).toBe('string');
    expect(chat.data.msgId).not.toBe(gift.data.msgId);

    await post(d, {
      type: 'like',
      platform: 'tiktok',
      user: viewer,
      data: { likeCount: 15, totalLikeCount: 1200 },
    });
    expect((await game.next('like')).data).toMatchObject({
      platform: 'tiktok',
      uniqueId: 'rosefan',
      likeCount: 15,
      totalLikeCount: 1200,
    });

    for (const type of ['follow', 'share', 'subscribe'] as const) {
      await post(d, { type, platform: 'tiktok', user: viewer, data: {} });
      expect((await game.next(type)).data).toMatchObject({
        platform: 'tiktok',
        uniqueId: 'rosefan',
        nickname: 'Rose Fan',
      });
    }

    await post(d, {
      type: 'viewer',
      platform: 'tiktok',
      user: { uniqueId: 'streamer', nickname: 'Streamer' },
      data: { viewerCount: 321 },
    });
    expect((await game.next('roomUser')).data).toMatchObject({ platform: 'tiktok', viewerCount: 321 });
    // Nothing else was sent: one frame per event, each by its name.
    expect(game.frames.map((f) => f.event)).toEqual([
      'gift',
      'chat',
      'like',
      'follow',
      'share',
      'subscribe',
      'roomUser',
    ]);
  });

  it("sends Twitch's and Kick's events to the same games with their platform; test events too, caught-up ones not", async () => {
    const port = await freePort();
    const d = await startWithFeed(port);
    const game = await connectFeed(port);
    await waitFor(async () => (await feedStatus(d))?.clients === 1, 3000, 'the client in /status');

    // A cheer of 100 bits, as the Twitch source gives it: a gift of Bits.
    await post(d, {
      type: 'gift',
      platform: 'twitch',
      user: { uniqueId: 'cheerer', nickname: 'Cheerer' },
      data: { giftName: 'Bits', repeatCount: 100, diamondCount: 1 },
    });
    expect((await game.next('gift')).data).toMatchObject({
      platform: 'twitch',
      uniqueId: 'cheerer',
      giftName: 'Bits',
      repeatCount: 100,
      diamondCount: 1,
      giftId: 0,
      repeatEnd: true,
    });
    // Gifted subs on Kick, as the Kick source gives them.
    await post(d, {
      type: 'subscribe',
      platform: 'kick',
      user: { uniqueId: 'gifter', nickname: 'Gifter' },
      data: { gifted: true, giftCount: 5 },
    });
    expect((await game.next('subscribe')).data).toMatchObject({
      platform: 'kick',
      uniqueId: 'gifter',
      giftCount: 5,
    });

    // Kicks sent on Kick, as Kick's own events give them: a gift worth its Kicks.
    await post(d, {
      type: 'gift',
      platform: 'kick',
      user: { uniqueId: 'kicker', nickname: 'Kicker' },
      data: { giftName: 'Rage Quit', repeatCount: 1, diamondCount: 100 },
    });
    expect((await game.next('gift')).data).toMatchObject({
      platform: 'kick',
      uniqueId: 'kicker',
      giftName: 'Rage Quit',
      repeatCount: 1,
      diamondCount: 100,
      repeatEnd: true,
    });

    // A test event reaches the games (streamers try them out with it)…
    await post(d, { type: 'follow', platform: 'tiktok', user: viewer, data: {} }, '?test=true');
    expect((await game.next('follow')).data).toMatchObject({ uniqueId: 'rosefan' });
    // …an event caught up after an hour does not; the next live one shows nothing came between.
    await post(
      d,
      { type: 'chat', platform: 'kick', user: viewer, data: { comment: 'an hour ago' } },
      `?at=${Date.now() - 3_600_000}`,
    );
    await post(d, { type: 'chat', platform: 'kick', user: viewer, data: { comment: 'now' } });
    expect((await game.next('chat')).data).toMatchObject({ platform: 'kick', comment: 'now' });
    expect(game.frames.map((f) => f.event)).toEqual(['gift', 'subscribe', 'gift', 'follow', 'chat']);
  });

  it('is receive-only: a frame from a client closes it with 1008', async () => {
    const port = await freePort();
    const d = await startWithFeed(port);
    const game = await connectFeed(port);
    game.ws.send(JSON.stringify({ event: 'chat', data: { comment: 'spoofed' } }));
    expect((await game.closed).code).toBe(1008);
    // What it tried to send went nowhere: another client sees only the live event after it.
    const other = await connectFeed(port);
    await post(d, { type: 'share', platform: 'tiktok', user: viewer, data: {} });
    await other.next('share');
    expect(other.frames.map((f) => f.event)).toEqual(['share']);
  });

  it('takes at most ten sockets from one address: the eleventh is refused', async () => {
    const port = await freePort();
    const d = await startWithFeed(port);
    const ten = await Promise.all(Array.from({ length: 10 }, () => connectFeed(port)));
    await waitFor(async () => (await feedStatus(d))?.clients === 10, 3000, 'ten clients');
    await expect(connectFeed(port)).rejects.toMatchObject({ status: 429 });
    // The ten still get events; one closing makes room for another.
    await post(d, { type: 'like', platform: 'tiktok', user: viewer, data: { likeCount: 1 } });
    await Promise.all(ten.map((c) => c.next('like')));
    ten[0]?.ws.close();
    await ten[0]?.closed;
    await waitFor(async () => (await feedStatus(d))?.clients === 9, 3000, 'nine clients');
    await expect(connectFeed(port)).resolves.toBeDefined();
  });

  it('says in words when its port is in use, and the daemon keeps running', async () => {
    const port = await freePort();
    const taken = createServer();
    blocker = taken;
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', () => resolve()));
    const d = await startTestDaemon();
    daemon = d;
    await setFeed(d, { enabled: true, port });
    await waitFor(async () => (await feedStatus(d))?.state === 'refused', 3000, 'the feed refused');
    const status = await feedStatus(d);
    expect(status).toMatchObject({ state: 'refused', port, clients: 0 });
    expect(status?.detail).toContain(`port ${port} is in use`);
    expect(d.logs.some((l) => l.includes('event feed is off') && l.includes(`port ${port} is in use`))).toBe(
      true,
    );
    // `overlay-daemon status` says it in the same words.
    const words = describeDaemonStatus(
      (await (await fetch(`${d.url}/status`)).json()) as DaemonStatus,
      d.url,
    );
    expect(words).toMatch(new RegExp(`TikFinity feed: +off: port ${port} is in use`));
    // The daemon still takes events and answers.
    await post(d, { type: 'follow', platform: 'tiktok', user: viewer, data: {} });
    expect((await fetch(`${d.url}/status`)).status).toBe(200);
    // Freed and saved again (another port here), the feed listens.
    const other = await freePort();
    await setFeed(d, { enabled: true, port: other });
    await waitFor(async () => (await feedStatus(d))?.state === 'listening', 3000, 'the feed on the new port');
    await expect(connectFeed(other)).resolves.toBeDefined();
  });

  it('closes its sockets and stops listening when disabled', async () => {
    const port = await freePort();
    const d = await startWithFeed(port);
    const games = await Promise.all([connectFeed(port), connectFeed(port)]);
    await setFeed(d, { enabled: false, port });
    for (const game of games) expect((await game.closed).code).toBe(1001);
    await waitFor(async () => (await feedStatus(d)) === undefined, 3000, 'the feed gone from /status');
    await expect(connectFeed(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('closes its sockets and lets the port go when the daemon stops', async () => {
    const port = await freePort();
    const d = await startWithFeed(port);
    const game = await connectFeed(port);
    await d.stop();
    daemon = undefined;
    expect((await game.closed).code).toBe(1001);
    const again = createServer();
    blocker = again;
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', () => resolve());
    });
  });
});
