// A clock, one-shot timers and the retry backoff, shared by the daemon (Node) and the overlay page (browser):
// time-driven logic takes a `Timers`, so tests drive it with a fake clock (test/support/fake-timers.ts).

export type TimerHandle = { readonly id: number };

export interface Timers {
  /** Milliseconds since an arbitrary origin; only differences matter. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Wraps a host's timer functions (Node's or the browser's) as `Timers`, with numeric handles of our own. */
export function hostTimers<H>(host: {
  setTimeout(callback: () => void, ms: number): H;
  clearTimeout(handle: H): void;
  now(): number;
}): Timers {
  const live = new Map<number, H>();
  let next = 1;
  return {
    now: () => host.now(),
    setTimeout(callback, ms) {
      const id = next++;
      live.set(
        id,
        host.setTimeout(() => {
          live.delete(id);
          callback();
        }, ms),
      );
      return { id };
    },
    clearTimeout(handle) {
      const timer = live.get(handle.id);
      if (timer !== undefined) host.clearTimeout(timer);
      live.delete(handle.id);
    },
  };
}

interface Backoff {
  /** The wait before the first retry. */
  initialMs: number;
  /** The ceiling. */
  maxMs: number;
  /** Growth per failure in a row (default 2). */
  factor?: number;
  /**
   * Relative spread around the delay, 0–1 (0.25 gives ±25 %): many clients retrying after one outage
   * do not all come back in the same second.
   */
  jitter?: number;
}

/**
 * The delay before retry number `attempt` (1-based): exponential from `initialMs`, capped at `maxMs`,
 * spread by `jitter` with `random` (uniform in [0, 1)). The one backoff formula of the project.
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const base = Math.min(backoff.maxMs, backoff.initialMs * (backoff.factor ?? 2) ** exponent);
  const jitter = backoff.jitter ?? 0;
  return jitter === 0 ? base : Math.round(base * (1 - jitter + random() * 2 * jitter));
}

/** "4 s", "1 min 30 s", "15 min": a wait as a person reads it. */
export function formatWait(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}
