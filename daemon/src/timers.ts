// A clock and one-shot timers behind an interface, so time-driven logic is tested with a fake clock.

export type TimerHandle = { readonly id: number };

export interface Timers {
  /** Milliseconds since an arbitrary origin; only differences matter. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock. Timers are unref'd: a pending reconnect or flush never keeps the process alive. */
export function systemTimers(): Timers {
  const live = new Map<number, NodeJS.Timeout>();
  let next = 1;
  return {
    now: () => Date.now(),
    setTimeout(callback, ms) {
      const id = next++;
      const timer = setTimeout(() => {
        live.delete(id);
        callback();
      }, ms);
      timer.unref();
      live.set(id, timer);
      return { id };
    },
    clearTimeout(handle) {
      const timer = live.get(handle.id);
      if (timer !== undefined) clearTimeout(timer);
      live.delete(handle.id);
    },
  };
}

/** A manual clock for tests: time moves only when `advance` is called, firing due timers in order. */
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
