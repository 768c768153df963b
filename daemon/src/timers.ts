// The real clock for the daemon. Timers are unref'd: a pending reconnect or flush never keeps the process alive.
import { hostTimers, type Timers } from '../../shared/timers.js';

export type { TimerHandle, Timers } from '../../shared/timers.js';

/** Node's longest timer: a longer (or non-finite) delay fires after 1 ms instead, with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The range of a polling interval a platform asks for (YouTube's chat, Twitch's sign-in). */
export const POLL_MIN_MS = 1000;
export const POLL_MAX_MS = 5 * 60_000;

/** A delay Node's timers keep as asked: from 0 to MAX_TIMER_MS; anything not a number waits the longest. */
export function timerDelay(ms: number): number {
  if (Number.isNaN(ms)) return MAX_TIMER_MS;
  return Math.min(MAX_TIMER_MS, Math.max(0, ms));
}

/**
 * A polling interval a platform gave, kept from `min` (1 s) to 5 min: a huge one would otherwise overflow
 * the timer into a request every millisecond, a missing or zero one would hammer the platform.
 */
export function pollInterval(ms: number | undefined, min = POLL_MIN_MS): number {
  if (ms === undefined || Number.isNaN(ms)) return Math.max(min, 5000);
  return Math.min(POLL_MAX_MS, Math.max(min, ms));
}

export function systemTimers(): Timers {
  return hostTimers({
    now: () => Date.now(),
    setTimeout: (callback, ms) => setTimeout(callback, timerDelay(ms)).unref(),
    clearTimeout: (timer: NodeJS.Timeout) => clearTimeout(timer),
  });
}
