// Signing in to Twitch as a public client (no secret): the device code flow
// (RFC 8628 as Twitch runs it), the tokens kept in twitch.json (mode 0600), their renewal, and their
// revocation. Written on fetchJson rather than @twurple/auth: twurple has no device code flow, and it
// hard-codes id.twitch.tv, while our address must follow OVERLAY_TWITCH_AUTH_URL (a local fake in tests).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { parseWith } from '../../../../shared/protocol/index.js';
import { DaemonError, type DaemonErrorCode, errorMessage } from '../../errors.js';
import { FetchError, fetchJson } from '../../http-client/fetch-json.js';
import { readPrivateJson, writePrivateJson } from '../../store/private-json-file.js';
import { systemTimers, type Timers } from '../../timers.js';
import { pollDeviceToken, SIGN_IN_CANCELLED } from '../device-flow.js';

/** The scope of sending chat as the signed-in user (Helix `POST /chat/messages`). */
export const TWITCH_CHAT_SCOPE = 'user:write:chat';

/** What the sign-in asks for: follows (v2 needs a moderator's read), subscriptions, cheers, sending chat. */
export const TWITCH_SCOPES = [
  'moderator:read:followers',
  'channel:read:subscriptions',
  'bits:read',
  TWITCH_CHAT_SCOPE,
] as const;

/** What a sign-in made before chat sending existed must do before the daemon can write in chat. */
export const TWITCH_RENEW_FOR_CHAT = `sign in to Twitch again in Sources: this sign-in was made before chat sending (${TWITCH_CHAT_SCOPE})`;

/** Why a sign-in cannot send chat (it lacks the scope, as /oauth2/validate gave its scopes); undefined when it can. */
export function chatScopeMissing(tokens: Pick<TwitchTokens, 'scopes'>): string | undefined {
  return tokens.scopes.includes(TWITCH_CHAT_SCOPE) ? undefined : TWITCH_RENEW_FOR_CHAT;
}

/** The sign-in's file in the data directory. */
export const TWITCH_FILE = 'twitch.json';

/** Every request to Twitch's sign-in service gives up after this long. */
const REQUEST_TIMEOUT_MS = 10_000;
/** A token this close to its end is renewed before use. */
const RENEW_BEFORE_MS = 5 * 60_000;
const CONNECT_AGAIN = 'run "overlay-daemon connect twitch" again';

const nonEmpty = v.pipe(v.string(), v.minLength(1));

/** twitch.json: the tokens and who they belong to. */
export const TwitchTokens = v.object({
  accessToken: nonEmpty,
  refreshToken: nonEmpty,
  /** When the access token ends (ISO 8601). */
  expiresAt: v.pipe(v.string(), v.isoTimestamp()),
  scopes: v.array(v.string()),
  userId: nonEmpty,
  login: nonEmpty,
  /** The client id the tokens were issued to: a refresh must name the same one. */
  clientId: nonEmpty,
});
export type TwitchTokens = v.InferOutput<typeof TwitchTokens>;

/** Why a sign-in step failed, for the caller to tell the streamer (the message says it in full). */
export type TwitchAuthErrorCode = Extract<
  DaemonErrorCode,
  'expired' | 'denied' | 'rejected' | 'unreachable' | 'bad_response' | 'aborted' | 'unreadable'
>;

export class TwitchAuthError extends DaemonError {
  declare readonly code: TwitchAuthErrorCode;
  constructor(code: TwitchAuthErrorCode, message: string) {
    super(code, message);
    this.name = 'TwitchAuthError';
  }
}

// Twitch's answers, as its sign-in service sends them.
const DeviceResponse = v.object({
  device_code: nonEmpty,
  expires_in: v.pipe(v.number(), v.integer(), v.minValue(1)),
  interval: v.pipe(v.number(), v.integer(), v.minValue(1)),
  user_code: nonEmpty,
  verification_uri: v.pipe(v.string(), v.url()),
});
const TokenResponse = v.object({
  access_token: nonEmpty,
  refresh_token: nonEmpty,
  expires_in: v.pipe(v.number(), v.minValue(0)),
  scope: v.optional(v.array(v.string())),
  token_type: v.optional(v.string()),
});
const ValidateResponse = v.object({
  client_id: nonEmpty,
  login: nonEmpty,
  user_id: nonEmpty,
  scopes: v.nullish(v.array(v.string())),
  expires_in: v.number(),
});
/** An error from id.twitch.tv: `{"status": 400, "message": "authorization_pending"}`. */
const ErrorResponse = v.object({ status: v.optional(v.number()), message: v.string() });

