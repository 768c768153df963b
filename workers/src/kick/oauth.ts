// The Kick account link's OAuth 2.1 flow: an authorize URL with PKCE S256 whose verifier stays at the
// Gatekeeper, bound to the member by a single-use state in the one-time store.
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { bytesToBase64Url, randomToken } from '../base64url.js';
import type { GatekeeperEnv } from '../env.js';
import { oneTimeStore } from '../one-time-store.js';
import { kickAuthUrl } from './api.js';

/** Reading the account and channel, sending chat as the member, and subscribing to the channel's events. */
export const KICK_SCOPES = ['user:read', 'channel:read', 'chat:write', 'events:subscribe'] as const;
/** How long the member has to allow the link at Kick. */
export const KICK_STATE_TTL_MS = 10 * 60 * 1000;

/** What a state stands for until Kick calls back: whose link it is, and the PKCE verifier. */
const PendingKickLink = v.object({
  kind: v.literal('kick-link'),
  member: v.pipe(v.string(), v.minLength(1)),
  verifier: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._~-]{43,128}$/)),
});
type PendingKickLink = v.InferOutput<typeof PendingKickLink>;

export const kickRedirectUri = (env: GatekeeperEnv) =>
  `${env.PUBLIC_BASE_URL.replace(/\/+$/, '')}/kick/callback`;

async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return bytesToBase64Url(new Uint8Array(digest));
}

/** A fresh state and verifier for the member; the URL of Kick's consent page that carries them. */
export async function startKickLink(env: GatekeeperEnv, member: string): Promise<string> {
  const state = randomToken();
  // 32 random bytes in base64url: 43 characters, within RFC 7636's 43–128.
  const verifier = randomToken();
  const pending: PendingKickLink = { kind: 'kick-link', member, verifier };
  await oneTimeStore(env, 'state').put(state, JSON.stringify(pending), KICK_STATE_TTL_MS);
  const url = new URL(`${kickAuthUrl(env)}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: env.KICK_CLIENT_ID,
    redirect_uri: kickRedirectUri(env),
    scope: KICK_SCOPES.join(' '),
    code_challenge: await s256(verifier),
    code_challenge_method: 'S256',
    state,
  }).toString();
  return url.toString();
}

/** The member and verifier of a state, taken once: null when it is unknown, used, expired or not a Kick link's. */
export async function takeKickState(
  env: GatekeeperEnv,
  state: string,
): Promise<{ member: string; verifier: string } | null> {
  const stored = state.length <= 128 ? await oneTimeStore(env, 'state').take(state) : null;
  const pending = stored === null ? null : parseJsonWith(PendingKickLink, stored);
  return pending?.ok ? { member: pending.value.member, verifier: pending.value.verifier } : null;
}
