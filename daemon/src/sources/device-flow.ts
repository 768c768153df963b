// The waiting half of the OAuth 2.0 device authorization grant (RFC 8628 §3.4, §3.5) that Twitch's and
// Google's sign-ins share: poll the token endpoint at the interval asked, 5 s slower after `slow_down`,
// on through `authorization_pending`, until the tokens come, the streamer refuses, the code runs out
// (`expired_token`, or `expires_in` passed on the clock), or the wait is cancelled. Each platform brings
// its token request, how its refusals name their error, and its own error class and words.
import type { DaemonError, DaemonErrorCode } from '../errors.js';
import { pollInterval, type Timers } from '../timers.js';

/** What a cancelled sign-in says, on every platform. */
export const SIGN_IN_CANCELLED = 'the sign-in was cancelled';

/** The codes the poll ends with; a platform's error class takes them. */
export type DeviceFlowErrorCode = Extract<
  DaemonErrorCode,
  'expired' | 'denied' | 'rejected' | 'aborted' | 'unreachable'
>;

/** A refusal from the token endpoint: its HTTP status, and whatever else the platform's reply holds. */
export interface TokenRefusal {
  ok: false;
  status: number;
}

export interface DeviceTokenPoll<T, Refusal extends TokenRefusal> {
  /** The device authorization answer's `interval`, in seconds. */
  intervalS: number;
  /** The device authorization answer's `expires_in`, in seconds, counted on `timers` from the start of the wait. */
  expiresInS: number;
  /** The waits between polls, and the clock the code's lifetime is counted on. */
  timers: Timers;
  signal?: AbortSignal | undefined;
  /**
   * One `grant_type=urn:ietf:params:oauth:grant-type:device_code` request. Throws the platform's error;
   * one with code `unreachable` (a network blip while the streamer types the code) is tried again.
   */
  requestToken(signal: AbortSignal | undefined): Promise<{ ok: true; value: T } | Refusal>;
  /** The RFC 8628 error of a refusal (`authorization_pending`, `slow_down`, `expired_token`, `access_denied`, …). */
  errorOf(refusal: Refusal): string;
  /** The platform's error class, which the poll's failures are thrown as. */
  errorClass: new (
    code: DeviceFlowErrorCode,
    message: string,
  ) => DaemonError;
  /** The platform's words for how the wait ended. */
  words: {
    /** The code ran out before it was entered. */
    expired: string;
    /** The streamer refused the sign-in (`access_denied`). */
    denied: string;
    /** Any other refusal. */
    refused(refusal: Refusal): string;
  };
}

/** How many network failures or 5xx answers in a row the poll lets pass. */
const MAX_FAILURES = 3;

/** Polls until the platform grants the tokens (resolves with its answer); rejects with the platform's error. */
export async function pollDeviceToken<T, Refusal extends TokenRefusal>(
  poll: DeviceTokenPoll<T, Refusal>,
): Promise<T> {
  const { timers, signal, errorClass, words } = poll;
  const deadline = timers.now() + poll.expiresInS * 1000;
  let intervalS = poll.intervalS;
  let failures = 0;
  for (;;) {
    // As the platform asks, kept from 1 s to 5 min: a huge interval would overflow the timer.
    await sleep(
      timers,
      pollInterval(intervalS * 1000),
      signal,
      () => new errorClass('aborted', SIGN_IN_CANCELLED),
    );
    if (timers.now() >= deadline) throw new errorClass('expired', words.expired);
    let reply: { ok: true; value: T } | Refusal;
    try {
      reply = await poll.requestToken(signal);
    } catch (err) {
      // A network blip while the streamer is still typing the code: try again, a few times.
      if (err instanceof errorClass && err.code === 'unreachable' && ++failures < MAX_FAILURES) continue;
      throw err;
    }
    if (reply.ok) return reply.value;
    if (reply.status >= 500 && ++failures < MAX_FAILURES) continue;
    failures = 0;
    switch (poll.errorOf(reply)) {
      case 'authorization_pending':
        continue;
      case 'slow_down':
        // RFC 8628 §3.5: 5 s longer between polls from now on.
        intervalS += 5;
        continue;
      case 'expired_token':
        throw new errorClass('expired', words.expired);
      case 'access_denied':
        throw new errorClass('denied', words.denied);
      default:
        throw new errorClass('rejected', words.refused(reply));
    }
  }
}

/** Waits `ms` on `timers`; an aborted `signal` clears the timer and rejects with `cancelled()`. */
function sleep(
  timers: Timers,
  ms: number,
  signal: AbortSignal | undefined,
  cancelled: () => Error,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled());
    const onAbort = () => {
      timers.clearTimeout(handle);
      reject(cancelled());
    };
    const handle = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