type Fetch = typeof fetch;
/** Twitch's answer: a 2xx one checked by the step's schema, or a refusal with its status and Twitch's error. */
type Reply<T> = { ok: true; value: T } | { ok: false; status: number; error: string };

function twitchFile(dataDir: string): string {
  return join(dataDir, TWITCH_FILE);
}

/** Twitch's error message in an error answer, lowercased (`authorization_pending`, `invalid refresh token`). */
function errorOf(body: unknown): string {
  const parsed = parseWith(ErrorResponse, body);
  return parsed.ok ? parsed.value.message.toLowerCase() : '';
}

/** `HTTP 400: invalid client`, for a refusal's message. */
function statusOf(reply: { status: number; error: string }): string {
  return `HTTP ${reply.status}${reply.error ? `: ${reply.error}` : ''}`;
}

/**
 * One request to the sign-in service. A 2xx answer is checked by `schema` (when given); a refusal is the
 * reply. Throws TwitchAuthError when Twitch cannot be reached, the wait was cancelled, or an answer is not
 * understood. The tokens of the request never appear in a message.
 */
async function call<S extends v.GenericSchema | undefined = undefined>(
  doFetch: Fetch,
  url: string,
  init: {
    form?: Record<string, string>;
    authorization?: string;
    signal?: AbortSignal | undefined;
    schema?: S;
    /** What the answer is to, for its message: "the sign-in request". */
    what?: string;
    secrets?: readonly string[];
  },
): Promise<Reply<S extends v.GenericSchema ? v.InferOutput<S> : undefined>> {
  try {
    const answer = await fetchJson(url, {
      method: init.form ? 'POST' : 'GET',
      headers: init.authorization ? { Authorization: init.authorization } : {},
      ...(init.form ? { form: init.form } : {}),
      ...(init.schema ? { schema: init.schema } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
      timeoutMs: REQUEST_TIMEOUT_MS,
      secrets: [init.authorization, ...(init.secrets ?? [])],
      service: 'Twitch',
      fetch: doFetch,
    });
    return { ok: true, value: answer.value as S extends v.GenericSchema ? v.InferOutput<S> : undefined };
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    if (err.code === 'aborted') throw new TwitchAuthError('aborted', SIGN_IN_CANCELLED);
    if (err.code === 'bad_response')
      throw new TwitchAuthError(
        'bad_response',
        `Twitch's answer to ${init.what ?? 'the request'} is not understood: ${err.reason}`,
      );
    if (err.status !== undefined) return { ok: false, status: err.status, error: errorOf(err.body) };
    const why = err.code === 'timeout' ? `no answer in ${REQUEST_TIMEOUT_MS / 1000} s` : err.reason;
    throw new TwitchAuthError('unreachable', `could not reach Twitch at ${new URL(url).origin}: ${why}`);
  }
}

/** Who a token belongs to (`GET /oauth2/validate`). */
async function validate(doFetch: Fetch, authUrl: string, accessToken: string) {
  const answer = await call(doFetch, `${authUrl}/oauth2/validate`, {
    authorization: `OAuth ${accessToken}`,
    schema: ValidateResponse,
    what: 'the token check',
    secrets: [accessToken],
  });
  if (!answer.ok)
    throw new TwitchAuthError('rejected', `Twitch did not accept the new token (${statusOf(answer)})`);
  return answer.value;
}

/** Reads twitch.json: `undefined` when there is none. Throws TwitchAuthError `unreadable` when it does not parse. */
export async function readTwitchTokens(dataDir: string): Promise<TwitchTokens | undefined> {
  const read = await readPrivateJson(twitchFile(dataDir), TwitchTokens);
  if (!read.ok)
    throw new TwitchAuthError(
      'unreadable',
      `the Twitch sign-in cannot be read (${read.error}): ${CONNECT_AGAIN}`,
    );
  return read.record;
}

/** Writes twitch.json atomically, private to the user (0600): it holds credentials. */
export async function writeTwitchTokens(dataDir: string, tokens: TwitchTokens): Promise<void> {
  await writePrivateJson(twitchFile(dataDir), parseOrThrow(tokens));
}

function parseOrThrow(tokens: TwitchTokens): TwitchTokens {
  const parsed = parseWith(TwitchTokens, tokens);
  if (!parsed.ok)
    throw new TwitchAuthError('bad_response', `the Twitch sign-in is incomplete: ${parsed.error}`);
  return parsed.value;
}

export interface DeviceFlowOptions {
  /** An origin (OVERLAY_TWITCH_AUTH_URL): `/oauth2/...` is added. */
  authUrl: string;
  clientId: string;
  /** When given, `wait()` also writes the tokens to twitch.json there before it resolves. */
  dataDir?: string;
  fetch?: Fetch;
  /** The waits between polls. */
  timers?: Timers;
}

/** A device code flow under way: show the code and the link, then `wait()`. */
export interface DeviceFlow {
  /** What the streamer types at the link. */
  userCode: string;
  verificationUri: string;
  /** How long the code works. */
  expiresInS: number;
  /**
   * Polls until the streamer approves (resolves with the tokens), denies, or the code expires (rejects
   * with a TwitchAuthError saying which). An aborted `signal` rejects with code `aborted`.
   */
  wait(signal?: AbortSignal): Promise<TwitchTokens>;
}

/** Starts the device code flow: `POST /oauth2/device`. Throws TwitchAuthError. */
export async function startDeviceFlow(options: DeviceFlowOptions): Promise<DeviceFlow> {
  const doFetch = options.fetch ?? fetch;
  const timers = options.timers ?? systemTimers();
  const authUrl = options.authUrl.replace(/\/+$/, '');
  const scopes = TWITCH_SCOPES.join(' ');
  const answer = await call(doFetch, `${authUrl}/oauth2/device`, {
    form: { client_id: options.clientId, scopes },
    schema: DeviceResponse,
    what: 'the sign-in request',
  });
  if (!answer.ok)
    throw new TwitchAuthError(
      'rejected',
      `Twitch refused to start the sign-in (${statusOf(answer)}); check the Twitch client id`,
    );
  const device = answer.value;

  async function poll(signal: AbortSignal | undefined): Promise<TwitchTokens> {
    const granted = await pollDeviceToken({
      intervalS: device.interval,
      expiresInS: device.expires_in,
      timers,
      signal,
      requestToken: (signal) =>
        call(doFetch, `${authUrl}/oauth2/token`, {
          form: {
            client_id: options.clientId,
            scopes,
            device_code: device.device_code,
            grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          },
          signal,
          schema: TokenResponse,
          what: 'the sign-in',
          secrets: [device.device_code],
        }),
      // Twitch says "invalid device code" of a code that ran out.
      errorOf: (reply) => (reply.error === 'invalid device code' ? 'expired_token' : reply.error),
      errorClass: TwitchAuthError,
      words: {
        expired: 'the code expired before it was entered on Twitch; start the sign-in again',
        denied: 'the sign-in was declined on Twitch; run the sign-in again to retry',
        refused: (reply) => `Twitch refused the sign-in (${statusOf(reply)})`,
      },
    });
    const who = await validate(doFetch, authUrl, granted.access_token);
    const tokens = parseOrThrow({
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      expiresAt: new Date(Date.now() + granted.expires_in * 1000).toISOString(),
      // The scopes Twitch's token check gives are the ones the token has (chat sending depends on them).
      scopes: who.scopes ?? granted.scope ?? [],
      userId: who.user_id,
      login: who.login,
      clientId: options.clientId,
    });
    if (options.dataDir) await writeTwitchTokens(options.dataDir, tokens);
    return tokens;
  }

  return {
    userCode: device.user_code,
    verificationUri: device.verification_uri,
    expiresInS: device.expires_in,
    wait: (signal) => poll(signal),
  };
}

export interface TwitchAuthOptions {
  /** An origin (OVERLAY_TWITCH_AUTH_URL): `/oauth2/...` is added. */
  authUrl: string;
  /** Where twitch.json is. */
  dataDir: string;
  fetch?: Fetch;
  log?: (line: string) => void;
}

/**
 * The sign-in in use: the tokens of twitch.json, renewed when they are about to end (or were refused),
 * the renewal written back. Twitch's refresh tokens for public clients are single-use, so concurrent
 * callers share one renewal rather than racing each other with the same refresh token.
 */
export class TwitchAuth {
  readonly #authUrl: string;
  readonly #fetch: Fetch;
  readonly #log: (line: string) => void;
  #tokens: TwitchTokens | undefined;
  /** A 401 said the access token no longer works. */
  #invalid = false;
  /** Twitch refused the refresh token: only a new `connect twitch` helps. */
  #gone = false;
  #pending: Promise<TwitchTokens | undefined> | undefined;

  constructor(private readonly options: TwitchAuthOptions) {
    this.#authUrl = options.authUrl.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
    this.#log = options.log ?? (() => {});
  }

  /**
   * The tokens to use now, renewed first when they end within 5 minutes or `invalidate()` was called;
   * `undefined` when there is no sign-in or it is gone (revoked, expired refresh token). Throws
   * TwitchAuthError when twitch.json cannot be read or Twitch cannot be reached for a needed renewal.
   */
  accessToken(): Promise<TwitchTokens | undefined> {
    this.#pending ??= this.#current().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The access token was refused (HTTP 401): the next `accessToken()` renews it. */
  invalidate(): void {
    this.#invalid = true;
  }

  /** Revokes the access token at Twitch (best effort: a failure is logged), then deletes twitch.json. */
  async disconnect(): Promise<void> {
    const tokens = this.#tokens ?? (await readTwitchTokens(this.options.dataDir).catch(() => undefined));
    if (tokens) {
      try {
        const answer = await call(this.#fetch, `${this.#authUrl}/oauth2/revoke`, {
          form: { client_id: tokens.clientId, token: tokens.accessToken },
          secrets: [tokens.accessToken],
        });
        // "Invalid token": it had ended already, which is what revoking wants.
        if (!answer.ok && answer.error !== 'invalid token')
          this.#log(
            `[twitch] Twitch did not revoke the sign-in (HTTP ${answer.status}); forgetting it here anyway`,
          );
      } catch (err) {
        this.#log(
          `[twitch] revoking the sign-in at Twitch failed (${errorMessage(err)}); forgetting it here anyway`,
        );
      }
    }
    await rm(twitchFile(this.options.dataDir), { force: true });
    this.#tokens = undefined;
    this.#invalid = false;
  }

  async #current(): Promise<TwitchTokens | undefined> {
    if (this.#gone) return undefined;
    this.#tokens ??= await readTwitchTokens(this.options.dataDir);
    let tokens = this.#tokens;
    if (!tokens) return undefined;
    if (!this.#invalid && Date.parse(tokens.expiresAt) - Date.now() > RENEW_BEFORE_MS) return tokens;
    // Another holder of the same sign-in (the Twitch source, the chat sender) may have renewed it since:
    // twitch.json then has the refresh token that still works (a public client's are single-use).
    const onDisk = await readTwitchTokens(this.options.dataDir).catch(() => undefined);
    if (onDisk && onDisk.userId === tokens.userId && onDisk.refreshToken !== tokens.refreshToken) {
      this.#tokens = tokens = onDisk;
      this.#invalid = false;
    }
    const endsInMs = Date.parse(tokens.expiresAt) - Date.now();
    if (!this.#invalid && endsInMs > RENEW_BEFORE_MS) return tokens;
    let renewed: TwitchTokens | undefined;
    try {
      renewed = await this.#refresh(tokens);
    } catch (err) {
      // Still good for a few minutes: use it, and try renewing again at the next call.
      if (!this.#invalid && endsInMs > 0) return tokens;
      throw err;
    }
    if (!renewed) {
      this.#gone = true;
      this.#log(`[twitch] the Twitch sign-in has ended (revoked, or unused for too long): ${CONNECT_AGAIN}`);
      return undefined;
    }
    this.#tokens = renewed;
    this.#invalid = false;
    try {
      await writeTwitchTokens(this.options.dataDir, renewed);
    } catch (err) {
      this.#log(
        `[twitch] the renewed sign-in could not be saved (${errorMessage(err)}); it is used until the daemon stops`,
      );
    }
    return renewed;
  }

  /** `POST /oauth2/token` with the refresh token; `undefined` when Twitch no longer accepts it. */
  async #refresh(tokens: TwitchTokens): Promise<TwitchTokens | undefined> {
    const answer = await call(this.#fetch, `${this.#authUrl}/oauth2/token`, {
      form: { grant_type: 'refresh_token', refresh_token: tokens.refreshToken, client_id: tokens.clientId },
      schema: TokenResponse,
      what: 'the renewal',
      secrets: [tokens.refreshToken],
    });
    if (!answer.ok) {
      if ((answer.status === 400 || answer.status === 401) && answer.error === 'invalid refresh token')
        return undefined;
      throw new TwitchAuthError(
        answer.status >= 500 ? 'unreachable' : 'rejected',
        `Twitch did not renew the sign-in (${statusOf(answer)})`,
      );
    }
    const granted = answer.value;
    return parseOrThrow({
      ...tokens,
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      expiresAt: new Date(Date.now() + granted.expires_in * 1000).toISOString(),
      scopes: granted.scope ?? tokens.scopes,
    });
  }
}
