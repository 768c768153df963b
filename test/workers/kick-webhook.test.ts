// POST /kick/webhook inside workerd, with Kick's public key served by the Kick stand-in and deliveries signed
// by the webhook sender stand-in: each signature and timestamp case, bad and oversized bodies, repeats, types
// we do not map, channels no member links, each mapping, and that nothing is stored whenever a delivery is
// refused. (This is the only Worker suite that sets the stand-in's public key.)
import { env } from 'cloudflare:workers';
import * as v from 'valibot';
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { KickEventsFrame, mapKickWebhook } from '../../shared/protocol/kick.js';
import { type KeptKickEvent, kickChannelOf } from '../../workers/src/kick/channel.js';
import { saveKickLink } from '../../workers/src/kick/tokens.js';
import {
  type KickWebhookSender,
  kickSamples,
  newKickWebhookSender,
  type SampleUser,
  sampleOfEachType,
} from '../support/fakes/kick-webhook-signer.js';
import { gatekeeper, WARM_UP_TIMEOUT_MS } from './helpers/gatekeeper.js';
import { member, openSocket, type Socket } from './helpers/relay-sockets.js';

const MIB = 1024 * 1024;
let kick: KickWebhookSender;

/** How many times the Kick stand-in has served its public key (to every Worker suite). */
async function keyFetches(): Promise<number> {
  const res = await fetch(`${inject('kickBase')}/__fake/public-key`);
  return ((await res.json()) as { fetches: number }).fetches;
}

/** Base64 of `n` random bytes: a signature of that length that no key made. */
function randomSignature(n: number): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(n))));
}

/**
 * Kick's key is asked for at most once a minute: a fake clock a minute past any time this file has used
 * (the tests before may have moved it ahead).
 */
let latestClock = 0;
function aMinuteLater(): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  latestClock = Math.max(Date.now(), latestClock) + 61_000;
  vi.setSystemTime(latestClock);
}

async function serveKey(pem: string): Promise<void> {
  const res = await fetch(`${inject('kickBase')}/__fake/public-key`, { method: 'PUT', body: pem });
  if (res.status !== 204) throw new Error(`the Kick stand-in refused the key: ${res.status}`);
}

/** A member whose Kick channel is linked, with a broadcaster of their own. */
async function linkedMember(
  label: string,
): Promise<{ userId: string; token: string; broadcaster: SampleUser }> {
  const { userId, token } = await member(label);
  const id = 100_000_000 + Math.floor(Math.random() * 800_000_000);
  const broadcaster = { user_id: id, username: `Streamer_${id}`, channel_slug: `streamer-${id}` };
  await saveKickLink(
    env,
    userId,
    { broadcasterUserId: id, slug: broadcaster.channel_slug },
    { accessToken: 'a', refreshToken: 'r', expiresAt: Date.now() + 3_600_000, scope: 'events:subscribe' },
  );
  return { userId, token, broadcaster };
}

function post(delivery: { headers: Record<string, string>; body: BodyInit }): Promise<Response> {
  return gatekeeper('/kick/webhook', { method: 'POST', headers: delivery.headers, body: delivery.body });
}

async function deliver(
  type: string,
  payload: unknown,
  options?: Parameters<KickWebhookSender['signedDelivery']>[2],
  sender = kick,
): Promise<Response> {
  return post(await sender.signedDelivery(type, payload, options));
}

/** What the member's channel keeps (the RPC type of `event` does not survive serialisation typing). */
const kept = async (userId: string) =>
  (await kickChannelOf(env, userId).kept()) as unknown as KeptKickEvent[];
const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

