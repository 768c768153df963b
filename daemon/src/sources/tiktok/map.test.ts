import { describe, expect, it } from 'vitest';
import { parseWith, StreamEvent } from '../../../../shared/protocol/index.js';
import documented from './fixtures/tiktok-documented.json' with { type: 'json' };
import v3 from './fixtures/tiktok-v3.json' with { type: 'json' };
import {
  LikeCounter,
  messageId,
  normaliseChat,
  normaliseFollow,
  normaliseGift,
  normaliseShare,
  normaliseSubscribe,
  normaliseViewer,
} from './map.js';

const host = { uniqueId: 'streamer', nickname: 'streamer' };

describe('normalising the 2.5 runtime (v3 proto) shapes', () => {
  it("keeps the gift's picture when it is an https URL, from either shape", () => {
    const v3Shape = normaliseGift({
      ...v3.giftLion,
      gift: {
        ...v3.giftLion.gift,
        image: { url: ['https://p16.example/lion.webp', 'https://p19.example/lion.webp'] },
      },
    });
    expect(v3Shape?.event.data).toMatchObject({ giftPictureUrl: 'https://p16.example/lion.webp' });
    const documentedShape = normaliseGift({
      ...documented.giftUniverse,
      giftDetails: {
        ...documented.giftUniverse.giftDetails,
        giftImage: { giftPictureUrl: 'https://p16.example/universe.webp' },
      },
    });
    expect(documentedShape?.event.data).toMatchObject({
      giftPictureUrl: 'https://p16.example/universe.webp',
    });
    const plain = normaliseGift({
      ...v3.giftLion,
      gift: { ...v3.giftLion.gift, image: { url: ['http://p16.example/lion.webp'] } },
    });
    expect(plain?.event.data).not.toHaveProperty('giftPictureUrl');
  });

  it('reads a gift with its name, count, diamonds and sender', () => {
    const gift = normaliseGift(v3.giftLion);
    expect(gift?.event).toEqual({
      type: 'gift',
      platform: 'tiktok',
      user: { uniqueId: 'bigspender', nickname: 'Big Spender' },
      data: { giftName: 'Lion', repeatCount: 1, diamondCount: 29999, giftId: 6369 },
    });
    expect(gift?.streakable).toBe(false);
  });

  it('marks a streakable gift and its end, and keeps the avatar', () => {
    const start = normaliseGift(v3.giftRoseStreakStart);
    const end = normaliseGift(v3.giftRoseStreakEnd);
    expect(start).toMatchObject({ streakable: true, streakEnded: false });
    expect(end).toMatchObject({ streakable: true, streakEnded: true });
    expect(end?.event.data.repeatCount).toBe(99);
    expect(start?.streakKey).toBe(end?.streakKey);
    expect(start?.event.user.profilePictureUrl).toBe('https://p16-sign.tiktokcdn.com/rosa.webp');
  });

  it('reads chat, follow, share, subscribe and viewer messages', () => {
    expect(normaliseChat(v3.chat)).toEqual({
      type: 'chat',
      platform: 'tiktok',
      user: { uniqueId: 'chatty', nickname: 'Chatty' },
      data: { comment: 'Hello from the chat! !dance' },
    });
    expect(normaliseFollow(v3.follow)?.user.uniqueId).toBe('newfollower');
    expect(normaliseShare(v3.share)).toEqual({
      type: 'share',
      platform: 'tiktok',
      user: { uniqueId: 'sharer', nickname: 'Sharer' },
      data: {},
    });
    expect(normaliseSubscribe(v3.subNotify)).toEqual({
      type: 'subscribe',
      platform: 'tiktok',
      user: { uniqueId: 'subscriber', nickname: 'Subscriber' },
      data: { subMonth: 3 },
    });
    expect(normaliseViewer(v3.roomUser, host)).toEqual({
      type: 'viewer',
      platform: 'tiktok',
      user: host,
      data: { viewerCount: 1234 },
    });
  });

  it('finds the message id in common.msgId', () => {
    expect(messageId(v3.chat)).toBe('7391000000000000400');
    expect(messageId({})).toBeUndefined();
  });
});

