// Signing in to YouTube for chat sending (decisions-3 §12): Google's OAuth 2.0 flow for TVs and
// limited-input devices (a code shown in the terminal, entered at google.com/device), with the Google
// client the Gatekeeper's configuration names (`platforms.youtube.oauth_client_id` and
// `oauth_client_secret`: Google treats the secret of such a client as not confidential). The tokens are
// kept in youtube.json (mode 0600), renewed with the refresh token, and revoked on `disconnect youtube`.
import * as v from 'valibot';
import type { RemoteConfig } from '../../../../shared/config.js';
import { parseWith } from '../../../../shared/protocol/index.js';
import { DaemonError, type DaemonErrorCode, errorMessage } from '../../errors.js';
import { FetchError, fetchJson } from '../../http-client/fetch-json.js';
import { systemTimers, type Timers } from '../../timers.js';
import type { ConfigArrival } from '../credentials.js';
import { pollDeviceToken, SIGN_IN_CANCELLED } from '../device-flow.js';
import { DEFAULT_PLATFORM_URLS } from '../platform-urls.js';
import {
  readYouTubeTokens,
  removeYouTubeTokens,
  writeYouTubeTokens,
  type YouTubeTokens,
} from './token-file.js';

/** The scope liveChatMessages.insert needs (youtube.force-ssl: manage the account's YouTube, over TLS). */
export const YOUTUBE_SCOPE = 'https://www.googleapis.com/auth/youtube.force-ssl';
/** Scopes that also allow writing in a live chat. */
const WRITING_SCOPES = [YOUTUBE_SCOPE, 'https://www.googleapis.com/auth/youtube'];

/** Google's sign-in service, when OVERLAY_GOOGLE_AUTH_URL does not say otherwise. */
export const DEFAULT_GOOGLE_AUTH_URL = DEFAULT_PLATFORM_URLS.googleAuth ?? 'https://oauth2.googleapis.com';

/** Every request to Google's sign-in service gives up after this long. */
const REQUEST_TIMEOUT_MS = 10_000;
/** A token this close to its end is renewed before use (Google's last an hour). */
const RENEW_BEFORE_MS = 5 * 60_000;
export const CONNECT_YOUTUBE = 'run "overlay-daemon connect youtube"';

/** The Google client of the operator's configuration. */
export interface GoogleClient {
  clientId: string;
  clientSecret: string;
}

/** The Google client the Gatekeeper's configuration names, when it names both halves. */
export function googleClientOf(config: RemoteConfig | undefined): GoogleClient | undefined {
  const youtube = config?.platforms?.youtube;
  if (!youtube?.oauth_client_id || !youtube.oauth_client_secret) return undefined;
  return { clientId: youtube.oauth_client_id, clientSecret: youtube.oauth_client_secret };
}

/** Which half of the Google client the configuration lacks, in its own field names. */
function missingFields(config: RemoteConfig | undefined): string {
  const youtube = config?.platforms?.youtube;
  if (youtube?.oauth_client_id && !youtube.oauth_client_secret)
    return 'platforms.youtube.oauth_client_secret';
  if (!youtube?.oauth_client_id && youtube?.oauth_client_secret) return 'platforms.youtube.oauth_client_id';
  return 'platforms.youtube.oauth_client_id and oauth_client_secret';
}

/**
 * No Google client is configured: nothing to sign in or send with. Said by what became of the
 * Gatekeeper's config: on its way, out of reach, or without one (naming the fields it lacks).
 */
export function noGoogleClient(arrival: ConfigArrival, config?: RemoteConfig): string {
  switch (arrival) {
    case 'waiting':
      return "waiting for the Gatekeeper's configuration, which names the Google client YouTube sign-ins use";
    case 'unreachable':
      return "cannot reach the Gatekeeper, whose configuration names the Google client YouTube sign-ins use: check this computer's connection";
    case 'arrived':
      return `the Gatekeeper's configuration names no Google client (${missingFields(config)}): its operator sets one up (docs/platforms.md, YouTube chat sending)`;
  }
}

