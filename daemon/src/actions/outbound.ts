// The calls webhook and Streamer.bot actions make to other tools: 5 s at most, redirects not followed,
// never retried, and a bound on the unanswered requests one address may hold.
import { errorMessage } from '../errors.js';
import type { Timers } from '../timers.js';

const CALL_TIMEOUT_MS = 5000;
/**
 * Unanswered requests one address may hold at once. Past that an action fails at once rather than open
 * another socket: a tool that stopped answering cannot make a gift flood pile up thousands of them.
 */
export const MAX_UNANSWERED_PER_ORIGIN = 32;

export class OutboundCalls {
  readonly #clock: Timers;
  /** Requests under way, so `close` ends them. */
  readonly #requests = new Set<AbortController>();
  /** Requests under way per origin (scheme, host and port). */
  readonly #unanswered = new Map<string, number>();

  constructor(clock: Timers) {
    this.#clock = clock;
  }

  /** Throws (`dropped: …`) when `origin` already holds 32 unanswered requests: the call is not made at all. */
  admit(origin: string): void {
    if ((this.#unanswered.get(origin) ?? 0) < MAX_UNANSWERED_PER_ORIGIN) return;
    throw new Error(`dropped: ${MAX_UNANSWERED_PER_ORIGIN} requests to ${origin} are still unanswered`);
  }

  /** One HTTP request: 5 s at most, redirects not followed, never retried; a status outside 2xx fails. */
  async request(url: string, init: RequestInit): Promise<void> {
    const origin = originOf(url);
    this.admit(origin);
    this.#unanswered.set(origin, (this.#unanswered.get(origin) ?? 0) + 1);
    const controller = new AbortController();
    this.#requests.add(controller);
    const timer = this.#clock.setTimeout(
      () => controller.abort(new Error(`no answer within ${CALL_TIMEOUT_MS / 1000} s`)),
      CALL_TIMEOUT_MS,
    );
    try {
      const res = await fetch(url, { ...init, redirect: 'manual', signal: controller.signal });
      await res.body?.cancel();
      if (res.status >= 300 && res.status < 400)
        throw new Error(`HTTP ${res.status} (redirects are not followed)`);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    } catch (err) {
      if (controller.signal.aborted && controller.signal.reason instanceof Error)
        throw controller.signal.reason;
      // fetch says only "fetch failed"; the cause says why (ECONNREFUSED: nothing listens there).
      const cause =
        err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
      if (cause) throw new Error(`cannot reach ${url}: ${cause.code ?? cause.message ?? errorMessage(err)}`);
      throw err;
    } finally {
      this.#clock.clearTimeout(timer);
      this.#requests.delete(controller);
      const left = (this.#unanswered.get(origin) ?? 1) - 1;
      if (left > 0) this.#unanswered.set(origin, left);
      else this.#unanswered.delete(origin);
    }
  }

  /** Shutdown: every request under way ends now. */
  close(): void {
    for (const controller of this.#requests) controller.abort(new Error('the daemon is stopping'));
  }
}

/** Origins of the addresses calls went to, so a flood parses each URL once. */
const ORIGINS = new Map<string, string>();
export function originOf(url: string): string {
  let origin = ORIGINS.get(url);
  if (origin === undefined) {
    origin = new URL(url).origin;
    if (ORIGINS.size >= 1000) ORIGINS.clear();
    ORIGINS.set(url, origin);
  }
  return origin;
}
