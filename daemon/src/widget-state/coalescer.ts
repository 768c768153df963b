// Rate-limits overlay broadcasts: state changes of one overlay go out at most once per interval.
import type { TimerHandle, Timers } from '../timers.js';
import { systemTimers } from '../timers.js';

/**
 * `mark(overlayId)` says the overlay's state changed. The first change after a quiet interval is
 * flushed at once (a lone follow shows without delay); changes during the interval are folded
 * into one trailing flush at its end, so a flood of likes costs clients at most one
 * `overlay-update` per interval and overlay, and the last change is never lost.
 */
interface CoalescerOptions {
  /** Minimum time between two flushes of one overlay (default 100 ms). */
  intervalMs?: number;
  timers?: Timers;
  /** Told when a flush throws; the coalescer itself carries on. */
  onError?: (error: unknown, overlayId: string) => void;
}

export class UpdateCoalescer {
  private readonly lastFlush = new Map<string, number>();
  private readonly pending = new Map<string, TimerHandle>();
  private readonly intervalMs: number;
  private readonly timers: Timers;

  constructor(
    private readonly flush: (overlayId: string) => void,
    private readonly options: CoalescerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 100;
    this.timers = options.timers ?? systemTimers();
  }

  mark(overlayId: string): void {
    if (this.pending.has(overlayId)) return;
    const now = this.timers.now();
    const last = this.lastFlush.get(overlayId);
    if (last === undefined || now - last >= this.intervalMs) {
      this.run(overlayId, now);
      return;
    }
    const handle = this.timers.setTimeout(
      () => {
        this.pending.delete(overlayId);
        this.run(overlayId, this.timers.now());
      },
      last + this.intervalMs - now,
    );
    this.pending.set(overlayId, handle);
  }

  /** Whether a trailing flush is waiting for this overlay. */
  isPending(overlayId: string): boolean {
    return this.pending.has(overlayId);
  }

  /** Runs every waiting flush now (shutdown, or an overlay about to be replaced). */
  flushAll(): void {
    for (const [overlayId, handle] of [...this.pending]) {
      this.timers.clearTimeout(handle);
      this.pending.delete(overlayId);
      this.run(overlayId, this.timers.now());
    }
  }

  /** Forgets an overlay (deleted): a waiting flush is dropped. */
  forget(overlayId: string): void {
    const handle = this.pending.get(overlayId);
    if (handle) this.timers.clearTimeout(handle);
    this.pending.delete(overlayId);
    this.lastFlush.delete(overlayId);
  }

  private run(overlayId: string, now: number): void {
    this.lastFlush.set(overlayId, now);
    try {
      this.flush(overlayId);
    } catch (error) {
      // A failing broadcast must not wedge the coalescer; the next change flushes again.
      this.options.onError?.(error, overlayId);
    }
  }
}