export class NoGoogleClient extends DaemonError {
  constructor(arrival: ConfigArrival = 'arrived', config?: RemoteConfig) {
    super('not_configured', noGoogleClient(arrival, config));
    this.name = 'NoGoogleClient';
  }
}

/** Why a sign-in step failed; the message says it in full. */
export type GoogleAuthErrorCode = Extract<
  DaemonErrorCode,
  'expired' | 'denied' | 'rejected' | 'unreachable' | 'bad_response' | 'aborted' | 'signed_out'
>;

export class GoogleAuthError extends DaemonError {
  declare readonly code: GoogleAuthErrorCode;
  constructor(code: GoogleAuthErrorCode, message: string) {
    super(code, message);
    this.name = 'GoogleAuthError';
  }
}

/** Whether a sign-in's scopes allow writing in a live chat. */
export function canWriteChat(tokens: Pick<YouTubeTokens, 'scopes'>): boolean {
  return tokens.scopes.some((scope) => WRITING_SCOPES.includes(scope));
}

const nonEmpty = v.pipe(v.string(), v.minLength(1));
// Google's answers, as its sign-in service sends them.
const DeviceResponse = v.object({
  device_code: nonEmpty,
  user_code: nonEmpty,
  verification_url: v.pipe(v.string(), v.url()),
  expires_in: v.pipe(v.number(), v.integer(), v.minValue(1)),
  interval: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 5),
});
const TokenResponse = v.object({
  access_token: nonEmpty,
  expires_in: v.pipe(v.number(), v.minValue(0)),
  /** Given with the first tokens; a renewal usually keeps the one there was. */
  refresh_token: v.optional(nonEmpty),
  scope: v.optional(v.string()),
  token_type: v.optional(v.string()),
});
/** An OAuth error: `{"error": "authorization_pending", "error_description": "Precondition Required"}`. */
const OAuthError = v.object({ error: v.string(), error_description: v.optional(v.string()) });
/** `channels?part=snippet&mine=true`: the signed-in account's channel. */
const MyChannel = v.looseObject({
  items: v.optional(
    v.array(
      v.looseObject({ id: nonEmpty, snippet: v.optional(v.looseObject({ title: v.optional(v.string()) })) }),
    ),
    [],
  ),
});

type Fetch = typeof fetch;
type Reply<T> = { ok: true; value: T } | { ok: false; status: number; error: string; description: string };

/** One form POST to Google's sign-in service; a refusal is the reply, no answer throws GoogleAuthError. */
async function post<S extends v.GenericSchema>(
  doFetch: Fetch,
  url: string,
  form: Record<string, string>,
  schema: S,
  what: string,
  secrets: readonly string[],
  signal?: AbortSignal,
): Promise<Reply<v.InferOutput<S>>> {
  try {
    const answer = await fetchJson(url, {
      form,
      schema,
      timeoutMs: REQUEST_TIMEOUT_MS,
      secrets,
      service: 'Google',
      fetch: doFetch,
      ...(signal ? { signal } : {}),
    });
    return { ok: true, value: answer.value };
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    if (err.code === 'aborted') throw new GoogleAuthError('aborted', SIGN_IN_CANCELLED);
    if (err.code === 'bad_response')
      throw new GoogleAuthError(
        'bad_response',
        `Google's answer to ${what} is not understood: ${err.reason}`,
      );
    if (err.status !== undefined) {
      const parsed = parseWith(OAuthError, err.body);
      return {
        ok: false,
        status: err.status,
        error: parsed.ok ? parsed.value.error : '',
        description: parsed.ok ? (parsed.value.error_description ?? '') : '',
      };
    }
    const why = err.code === 'timeout' ? `no answer in ${REQUEST_TIMEOUT_MS / 1000} s` : err.reason;
    throw new GoogleAuthError('unreachable', `could not reach Google at ${new URL(url).origin}: ${why}`);
  }
}