describe('normalising the documented shapes', () => {
  it('reads every kind the README documents', () => {
    expect(normaliseGift(documented.giftUniverse)?.event.data).toEqual({
      giftName: 'TikTok Universe',
      repeatCount: 1,
      diamondCount: 44999,
      giftId: 7168,
    });
    expect(normaliseGift(documented.giftRoseStreakEnd)).toMatchObject({
      streakable: true,
      streakEnded: true,
    });
    expect(normaliseChat(documented.chat)?.data.comment).toBe('hi there');
    expect(normaliseFollow(documented.follow)?.user).toEqual({
      uniqueId: 'newfollower',
      nickname: 'New Follower',
    });
    expect(normaliseShare(documented.share)?.type).toBe('share');
    expect(normaliseSubscribe(documented.subNotify)?.data).toEqual({});
    expect(normaliseViewer(documented.roomUser, host)?.data.viewerCount).toBe(321);
    expect(new LikeCounter().next(documented.like)?.data).toEqual({ likeCount: 8, totalLikeCount: 500 });
  });

  it('produces only events that pass the protocol schema', () => {
    const likes = new LikeCounter();
    const events = [
      ...Object.values(documented).map((p) => [normaliseGift(p)?.event, normaliseChat(p), likes.next(p)]),
    ].flat();
    for (const event of events.filter((e) => e !== undefined))
      expect(parseWith(StreamEvent, event).ok).toBe(true);
  });
});

describe('untrusted payloads', () => {
  it('drops messages without a sender and never throws on junk', () => {
    for (const junk of [null, undefined, 42, 'gift', [], {}, { user: null }, { user: { nickname: 'x' } }]) {
      expect(normaliseGift(junk)).toBeUndefined();
      expect(normaliseChat(junk)).toBeUndefined();
      expect(normaliseFollow(junk)).toBeUndefined();
      expect(new LikeCounter().next(junk)).toBeUndefined();
      expect(normaliseViewer(junk, host)).toBeUndefined();
    }
  });

  it('clips over-long text to the schema limits and names unnamed gifts', () => {
    const chat = normaliseChat({
      user: { uniqueId: 'u'.repeat(300), nickname: 'n' },
      comment: 'c'.repeat(2000),
    });
    expect(chat?.user.uniqueId).toHaveLength(100);
    expect(chat?.data.comment).toHaveLength(500);
    expect(normaliseGift({ user: { uniqueId: 'a' }, giftId: 77 })?.event.data.giftName).toBe('Gift 77');
  });

  it('ignores inherited and non-http values', () => {
    const user = Object.create({ uniqueId: 'inherited' });
    expect(normaliseChat({ user, comment: 'x' })).toBeUndefined();
    const chat = normaliseChat({
      user: { uniqueId: 'a', profilePictureUrl: 'javascript:alert(1)' },
      comment: 'x',
    });
    expect(chat?.user).toEqual({ uniqueId: 'a', nickname: 'a' });
  });
});

describe('LikeCounter', () => {
  const like = (count: number | undefined, total: number | string | undefined) => ({
    user: { uniqueId: 'fan', nickname: 'Fan' },
    ...(count === undefined ? {} : { count }),
    ...(total === undefined ? {} : { total }),
  });

  it('uses the message count first, then the delta of totals', () => {
    const likes = new LikeCounter();
    expect(likes.next(like(5, 100))?.data.likeCount).toBe(5);
    // TikTok skipped messages in between: the total says 40 more arrived.
    expect(likes.next(like(3, '140'))?.data).toEqual({ likeCount: 40, totalLikeCount: 140 });
  });

  it('never emits a negative or zero count when totals go backwards', () => {
    const likes = new LikeCounter();
    likes.next(like(5, 200));
    expect(likes.next(like(5, 180))).toBeUndefined();
    expect(likes.next(like(5, 200))).toBeUndefined();
    expect(likes.next(like(2, 202))?.data.likeCount).toBe(2);
  });

  it('falls back to the message count when totals are missing', () => {
    const likes = new LikeCounter();
    expect(likes.next(like(7, undefined))?.data).toEqual({ likeCount: 7 });
    expect(likes.next(like(4, undefined))?.data).toEqual({ likeCount: 4 });
    expect(likes.next(like(0, undefined))).toBeUndefined();
  });

  it('starts again after reset (a new live restarts its total)', () => {
    const likes = new LikeCounter();
    likes.next(like(5, 5000));
    likes.reset();
    expect(likes.next(like(6, 6))?.data.likeCount).toBe(6);
  });
});