beforeAll(async () => {
  kick = await newKickWebhookSender();
  await serveKey(kick.publicKeyPem);
  await kickChannelOf(env, 'warm-up').kept();
}, WARM_UP_TIMEOUT_MS);

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('POST /kick/webhook: signatures', () => {
  it('a delivery signed with Kick’s key is stored with the member’s next seq', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-good');
    const res = await deliver('chat.message.sent', kickSamples.chat(broadcaster));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'stored', seq: 1 });
    expect(await kept(userId)).toMatchObject([
      { seq: 1, event: { type: 'chat', platform: 'kick', data: { comment: 'Hello [emote:37226:KEKW]' } } },
    ]);
  });

  it('a changed body, a signature that is not base64, or none at all: 401, nothing stored', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-bad-signature');
    const good = await kick.signedDelivery('chat.message.sent', kickSamples.chat(broadcaster), {
      messageId: 'd-tampered',
    });
    const tampered = { headers: good.headers, body: good.body.replace('Hello', 'Hullo') };
    expect((await post(tampered)).status).toBe(401);
    const notBase64 = {
      headers: { ...good.headers, 'Kick-Event-Signature': 'not base64!' },
      body: good.body,
    };
    expect((await post(notBase64)).status).toBe(401);
    const { 'Kick-Event-Signature': _, ...unsigned } = good.headers;
    const res = await post({ headers: unsigned, body: good.body });
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe('unauthenticated');
    expect(await kept(userId)).toEqual([]);
    // Nothing of the refused ones was remembered either: the genuine delivery with the same id is stored.
    expect(await (await post(good)).json()).toEqual({ status: 'stored', seq: 1 });
  });

  it('another key: 401; after Kick rotates its key, the new key is fetched once and verifies', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-rotation');
    const rotated = await newKickWebhookSender();
    // The key is asked for at most once a minute: each step below is a minute after the one before.
    aMinuteLater();
    const first = await deliver(
      'channel.followed',
      kickSamples.follow(broadcaster),
      { messageId: 'd-r1' },
      rotated,
    );
    expect(first.status).toBe(401);
    expect(await kept(userId)).toEqual([]);
    const fetches = vi.spyOn(globalThis, 'fetch');
    await serveKey(rotated.publicKeyPem);
    aMinuteLater();
    try {
      fetches.mockClear();
      const res = await deliver(
        'channel.followed',
        kickSamples.follow(broadcaster),
        { messageId: 'd-r1' },
        rotated,
      );
      expect(res.status).toBe(200);
      const fetched = fetches.mock.calls.filter(([url]) => String(url).endsWith('/public/v1/public-key'));
      expect(fetched).toHaveLength(1);
      // The old key no longer verifies.
      expect((await deliver('channel.followed', kickSamples.follow(broadcaster))).status).toBe(401);
      expect((await kept(userId)).map((e) => e.seq)).toEqual([1]);
    } finally {
      await serveKey(kick.publicKeyPem);
    }
    aMinuteLater();
    // Back to the first key (fetched again on the first failure).
    expect((await deliver('channel.followed', kickSamples.follow(broadcaster))).status).toBe(200);
  });

  it('100 forged deliveries fetch Kick’s key at most once a minute, and none of another length ever does', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-forged');
    // A forger's own RSA-2048 key: its signatures have the length of Kick's.
    const forger = await newKickWebhookSender();
    expect((await deliver('channel.followed', kickSamples.follow(broadcaster))).status).toBe(200);
    // The key is cached, its last fetch more than a minute ago.
    aMinuteLater();
    const before = await keyFetches();
    for (let i = 0; i < 100; i++) {
      const res = await deliver('channel.followed', kickSamples.follow(broadcaster), {}, forger);
      expect(res.status).toBe(401);
    }
    expect((await keyFetches()) - before).toBeLessThanOrEqual(1);

    // No RSA key of Kick's sizes makes a signature of 100, 255 or 257 bytes: no fetch, however long it has been.
    aMinuteLater();
    const afterForged = await keyFetches();
    for (const length of [100, 255, 257]) {
      const delivery = await kick.signedDelivery('channel.followed', kickSamples.follow(broadcaster));
      delivery.headers['Kick-Event-Signature'] = randomSignature(length);
      expect((await post(delivery)).status, String(length)).toBe(401);
    }
    expect(await keyFetches()).toBe(afterForged);

    // A minute on, one forged delivery of the key's length may ask Kick again, once.
    aMinuteLater();
    for (let i = 0; i < 10; i++) {
      expect((await deliver('channel.followed', kickSamples.follow(broadcaster), {}, forger)).status).toBe(
        401,
      );
    }
    expect((await keyFetches()) - afterForged).toBe(1);
    expect(await kept(userId)).toHaveLength(1);
  });

  it('Kick’s key cannot be fetched: 502 (Kick retries), nothing stored', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-no-key');
    const stranger = await newKickWebhookSender();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    await serveKey('');
    aMinuteLater();
    try {
      const res = await deliver('channel.followed', kickSamples.follow(broadcaster), {}, stranger);
      expect(res.status).toBe(502);
      expect(logged.mock.calls.flat().join(' ')).toMatch(/public key/);
    } finally {
      await serveKey(kick.publicKeyPem);
    }
    expect(await kept(userId)).toEqual([]);
  });

  it('a timestamp more than 5 minutes old or ahead, or not a timestamp: 401, nothing stored', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-timestamps');
    const now = Date.now();
    for (const timestamp of [
      new Date(now - 5 * 60_000 - 2000),
      new Date(now + 5 * 60_000 + 2000),
      'yesterday',
      '2025-01-14 16:08:06',
    ]) {
      const res = await deliver('channel.followed', kickSamples.follow(broadcaster), {
        messageId: 'd-time',
        timestamp,
      });
      expect(res.status, String(timestamp)).toBe(401);
    }
    expect(await kept(userId)).toEqual([]);
    // Four minutes either way is fine (clocks drift, deliveries queue).
    const late = await deliver('channel.followed', kickSamples.follow(broadcaster), {
      messageId: 'd-time',
      timestamp: new Date(now - 4 * 60_000),
    });
    expect(late.status).toBe(200);
    const early = await deliver('channel.followed', kickSamples.follow(broadcaster), {
      timestamp: new Date(now + 4 * 60_000),
    });
    expect(early.status).toBe(200);
  });
});

