// Kick's OAuth server and public API as the Gatekeeper uses them: the token endpoint (code with PKCE,
// refresh), revocation, the token's own channel, event subscriptions and chat. Every answer is checked
// against a schema; every failure is a KickApiError that says what Kick answered.
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';

const DEFAULT_API_URL = 'https://api.kick.com';
const DEFAULT_AUTH_URL = 'https://id.kick.com';
/** A slow Kick must not hold a request (or the cron) open for long. */
const TIMEOUT_MS = 8000;

export const kickApiUrl = (env: GatekeeperEnv) => (env.KICK_API_URL || DEFAULT_API_URL).replace(/\/+$/, '');
export const kickAuthUrl = (env: GatekeeperEnv) =>
  (env.KICK_AUTH_URL || DEFAULT_AUTH_URL).replace(/\/+$/, '');

/**
 * What went wrong talking to Kick: `status` is Kick's HTTP status (0: no answer at all), `retryAfter`
 * its Retry-After in seconds when it gave one, `oauthError` the `error` of a token endpoint refusal.
 */
export class KickApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfter?: number,
    readonly oauthError?: string,
  ) {
    super(message);
  }
  /**
   * Kick's token endpoint refused the grant itself (a code or refresh token it no longer accepts: 400):
   * the member must connect again. A refused client (401, a wrong KICK_CLIENT_SECRET) is the operator's
   * to fix, not the member's, and counts as Kick failing.
   */
  get grantRefused(): boolean {
    return this.oauthError === 'invalid_grant' || this.status === 400;
  }
}

const TokenAnswer = v.object({
  access_token: v.pipe(v.string(), v.minLength(1)),
  refresh_token: v.pipe(v.string(), v.minLength(1)),
  // Kick's documentation shows the fields as strings; its server sends a number.
  expires_in: v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^[0-9]+$/), v.transform(Number))]),
    v.number(),
    v.minValue(0),
  ),
  scope: v.optional(v.string(), ''),
});
export type KickTokens = { accessToken: string; refreshToken: string; expiresAt: number; scope: string };

const OAuthError = v.object({ error: v.string() });

const Channel = v.object({
  broadcaster_user_id: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  slug: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
});
const ChannelsAnswer = v.object({ data: v.array(Channel) });
export type KickChannel = { broadcasterUserId: number; slug: string };

const Subscription = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  event: v.string(),
  version: v.number(),
  broadcaster_user_id: v.optional(v.number()),
});
const SubscriptionsAnswer = v.object({ data: v.array(Subscription) });
export type KickSubscription = v.InferOutput<typeof Subscription>;
const CreatedAnswer = v.object({
  data: v.array(
    v.object({
      name: v.string(),
      subscription_id: v.optional(v.nullable(v.string())),
      error: v.optional(v.nullable(v.string())),
    }),
  ),
});

const ChatAnswer = v.object({
  data: v.object({ is_sent: v.boolean(), message_id: v.optional(v.nullable(v.string())) }),
});

