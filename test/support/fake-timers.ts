// A manual clock for tests: time moves only when `advance` is called, firing due timers in order.
import type { TimerHandle, Timers } from '../../shared/timers.js';

export class FakeTimers implements Timers {
  private time = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.pending.set(id, { at: this.time + Math.max(0, ms), callback });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.pending.delete(handle.id);
  }

  /** How many timers are waiting. */
  get size(): number {
    return this.pending.size;
  }

  /** Delay until the next timer fires, or undefined when none is pending. */
  nextDelay(): number | undefined {
    let soonest: number | undefined;
    for (const { at } of this.pending.values()) if (soonest === undefined || at < soonest) soonest = at;
    return soonest === undefined ? undefined : soonest - this.time;
  }

  /** Moves time forward by `ms`, running every timer that falls due (including ones set meanwhile). */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let dueId: number | undefined;
      let dueAt = Number.POSITIVE_INFINITY;
      for (const [id, { at }] of this.pending) {
        if (at <= end && at < dueAt) {
          dueAt = at;
          dueId = id;
        }
      }
      if (dueId === undefined) break;
      const timer = this.pending.get(dueId)!;
      this.pending.delete(dueId);
      this.time = dueAt;
      timer.callback();
    }
    this.time = end;
  }
}
