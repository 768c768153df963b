// The few Helix (Twitch API) calls the daemon makes: a channel's user id, its viewer count, and
// EventSub subscriptions for a WebSocket session. Written on fetchJson rather than @twurple/api, which
// hard-codes api.twitch.tv while our address must follow OVERLAY_TWITCH_API_URL (a local fake in tests).
import * as v from 'valibot';
import { parseWith } from '../../../../shared/protocol/index.js';
import { formatWait } from '../../../../shared/timers.js';
import { DaemonError, type DaemonErrorCode, errorMessage } from '../../errors.js';
import { FetchError, fetchJson } from '../../http-client/fetch-json.js';
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

export type HelixErrorCode = Extract<
  DaemonErrorCode,
  | 'signed_out'
  | 'unauthorized'
  | 'missing_scope'
  | 'rate_limited'
  | 'timeout'
  | 'unreachable'
  | 'rejected'
  | 'bad_response'
>;

/** A Helix call that failed; `permanent` ones do not get better by retrying (only a new sign-in helps). */
export class HelixError extends DaemonError {
  declare readonly code: HelixErrorCode;
  constructor(
    code: HelixErrorCode,
    message: string,
    readonly status?: number,
    /** For `missing_scope`: the scope the sign-in lacks. */
    readonly scope?: string,
  ) {
    super(code, message);
    this.name = 'HelixError';
  }

  get permanent(): boolean {
    return this.code === 'signed_out' || this.code === 'unauthorized' || this.code === 'missing_scope';
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
    const answer = await this.#call(
      'GET',
      `/users?login=${encodeURIComponent(login)}`,
      UsersAnswer,
      'looking up the channel',
    );
    const user = answer.data[0];
    return user && { id: user.id, login: user.login, displayName: user.display_name || user.login };
  }

  /** `GET /streams?user_id=`: the live stream's viewer count, `undefined` while offline. Throws HelixError. */
  async viewerCount(userId: string): Promise<number | undefined> {
    const answer = await this.#call(
      'GET',
      `/streams?user_id=${encodeURIComponent(userId)}`,
      StreamsAnswer,
      'reading the viewer count',
    );
    const stream = answer.data.find((s) => s.type === 'live');
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
    const path = '/eventsub/subscriptions';
    try {
      const created = await this.#request('POST', path, SubscriptionAnswer, {
        type,
        version,
        condition,
        transport: { method: 'websocket', session_id: sessionId },
      });
      return { ok: true, ...(created.data[0] ? { id: created.data[0].id } : {}) };
    } catch (err) {
      if (err instanceof FetchError && err.status === 409) return { ok: true, existed: true };
      if (err instanceof FetchError && err.status === 403) {
        const scope = EVENTSUB_SCOPES[type];
        return {
          ok: false,
          error: new HelixError(
            'missing_scope',
            scope
              ? `${type} needs the scope ${scope}, which the Twitch sign-in lacks: ${CONNECT_AGAIN}`
              : `Twitch does not allow ${type} for this sign-in (${reasonOf(err)})`,
            403,
            scope,
          ),
        };
      }
      return { ok: false, error: this.#failure(err, `subscribing to ${type}`, path) };
    }
  }

  /** One call whose failures are HelixErrors saying `what` was refused. */
  async #call<S extends v.GenericSchema>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    what: string,
  ): Promise<v.InferOutput<S>> {
    try {
      return await this.#request(method, path, schema);
    } catch (err) {
      throw this.#failure(err, what, path);
    }
  }

  /**
   * One request with the sign-in's token: a 401 renews the token and tries once more; a rate limit resetting
   * within 10 s is waited for. Any other failure is thrown as fetchJson's FetchError.
   */
  async #request<S extends v.GenericSchema>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    body?: unknown,
  ): Promise<v.InferOutput<S>> {
    let renewed = false;
    let waited = false;
    for (;;) {
      const token = await this.options.auth.accessToken();
      if (!token) throw new HelixError('signed_out', `not signed in to Twitch: ${CONNECT_AGAIN}`);
      try {
        const answer = await fetchJson(`${this.#baseUrl}${path}`, {
          method,
          headers: { 'Client-Id': this.options.clientId, Authorization: `Bearer ${token}` },
          ...(body === undefined ? {} : { json: body }),
          schema,
          timeoutMs: this.#timeoutMs,
          secrets: [token],
          service: "Twitch's API",
          fetch: this.#fetch,
        });
        return answer.value;
      } catch (err) {
        if (!(err instanceof FetchError)) throw err;
        if (err.status === 401) {
          if (renewed)
            throw new HelixError(
              'unauthorized',
              `Twitch refused the sign-in (${reasonOf(err)}): ${CONNECT_AGAIN}`,
              401,
            );
          renewed = true;
          this.options.auth.invalidate();
          continue;
        }
        if (err.status === 429) {
          // Ratelimit-Reset: when the bucket is full again, in epoch seconds.
          const reset = Number(err.headers?.get('ratelimit-reset'));
          const waitMs = Number.isFinite(reset) && reset > 0 ? reset * 1000 - Date.now() : undefined;
          if (!waited && waitMs !== undefined && waitMs <= MAX_RATE_LIMIT_WAIT_MS) {
            waited = true;
            await new Promise<void>((resolve) => this.#timers.setTimeout(resolve, Math.max(0, waitMs)));
            continue;
          }
          throw new HelixError(
            'rate_limited',
            `Twitch's API limit is used up${waitMs !== undefined && waitMs > 0 ? ` for ${formatWait(waitMs)}` : ''}`,
            429,
          );
        }
        throw err;
      }
    }
  }

  /** Anything a request threw, as a HelixError saying `what` failed. */
  #failure(err: unknown, what: string, path: string): HelixError {
    if (err instanceof HelixError) return err;
    if (!(err instanceof FetchError)) return new HelixError('unreachable', errorMessage(err));
    if (err.code === 'timeout')
      return new HelixError('timeout', `Twitch's API did not answer in ${formatWait(this.#timeoutMs)}`);
    if (err.code === 'bad_response')
      return new HelixError(
        'bad_response',
        `Twitch's answer from ${path.split('?')[0]} is not understood: ${err.reason}`,
      );
    if (err.status === undefined)
      return new HelixError('unreachable', `could not reach Twitch's API: ${err.reason}`);
    const status = err.status;
    return new HelixError(
      status >= 500 ? 'unreachable' : 'rejected',
      `Twitch's API refused ${what}: ${reasonOf(err)}${status >= 500 ? '' : ` (HTTP ${status})`}`,
      status,
    );
  }
}

/** Twitch's own message in an error answer, or its status. */
function reasonOf(err: FetchError): string {
  const parsed = parseWith(ErrorAnswer, err.body);
  return parsed.ok && parsed.value.message ? parsed.value.message : `HTTP ${err.status}`;
}
