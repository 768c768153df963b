// The calls webhook and Streamer.bot actions make to other tools: 5 s at most, redirects not followed,
// never retried, and a bound on the unanswered requests one address may hold.
import { FetchError, fetchJson } from '../http-client/fetch-json.js';
import type { Timers } from '../timers.js';
import type { OutboundCall } from './kinds/types.js';

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

  /** Why no call to `origin` is made now (`dropped: …`: it holds 32 unanswered requests), or undefined. */
  refusal(origin: string): string | undefined {
    if ((this.#unanswered.get(origin) ?? 0) < MAX_UNANSWERED_PER_ORIGIN) return undefined;
    return `dropped: ${MAX_UNANSWERED_PER_ORIGIN} requests to ${origin} are still unanswered`;
  }

  /**
   * One HTTP request: 5 s at most, redirects not followed, never retried; a status outside 2xx fails.
   * The failure says why in a few words (`HTTP 500`, `no answer within 5 s`, `cannot reach <url>: ECONNREFUSED`),
   * with credential-like query values redacted.
   */
  async request(url: string, call: OutboundCall): Promise<void> {
    const origin = originOf(url);
    const refused = this.refusal(origin);
    if (refused !== undefined) throw new Error(refused);
    this.#unanswered.set(origin, (this.#unanswered.get(origin) ?? 0) + 1);
    const controller = new AbortController();
    this.#requests.add(controller);
    try {
      await fetchJson(url, {
        ...call,
        timeoutMs: CALL_TIMEOUT_MS,
        timers: this.#clock,
        signal: controller.signal,
        service: url,
      });
    } catch (err) {
      if (err instanceof FetchError) throw new Error(err.code === 'unreachable' ? err.message : err.reason);
      throw err;
    } finally {
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