describe('POST /kick/webhook: bodies', () => {
  it('a signed body that is not JSON, or does not fit its type: 400, nothing stored', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-bad-body');
    const notJson = await deliver('chat.message.sent', null, { rawBody: '{"message_id": ' });
    expect(notJson.status).toBe(400);
    expect(await errorCode(notJson)).toBe('bad_request');
    const { sender: _, ...noSender } = kickSamples.chat(broadcaster);
    const misfit = await deliver('chat.message.sent', noSender);
    expect(misfit.status).toBe(400);
    expect(((await misfit.json()) as { error: { message: string } }).error.message).toMatch(/sender/);
    const wrongType = await deliver('kicks.gifted', kickSamples.follow(broadcaster));
    expect(wrongType.status).toBe(400);
    expect(await kept(userId)).toEqual([]);
  });

  it('a body over 1 MiB: 413, declared or streamed, nothing stored; exactly 1 MiB is taken', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-size');
    const json = JSON.stringify(kickSamples.follow(broadcaster));
    const exact = `${json}${' '.repeat(MIB - json.length)}`;
    const over = `${exact} `;
    const declared = await kick.signedDelivery('channel.followed', null, { rawBody: over });
    expect((await post(declared)).status).toBe(413);
    const streamed = await kick.signedDelivery('channel.followed', null, {
      rawBody: over,
      messageId: 'd-big',
    });
    const bytes = new TextEncoder().encode(over);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024));
        controller.close();
      },
    });
    const res = await gatekeeper('/kick/webhook', { method: 'POST', headers: streamed.headers, body });
    expect(res.status).toBe(413);
    expect(await kept(userId)).toEqual([]);
    const fits = await kick.signedDelivery('channel.followed', null, { rawBody: exact, messageId: 'd-big' });
    expect((await post(fits)).status).toBe(200);
    expect(await kept(userId)).toHaveLength(1);
  });
});

describe('POST /kick/webhook: answered 200 without storing', () => {
  it('a delivery id already stored: 200, stored once', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-repeat');
    const delivery = await kick.signedDelivery('channel.followed', kickSamples.follow(broadcaster));
    expect(await (await post(delivery)).json()).toEqual({ status: 'stored', seq: 1 });
    const again = await post(delivery);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: 'duplicate' });
    // Kick retries with the same id and a new timestamp (a new signature): still a repeat.
    const retried = await deliver('channel.followed', kickSamples.follow(broadcaster), {
      messageId: delivery.headers['Kick-Event-Message-Id'],
    });
    expect(await retried.json()).toEqual({ status: 'duplicate' });
    expect(await kept(userId)).toHaveLength(1);
  });

  it('a verified event of a type we do not map: 200, nothing stored', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-unmapped');
    const res = await deliver('livestream.metadata.updated', kickSamples.metadataUpdated(broadcaster));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ignored' });
    expect(await kept(userId)).toEqual([]);
  });

  it('a channel no member links: 200, nothing stored, a log line', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const nobody = { user_id: 999_999_999, username: 'Nobody', channel_slug: 'nobody' };
    const res = await deliver('chat.message.sent', kickSamples.chat(nobody));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ignored', reason: 'no member links this channel' });
    expect(log.mock.calls.flat().join(' ')).toMatch(/999999999/);
  });

  it('other methods: 405 with Allow', async () => {
    const res = await gatekeeper('/kick/webhook');
    expect(res.status).toBe(405);
    expect(res.headers.get('Allow')).toBe('POST');
  });
});