function refusal(reply: { status: number; error: string; description: string }): string {
  const said = [reply.error, reply.description].filter(Boolean).join(': ');
  return `HTTP ${reply.status}${said ? `: ${said}` : ''}`;
}

/** The signed-in account's channel (1 unit); undefined when it has none or YouTube does not say. */
async function myChannel(
  doFetch: Fetch,
  youtubeApi: string,
  accessToken: string,
): Promise<{ channelId: string; channelTitle?: string } | undefined> {
  try {
    const answer = await fetchJson(`${youtubeApi.replace(/\/+$/, '')}/channels?part=snippet&mine=true`, {
      headers: { Authorization: `Bearer ${accessToken}` },
      schema: MyChannel,
      timeoutMs: REQUEST_TIMEOUT_MS,
      service: 'the YouTube Data API (channels)',
      fetch: doFetch,
    });
    const item = answer.value.items[0];
    if (!item) return undefined;
    const title = item.snippet?.title?.trim();
    return { channelId: item.id, ...(title ? { channelTitle: title } : {}) };
  } catch {
    return undefined;
  }
}

export interface YouTubeDeviceFlowOptions {
  /** An origin (OVERLAY_GOOGLE_AUTH_URL): `/device/code` and `/token` are added. */
  authUrl: string;
  /** The Data API root (OVERLAY_YOUTUBE_API_URL), to learn the signed-in account's channel. */
  youtubeApi: string;
  client: GoogleClient;
  /** When given, `wait()` also writes the tokens to youtube.json there before it resolves. */
  dataDir?: string;
  fetch?: Fetch;
  /** The waits between polls, and the clock the code's lifetime is counted on. */
  timers?: Timers;
}

/** A device flow under way: show the code and the link, then `wait()`. */
export interface YouTubeDeviceFlow {
  userCode: string;
  verificationUrl: string;
  /** How long the code works. */
  expiresInS: number;
  /**
   * Polls until the streamer allows (resolves with the tokens), refuses, or the code expires (rejects
   * with a GoogleAuthError saying which). An aborted `signal` rejects with code `aborted`.
   */
  wait(signal?: AbortSignal): Promise<YouTubeTokens>;
}

/** Starts the flow: `POST /device/code {client_id, scope}`. Throws GoogleAuthError. */
export async function startYouTubeDeviceFlow(options: YouTubeDeviceFlowOptions): Promise<YouTubeDeviceFlow> {
  const doFetch = options.fetch ?? fetch;
  const timers = options.timers ?? systemTimers();
  const authUrl = options.authUrl.replace(/\/+$/, '');
  const { clientId, clientSecret } = options.client;
  const started = await post(
    doFetch,
    `${authUrl}/device/code`,
    { client_id: clientId, scope: YOUTUBE_SCOPE },
    DeviceResponse,
    'the sign-in request',
    [clientSecret],
  );
  if (!started.ok)
    throw new GoogleAuthError(
      'rejected',
      `Google refused to start the sign-in (${refusal(started)}); the Gatekeeper's Google client may be wrong, or not of the type "TVs and Limited Input devices"`,
    );
  const device = started.value;

  async function poll(signal: AbortSignal | undefined): Promise<YouTubeTokens> {
    const granted = await pollDeviceToken({
      intervalS: device.interval,
      expiresInS: device.expires_in,
      timers,
      signal,
      requestToken: (signal) =>
        post(
          doFetch,
          `${authUrl}/token`,
          {
            client_id: clientId,
            client_secret: clientSecret,
            device_code: device.device_code,
            grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          },
          TokenResponse,
          'the sign-in',
          [clientSecret, device.device_code],
          signal,
        ),
      errorOf: (reply) => reply.error,
      errorClass: GoogleAuthError,
      words: {
        expired:
          'the code expired before it was entered at Google; run "overlay-daemon connect youtube" again',
        denied: 'the sign-in was refused on Google; run "overlay-daemon connect youtube" again to retry',
        refused: (reply) => `Google refused the sign-in (${refusal(reply)})`,
      },
    });
    if (!granted.refresh_token)
      throw new GoogleAuthError('bad_response', 'Google gave no refresh token; start the sign-in again');
    const channel = await myChannel(doFetch, options.youtubeApi, granted.access_token);
    const tokens: YouTubeTokens = {
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      expiresAt: new Date(Date.now() + granted.expires_in * 1000).toISOString(),
      scopes: granted.scope ? granted.scope.split(' ').filter(Boolean) : [YOUTUBE_SCOPE],
      clientId,
      ...channel,
    };
    if (options.dataDir) await writeYouTubeTokens(options.dataDir, tokens);
    return tokens;
  }

  return {
    userCode: device.user_code,
    verificationUrl: device.verification_url,
    expiresInS: device.expires_in,
    wait: (signal) => poll(signal),
  };
}

