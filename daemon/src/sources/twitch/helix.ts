// The few Helix (Twitch API) calls the daemon makes: a channel's user id, its viewer count, and
// EventSub subscriptions for a WebSocket session. Written with fetch rather than @twurple/api, which
// hard-codes api.twitch.tv while our address must follow OVERLAY_TWITCH_API_URL (a local fake in tests).
import * as v from 'valibot';
import { parseWith } from '../../../../shared/protocol/index.js';
import { formatWait } from '../../../../shared/timers.js';
import { errorMessage } from '../../errors.js';
import { systemTimers, type Timers } from '../../timers.js';

/** Where Helix gets the user access token, and how it says the token was refused. */
export interface HelixAuth {
  /** `undefined` when there is no sign-in. */
  accessToken(): Promise<string | undefined>;
  /** Called after a 401: the next `accessToken()` should be a renewed one. */
  invalidate(): void;
}

export interface HelixOptions {
  /** Including `/helix` (OVERLAY_TWITCH_API_URL). */
  baseUrl: string;
  clientId: string;
  auth: HelixAuth;
  fetch?: typeof fetch;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** The wait for a rate limit that resets soon. */
  timers?: Timers;
}

export type HelixErrorCode =
  | 'signed-out'
  | 'unauthorized'
  | 'missing-scope'
  | 'rate-limited'
  | 'timeout'
  | 'unreachable'
  | 'rejected'
  | 'bad-response';

/** A Helix call that failed; `permanent` ones do not get better by retrying (only a new sign-in helps). */
export class HelixError extends Error {
  constructor(
    readonly code: HelixErrorCode,
    message: string,
    readonly status?: number,
    /** For `missing-scope`: the scope the sign-in lacks. */
    readonly scope?: string,
  ) {
    super(message);
    this.name = 'HelixError';
  }

  get permanent(): boolean {
    return this.code === 'signed-out' || this.code === 'unauthorized' || this.code === 'missing-scope';
  }
}

export interface HelixUser {
  id: string;
  login: string;
  displayName: string;
}

/** The subscription exists (`existed`: it did already, HTTP 409), or why not. */
export type SubscribeResult = { ok: true; id?: string; existed?: boolean } | { ok: false; error: HelixError };

/** The scope each EventSub type needs of the user's token (Twitch's subscription types reference). */
export const EVENTSUB_SCOPES: Readonly<Record<string, string>> = {
  'channel.follow': 'moderator:read:followers',
  'channel.subscribe': 'channel:read:subscriptions',
  'channel.subscription.gift': 'channel:read:subscriptions',
  'channel.subscription.message': 'channel:read:subscriptions',
  'channel.cheer': 'bits:read',
};

/** Twitch allows a request 800 times a minute; a reset this close is waited for, a later one fails. */
const MAX_RATE_LIMIT_WAIT_MS = 10_000;
const CONNECT_AGAIN = 'run "overlay-daemon connect twitch" again';

// One schema per answer: Helix wraps every list in `data`.
const UsersAnswer = v.object({
  data: v.array(
    v.object({
      id: v.pipe(v.string(), v.minLength(1)),
      login: v.pipe(v.string(), v.minLength(1)),
      display_name: v.string(),
    }),
  ),
});
const StreamsAnswer = v.object({
  data: v.array(
    v.object({
      user_id: v.string(),
      type: v.string(),
      viewer_count: v.pipe(v.number(), v.integer(), v.minValue(0)),
    }),
  ),
});
const SubscriptionAnswer = v.object({
  data: v.array(v.object({ id: v.string(), status: v.string(), type: v.string(), version: v.string() })),
});
/** `{"error": "Conflict", "status": 409, "message": "subscription already exists"}` */
const ErrorAnswer = v.object({
  error: v.optional(v.string()),
  status: v.optional(v.number()),
  message: v.string(),
});

interface Answer {
  status: number;
  body: unknown;
}

export class Helix {
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #timers: Timers;

  constructor(private readonly options: HelixOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#timers = options.timers ?? systemTimers();
  }

  /** `GET /users?login=`: `undefined` when Twitch has no such user. Throws HelixError. */
  async userByLogin(login: string): Promise<HelixUser | undefined> {
    const answer = await this.#request('GET', `/users?login=${encodeURIComponent(login)}`);
    this.#expectOk(answer, 'looking up the channel');
    const user = this.#parse(UsersAnswer, answer, 'users').data[0];
    return user && { id: user.id, login: user.login, displayName: user.display_name || user.login };
  }

  /** `GET /streams?user_id=`: the live stream's viewer count, `undefined` while offline. Throws HelixError. */
  async viewerCount(userId: string): Promise<number | undefined> {
    const answer = await this.#request('GET', `/streams?user_id=${encodeURIComponent(userId)}`);
    this.#expectOk(answer, 'reading the viewer count');
    const stream = this.#parse(StreamsAnswer, answer, 'streams').data.find((s) => s.type === 'live');
    return stream?.viewer_count;
  }