/** Retry-After in seconds (Kick sends seconds), when present and sane. */
function retryAfterOf(res: Response): number | undefined {
  const value = res.headers.get('Retry-After');
  if (value === null || !/^[0-9]{1,6}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

async function call(what: string, url: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new KickApiError(`${what}: Kick did not answer (${(err as Error).message})`, 0);
  }
  if (res.ok) return res;
  const text = await res.text().catch(() => '');
  const oauth = parseJsonWith(OAuthError, text);
  throw new KickApiError(
    `${what}: Kick answered ${res.status}`,
    res.status,
    retryAfterOf(res),
    oauth.ok ? oauth.value.error : undefined,
  );
}

async function json<S extends v.GenericSchema>(
  what: string,
  res: Response,
  schema: S,
): Promise<v.InferOutput<S>> {
  const parsed = parseJsonWith(schema, await res.text());
  if (!parsed.ok)
    throw new KickApiError(`${what}: Kick's answer is not as documented (${parsed.error})`, 502);
  return parsed.value;
}

const bearer = (accessToken: string) => ({ Authorization: `Bearer ${accessToken}` });

async function tokenGrant(
  env: GatekeeperEnv,
  what: string,
  fields: Record<string, string>,
): Promise<KickTokens> {
  const res = await call(what, `${kickAuthUrl(env)}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams({
      client_id: env.KICK_CLIENT_ID,
      client_secret: env.KICK_CLIENT_SECRET,
      ...fields,
    }).toString(),
  });
  const answer = await json(what, res, TokenAnswer);
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    expiresAt: Date.now() + answer.expires_in * 1000,
    scope: answer.scope,
  };
}

/** The authorization code, with the PKCE verifier its challenge was made from. */
export const exchangeCode = (env: GatekeeperEnv, code: string, verifier: string, redirectUri: string) =>
  tokenGrant(env, 'code exchange', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
  });

/** New tokens for a refresh token (Kick rotates it: the old one is spent). */
export const refreshTokens = (env: GatekeeperEnv, refreshToken: string) =>
  tokenGrant(env, 'token refresh', { grant_type: 'refresh_token', refresh_token: refreshToken });

/** Revokes a token at Kick (its parameters go in the query, as Kick documents). */
export async function revokeToken(
  env: GatekeeperEnv,
  token: string,
  hint: 'access_token' | 'refresh_token',
): Promise<void> {
  const query = new URLSearchParams({ token, token_hint_type: hint });
  await call('revocation', `${kickAuthUrl(env)}/oauth/revoke?${query}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
}

/** The channel of the token's own user: its slug and broadcaster user id. */
export async function ownChannel(env: GatekeeperEnv, accessToken: string): Promise<KickChannel> {
  const res = await call('channel lookup', `${kickApiUrl(env)}/public/v1/channels`, {
    headers: bearer(accessToken),
  });
  const channel = (await json('channel lookup', res, ChannelsAnswer)).data[0];
  if (!channel) throw new KickApiError('channel lookup: Kick named no channel for this account', 502);
  return { broadcasterUserId: channel.broadcaster_user_id, slug: channel.slug };
}

/** The application's event subscriptions that this token can see. */
export async function listSubscriptions(
  env: GatekeeperEnv,
  accessToken: string,
): Promise<KickSubscription[]> {
  const res = await call('subscription list', `${kickApiUrl(env)}/public/v1/events/subscriptions`, {
    headers: bearer(accessToken),
  });
  return (await json('subscription list', res, SubscriptionsAnswer)).data;
}

/** Subscribes the application to these events of the channel, delivered as webhooks; the ids Kick gave. */
export async function createSubscriptions(
  env: GatekeeperEnv,
  accessToken: string,
  broadcasterUserId: number,
  events: readonly string[],
): Promise<string[]> {
  const res = await call('subscription', `${kickApiUrl(env)}/public/v1/events/subscriptions`, {
    method: 'POST',
    headers: { ...bearer(accessToken), 'Content-Type': 'application/json' },
    body: JSON.stringify({
      broadcaster_user_id: broadcasterUserId,
      events: events.map((name) => ({ name, version: 1 })),
      method: 'webhook',
    }),
  });
  const created = (await json('subscription', res, CreatedAnswer)).data;
  const refused = created.filter((item) => item.error || !item.subscription_id);
  if (refused.length > 0) {
    const names = refused.map((item) => `${item.name}${item.error ? ` (${item.error})` : ''}`).join(', ');
    throw new KickApiError(`subscription: Kick refused ${names}`, 502);
  }
  return created.map((item) => item.subscription_id ?? '');
}

export async function deleteSubscriptions(
  env: GatekeeperEnv,
  accessToken: string,
  ids: string[],
): Promise<void> {
  if (ids.length === 0) return;
  const query = new URLSearchParams(ids.map((id) => ['id', id]));
  await call('unsubscription', `${kickApiUrl(env)}/public/v1/events/subscriptions?${query}`, {
    method: 'DELETE',
    headers: bearer(accessToken),
  });
}

/** Sends a chat message as the token's user to a channel; Kick's message id when it gave one. */
export async function postChat(
  env: GatekeeperEnv,
  accessToken: string,
  broadcasterUserId: number,
  content: string,
): Promise<{ sent: boolean; messageId?: string }> {
  const res = await call('chat', `${kickApiUrl(env)}/public/v1/chat`, {
    method: 'POST',
    headers: { ...bearer(accessToken), 'Content-Type': 'application/json' },
    body: JSON.stringify({ broadcaster_user_id: broadcasterUserId, content, type: 'user' }),
  });
  const { data } = await json('chat', res, ChatAnswer);
  return { sent: data.is_sent, ...(data.message_id ? { messageId: data.message_id } : {}) };
}
