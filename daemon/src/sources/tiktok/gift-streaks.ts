// Folds a TikTok gift streak (the same message repeated with a growing repeatCount) into one gift event.
import type { StreamEventOf } from '../../../../shared/protocol/index.js';
import type { TimerHandle, Timers } from '../../timers.js';
import type { NormalisedGift } from './map.js';

type GiftEvent = StreamEventOf<'gift'>;

interface Streak {
  latest: GiftEvent;
  /** Highest repeatCount seen in this streak. */
  highest: number;
  /** What was already emitted for it (non-zero only after a timeout flush). */
  reported: number;
  /**
   * `active` waits for repeatEnd; `settled` was flushed by the timeout and waits only for a late
   * end; `ended` saw its repeatEnd and is kept a while so a repeated end is not counted twice.
   */
  phase: 'active' | 'settled' | 'ended';
  timer: TimerHandle;
}

interface GiftStreakOptions {
  /** No new streak message for this long ends the streak (its repeatEnd was lost). */
  timeoutMs?: number;
  /** How long a timed-out streak is remembered, so a late repeatEnd adds only what is new. */
  settleMs?: number;
  /** At most this many streaks in flight; beyond it the oldest is flushed. */
  maxStreaks?: number;
}

export class GiftStreaks {
  private readonly streaks = new Map<string, Streak>();
  private readonly timeoutMs: number;
  private readonly settleMs: number;
  private readonly maxStreaks: number;

  constructor(
    private readonly emit: (event: GiftEvent) => void,
    private readonly timers: Timers,
    options: GiftStreakOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 6000;
    this.settleMs = options.settleMs ?? 30_000;
    this.maxStreaks = options.maxStreaks ?? 1000;
  }

  /** Streaks currently waiting for their end. */
  get pending(): number {
    let n = 0;
    for (const streak of this.streaks.values()) if (streak.phase === 'active') n++;
    return n;
  }

  push(gift: NormalisedGift): void {
    if (!gift.streakable) {
      this.emit(gift.event);
      return;
    }
    const count = gift.event.data.repeatCount;
    let streak = this.streaks.get(gift.streakKey);
    // A lower count than seen before, or a new message after an end, is a new streak of the same
    // gift: finish the old one first.
    if (streak && (count < streak.highest || (streak.phase === 'ended' && !gift.streakEnded))) {
      this.finish(gift.streakKey, streak);
      streak = undefined;
    }
    if (gift.streakEnded) {
      const highest = Math.max(count, streak?.highest ?? 0);
      const reported = streak?.reported ?? 0;
      if (streak) this.timers.clearTimeout(streak.timer);
      else if (this.streaks.size >= this.maxStreaks) this.evictOldest();
      // The end message may carry less of the sender (no avatar) than the streak did.
      const final = streak
        ? { ...gift.event, user: { ...streak.latest.user, ...gift.event.user } }
        : gift.event;
      this.emitRemainder(final, highest, reported);
      const ended: Streak = {
        latest: final,
        highest,
        reported: highest,
        phase: 'ended',
        timer: { id: 0 },
      };
      ended.timer = this.forgetLater(gift.streakKey, ended);
      this.streaks.set(gift.streakKey, ended);
      return;
    }
    if (streak) {
      this.timers.clearTimeout(streak.timer);
      streak.latest = gift.event;
      streak.highest = Math.max(streak.highest, count);
      streak.phase = 'active';
      streak.timer = this.armTimeout(gift.streakKey);
      return;
    }
    if (this.streaks.size >= this.maxStreaks) this.evictOldest();
    this.streaks.set(gift.streakKey, {
      latest: gift.event,
      highest: count,
      reported: 0,
      phase: 'active',
      timer: this.armTimeout(gift.streakKey),
    });
  }

  /** Emits every streak still in progress (used when the source stops). */
  flushAll(): void {
    for (const [key, streak] of [...this.streaks]) this.finish(key, streak);
  }

  private armTimeout(key: string): TimerHandle {
    return this.timers.setTimeout(() => {
      const streak = this.streaks.get(key);
      if (!streak) return;
      this.emitRemainder(streak.latest, streak.highest, streak.reported);
      streak.reported = streak.highest;
      streak.phase = 'settled';
      streak.timer = this.forgetLater(key, streak);
    }, this.timeoutMs);
  }

  private forgetLater(key: string, streak: Streak): TimerHandle {
    return this.timers.setTimeout(() => {
      if (this.streaks.get(key) === streak) this.streaks.delete(key);
    }, this.settleMs);
  }

  private finish(key: string, streak: Streak): void {
    this.timers.clearTimeout(streak.timer);
    this.streaks.delete(key);
    this.emitRemainder(streak.latest, streak.highest, streak.reported);
  }

  private evictOldest(): void {
    const oldest = this.streaks.entries().next();
    if (!oldest.done) this.finish(oldest.value[0], oldest.value[1]);
  }

  private emitRemainder(event: GiftEvent, highest: number, reported: number): void {
    const repeatCount = highest - reported;
    if (repeatCount <= 0) return;
    this.emit({ ...event, data: { ...event.data, repeatCount } });
  }
}