  /**
   * `POST /eventsub/subscriptions` for a WebSocket session. Never throws: a failure is the result,
   * with `missing-scope` naming the scope the sign-in lacks.
   */
  async subscribe(
    type: string,
    version: string,
    condition: Record<string, string>,
    sessionId: string,
  ): Promise<SubscribeResult> {
    try {
      const answer = await this.#request('POST', '/eventsub/subscriptions', {
        type,
        version,
        condition,
        transport: { method: 'websocket', session_id: sessionId },
      });
      if (answer.status === 409) return { ok: true, existed: true };
      if (answer.status === 403) {
        const scope = EVENTSUB_SCOPES[type];
        return {
          ok: false,
          error: new HelixError(
            'missing-scope',
            scope
              ? `${type} needs the scope ${scope}, which the Twitch sign-in lacks: ${CONNECT_AGAIN}`
              : `Twitch does not allow ${type} for this sign-in (${this.#reason(answer)})`,
            403,
            scope,
          ),
        };
      }
      this.#expectOk(answer, `subscribing to ${type}`);
      const created = this.#parse(SubscriptionAnswer, answer, 'eventsub/subscriptions').data[0];
      return { ok: true, ...(created ? { id: created.id } : {}) };
    } catch (err) {
      return {
        ok: false,
        error: err instanceof HelixError ? err : new HelixError('unreachable', errorMessage(err)),
      };
    }
  }

  /** One call: a 401 renews the token and tries once more; a rate limit resetting within 10 s is waited for. */
  async #request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
    let renewed = false;
    let waited = false;
    for (;;) {
      const token = await this.options.auth.accessToken();
      if (!token) throw new HelixError('signed-out', `not signed in to Twitch: ${CONNECT_AGAIN}`);
      const answer = await this.#send(method, path, token, body);
      if (answer.status === 401) {
        if (renewed)
          throw new HelixError(
            'unauthorized',
            `Twitch refused the sign-in (${this.#reason(answer)}): ${CONNECT_AGAIN}`,
            401,
          );
        renewed = true;
        this.options.auth.invalidate();
        continue;
      }
      if (answer.status === 429) {
        const waitMs = answer.resetAt === undefined ? undefined : answer.resetAt - Date.now();
        if (!waited && waitMs !== undefined && waitMs <= MAX_RATE_LIMIT_WAIT_MS) {
          waited = true;
          await new Promise<void>((resolve) => this.#timers.setTimeout(resolve, Math.max(0, waitMs)));
          continue;
        }
        throw new HelixError(
          'rate-limited',
          `Twitch's API limit is used up${waitMs !== undefined && waitMs > 0 ? ` for ${formatWait(waitMs)}` : ''}`,
          429,
        );
      }
      return answer;
    }
  }

  async #send(
    method: string,
    path: string,
    token: string,
    body: unknown,
  ): Promise<Answer & { resetAt?: number }> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    let response: Response;
    try {
      response = await this.#fetch(`${this.#baseUrl}${path}`, {
        method,
        headers: {
          'Client-Id': this.options.clientId,
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal,
      });
    } catch (err) {
      if (signal.aborted)
        throw new HelixError('timeout', `Twitch's API did not answer in ${formatWait(this.#timeoutMs)}`);
      throw new HelixError('unreachable', `could not reach Twitch's API: ${errorMessage(err)}`);
    }
    const text = await response.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    // Ratelimit-Reset: when the bucket is full again, in epoch seconds.
    const reset = Number(response.headers.get('ratelimit-reset'));
    return {
      status: response.status,
      body: parsed,
      ...(Number.isFinite(reset) && reset > 0 ? { resetAt: reset * 1000 } : {}),
    };
  }

  #reason(answer: Answer): string {
    const parsed = parseWith(ErrorAnswer, answer.body);
    return parsed.ok && parsed.value.message ? parsed.value.message : `HTTP ${answer.status}`;
  }

  #expectOk(answer: Answer, what: string): void {
    if (answer.status >= 200 && answer.status < 300) return;
    throw new HelixError(
      answer.status >= 500 ? 'unreachable' : 'rejected',
      `Twitch's API refused ${what}: ${this.#reason(answer)}${answer.status >= 500 ? '' : ` (HTTP ${answer.status})`}`,
      answer.status,
    );
  }

  #parse<S extends v.GenericSchema>(schema: S, answer: Answer, what: string): v.InferOutput<S> {
    const parsed = parseWith(schema, answer.body);
    if (!parsed.ok)
      throw new HelixError(
        'bad-response',
        `Twitch's answer from /${what} is not understood: ${parsed.error}`,
      );
    return parsed.value;
  }
}