/** Renews an access token (`grant_type=refresh_token`); `undefined` when Google no longer accepts the refresh token. */
export async function refreshYouTubeTokens(
  tokens: YouTubeTokens,
  options: { authUrl: string; client: GoogleClient; fetch?: Fetch },
): Promise<YouTubeTokens | undefined> {
  const authUrl = options.authUrl.replace(/\/+$/, '');
  const answer = await post(
    options.fetch ?? fetch,
    `${authUrl}/token`,
    {
      client_id: options.client.clientId,
      client_secret: options.client.clientSecret,
      refresh_token: tokens.refreshToken,
      grant_type: 'refresh_token',
    },
    TokenResponse,
    'the renewal',
    [options.client.clientSecret, tokens.refreshToken],
  );
  if (!answer.ok) {
    // invalid_grant: revoked, expired (unused six months, or a test app's seven days), or the password changed.
    if (answer.error === 'invalid_grant') return undefined;
    throw new GoogleAuthError(
      answer.status >= 500 ? 'unreachable' : 'rejected',
      `Google did not renew the YouTube sign-in (${refusal(answer)})`,
    );
  }
  const granted = answer.value;
  return {
    ...tokens,
    accessToken: granted.access_token,
    refreshToken: granted.refresh_token ?? tokens.refreshToken,
    expiresAt: new Date(Date.now() + granted.expires_in * 1000).toISOString(),
    scopes: granted.scope ? granted.scope.split(' ').filter(Boolean) : tokens.scopes,
  };
}

/** Whether a token ends within the renewal margin (or has ended). */
export function endsSoon(tokens: YouTubeTokens, now = Date.now()): boolean {
  return Date.parse(tokens.expiresAt) - now <= RENEW_BEFORE_MS;
}

/**
 * Forgets the YouTube sign-in: revokes it at Google (best effort: a failure is logged) and deletes
 * youtube.json. Resolves with the sign-in there was, if any.
 */
export async function disconnectYouTube(options: {
  authUrl: string;
  dataDir: string;
  fetch?: Fetch;
  log?: (line: string) => void;
}): Promise<YouTubeTokens | undefined> {
  const tokens = await readYouTubeTokens(options.dataDir).catch(() => undefined);
  if (tokens) {
    const url = `${options.authUrl.replace(/\/+$/, '')}/revoke`;
    try {
      // Revoking the refresh token ends the access tokens issued with it too.
      await fetchJson(url, {
        form: { token: tokens.refreshToken },
        timeoutMs: REQUEST_TIMEOUT_MS,
        secrets: [tokens.refreshToken],
        service: 'Google',
        fetch: options.fetch ?? fetch,
      });
    } catch (err) {
      // invalid_token: it had ended already, which is what revoking wants.
      const said = err instanceof FetchError ? parseWith(OAuthError, err.body) : undefined;
      if (!(said?.ok && said.value.error === 'invalid_token'))
        options.log?.(
          `[youtube] revoking the sign-in at Google failed (${errorMessage(err)}); forgetting it here anyway`,
        );
    }
  }
  await removeYouTubeTokens(options.dataDir);
  return tokens;
}
