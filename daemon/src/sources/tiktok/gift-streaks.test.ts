import { describe, expect, it } from 'vitest';
import type { StreamEventOf } from '../../../../shared/protocol/index.js';
import { FakeTimers } from '../../../../test/support/fake-timers.js';
import { GiftStreaks } from './gift-streaks.js';
import type { NormalisedGift } from './map.js';

type Gift = StreamEventOf<'gift'>;

function gift(
  repeatCount: number,
  opts: { end?: boolean; streakable?: boolean; user?: string; name?: string } = {},
) {
  const user = opts.user ?? 'rosa';
  const name = opts.name ?? 'Rose';
  return {
    event: {
      type: 'gift',
      platform: 'api',
      user: { uniqueId: user, nickname: user },
      data: { giftName: name, repeatCount, diamondCount: 1 },
    },
    streakable: opts.streakable ?? true,
    streakEnded: opts.end ?? false,
    streakKey: `${user}\u0000${name}`,
  } satisfies NormalisedGift;
}

function setup(timeoutMs = 5000) {
  const timers = new FakeTimers();
  const out: Gift[] = [];
  const streaks = new GiftStreaks((e) => out.push(e), timers, { timeoutMs, settleMs: 20_000 });
  return { timers, out, streaks, counts: () => out.map((e) => e.data.repeatCount) };
}

describe('GiftStreaks', () => {
  it('turns a 99-rose streak into one gift of 99', () => {
    const { streaks, counts, out } = setup();
    for (let n = 1; n <= 99; n++) streaks.push(gift(n));
    expect(out).toHaveLength(0);
    streaks.push(gift(99, { end: true }));
    expect(counts()).toEqual([99]);
    expect(out[0]?.user.uniqueId).toBe('rosa');
    expect(streaks.pending).toBe(0);
  });

  it('emits a gift that is not streakable at once', () => {
    const { streaks, counts } = setup();
    streaks.push(gift(1, { streakable: false, name: 'Lion' }));
    expect(counts()).toEqual([1]);
  });

  it('counts a single streakable gift once although TikTok sends it twice', () => {
    const { streaks, counts } = setup();
    streaks.push(gift(1));
    streaks.push(gift(1, { end: true }));
    expect(counts()).toEqual([1]);
  });

  it('ends a streak after the timeout when repeatEnd never comes', () => {
    const { streaks, counts, timers } = setup(5000);
    streaks.push(gift(1));
    timers.advance(3000);
    streaks.push(gift(7));
    timers.advance(4999);
    expect(counts()).toEqual([]);
    timers.advance(1);
    expect(counts()).toEqual([7]);
  });

  it('adds only what is new when a late repeatEnd follows a timeout', () => {
    const { streaks, counts, timers } = setup(5000);
    streaks.push(gift(10));
    timers.advance(5000);
    streaks.push(gift(12, { end: true }));
    streaks.push(gift(12, { end: true }));
    expect(counts()).toEqual([10, 2]);
  });

  it('keeps senders and gifts apart', () => {
    const { streaks, out } = setup();
    streaks.push(gift(1, { user: 'a' }));
    streaks.push(gift(1, { user: 'b' }));
    streaks.push(gift(2, { user: 'a' }));
    streaks.push(gift(3, { user: 'a', end: true }));
    streaks.push(gift(1, { user: 'b', end: true }));
    expect(out.map((e) => `${e.user.uniqueId}:${e.data.repeatCount}`)).toEqual(['a:3', 'b:1']);
  });

  it('treats a count that drops as a new streak, finishing the old one', () => {
    const { streaks, counts, timers } = setup();
    streaks.push(gift(5));
    streaks.push(gift(1));
    expect(counts()).toEqual([5]);
    timers.advance(10_000);
    expect(counts()).toEqual([5, 1]);
  });

  it('counts a repeated end once, and a new streak after an end again', () => {
    const { streaks, counts } = setup();
    streaks.push(gift(1));
    streaks.push(gift(1, { end: true }));
    streaks.push(gift(1, { end: true }));
    streaks.push(gift(1));
    streaks.push(gift(1, { end: true }));
    expect(counts()).toEqual([1, 1]);
  });

  it('flushes what is in flight when asked', () => {
    const { streaks, counts, timers } = setup();
    streaks.push(gift(4));
    streaks.flushAll();
    timers.advance(60_000);
    expect(counts()).toEqual([4]);
    expect(timers.size).toBe(0);
  });
});