describe('POST /kick/webhook: what is kept', () => {
  it('each type is kept as it maps, numbered in the order it came', async () => {
    const { userId, broadcaster } = await linkedMember('kick-hook-mapping');
    const samples = sampleOfEachType(broadcaster);
    for (const [type, body] of samples) expect((await deliver(type, body)).status, type).toBe(200);
    const events = await kept(userId);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(events.map((e) => e.event)).toEqual(samples.map(([type, body]) => mapKickWebhook(type, body)));
    expect(events.map((e) => e.event.type)).toEqual([
      'chat',
      'follow',
      'subscribe',
      'subscribe',
      'subscribe',
      'gift',
      'livestream',
    ]);
  });

  it('each frame carries `at`: when Kick says the event happened, else when it came; never later than that', async () => {
    const { token, broadcaster } = await linkedMember('kick-hook-at');
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = Date.now();
    const opened = await openSocket('/kick/events', { Authorization: `Bearer ${token}` });
    if (opened instanceof Response) throw new Error(`feed refused: ${opened.status}`);
    const socket: Socket = opened;
    // Kick delivering a chat message three minutes after it was sent (a retry).
    const sentAt = new Date(now - 3 * 60_000);
    await deliver('chat.message.sent', {
      ...kickSamples.chat(broadcaster),
      created_at: sentAt.toISOString(),
    });
    // A follow carries no time: it happened when it came.
    await deliver('channel.followed', kickSamples.follow(broadcaster));
    // A time ahead of the Gatekeeper's clock is taken as the receipt.
    const ahead = new Date(now + 2 * 60_000).toISOString();
    await deliver('kicks.gifted', { ...kickSamples.kicksGifted(broadcaster), created_at: ahead });
    // A stream that ended: when it ended.
    const endedAt = '2026-01-01T15:00:00+11:00';
    await deliver('livestream.status.updated', {
      ...kickSamples.livestreamStatus(broadcaster, false),
      started_at: '2026-01-01T11:00:00+11:00',
      ended_at: endedAt,
    });
    const expected = [
      { seq: 1, at: sentAt.getTime() },
      { seq: 2, at: now },
      { seq: 3, at: now },
      { seq: 4, at: Date.parse(endedAt) },
    ];
    const live = await socket.take(4);
    expect(live.map((f) => v.parse(KickEventsFrame, f))).toMatchObject(expected);
    // The replay says the same.
    const replay = await openSocket('/kick/events?after=0', { Authorization: `Bearer ${token}` });
    if (replay instanceof Response) throw new Error(`feed refused: ${replay.status}`);
    expect((await replay.take(4)).map((f) => v.parse(KickEventsFrame, f))).toMatchObject(expected);
    socket.close();
    replay.close();
  });

  it('a stored delivery reaches the daemon’s open feed at once', async () => {
    const { token, broadcaster } = await linkedMember('kick-hook-live');
    const opened = await openSocket('/kick/events', { Authorization: `Bearer ${token}` });
    if (opened instanceof Response) throw new Error(`feed refused: ${opened.status}`);
    const socket: Socket = opened;
    vi.useFakeTimers({ toFake: ['Date'] });
    await deliver('kicks.gifted', {
      ...kickSamples.kicksGifted(broadcaster, 100),
      created_at: new Date(Date.now() - 1000).toISOString(),
    });
    expect(await socket.next()).toEqual({
      type: 'event',
      seq: 1,
      at: Date.now() - 1000,
      event: {
        type: 'gift',
        platform: 'kick',
        user: { uniqueId: 'viewer-one', nickname: 'Viewer_One' },
        data: { giftName: 'Rage Quit', repeatCount: 1, diamondCount: 100 },
      },
    });
    socket.close();
  });
});
