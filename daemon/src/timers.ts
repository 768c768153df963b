// The real clock for the daemon. Timers are unref'd: a pending reconnect or flush never keeps the process alive.
import { hostTimers, type Timers } from '../../shared/timers.js';

export type { TimerHandle, Timers } from '../../shared/timers.js';

export function systemTimers(): Timers {
  return hostTimers({
    now: () => Date.now(),
    setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
    clearTimeout: (timer: NodeJS.Timeout) => clearTimeout(timer),
  });
}
