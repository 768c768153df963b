// The licences' routes: membership login (decisions §2: /auth/membership → platform → /auth/callback →
// /auth/exchange) and logout here, a licence's renewal (`POST /validate`, validate.ts) and the keys that
// verify licences (`GET /.well-known/jwks.json`, jwks.ts).
import { Hono } from 'hono';
import * as v from 'valibot';
import { ExchangeRequest, parseJsonWith, Tier } from '../../../shared/protocol/index.js';

import { bytesToBase64Url, randomToken } from '../base64url.js';
import { loadRemoteConfig } from '../config/remote-config.js';
import type { AppEnv, GatekeeperEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { kickChannelOf } from '../kick/channel.js';
import { licenceBearer, signLicence, verifyLicence } from '../licence.js';
import { logoutMember, recordLogin } from '../membership/member-object.js';
import { memberEpoch, readMember } from '../membership/member-store.js';
import { patreonProvider } from '../membership/patreon.js';
import { MembershipError } from '../membership/provider.js';
import { resolveTier } from '../membership/tier.js';
import { limitBody } from '../middleware/body-limit.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { oneTimeStore } from '../one-time-store.js';
import { sealToken } from '../token-cipher.js';
import { jwksRoutes } from './jwks.js';
import { validateRoutes } from './validate.js';

const STATE_TTL_MS = 10 * 60 * 1000;
const CODE_TTL_MS = 120 * 1000;
const DEFAULT_APP_DEEP_LINK = 'overlay-daemon://auth';

/** Where the login ends: the app's deep link, or a loopback port of the app (RFC 8252 §7.3). */
const LoginTarget = v.variant('kind', [
  v.object({ kind: v.literal('deep-link') }),
  v.object({
    kind: v.literal('loopback'),
    port: v.pipe(v.number(), v.integer(), v.minValue(1024), v.maxValue(65535)),
  }),
]);
type LoginTarget = v.InferOutput<typeof LoginTarget>;
/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)), 43 characters for S256; the spec bounds it at 43–128. */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;
/** RFC 7636 §4.1: 43–128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** What the state stands for until the platform calls back: where the login ends, and its PKCE challenge. */
const PendingLogin = v.object({
  target: LoginTarget,
  challenge: v.optional(v.pipe(v.string(), v.regex(CODE_CHALLENGE))),
});
const PendingLicence = v.object({
  sub: v.pipe(v.string(), v.minLength(1)),
  tier: Tier,
  /** The member's epoch when the login was stored (codes issued before it was kept here have none). */
  epoch: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
  challenge: v.optional(v.pipe(v.string(), v.regex(CODE_CHALLENGE))),
});

async function s256(verifier: string): Promise<string> {
  return bytesToBase64Url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
}

/** Constant time for equal lengths: the comparison says nothing about how much of a guess was right. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The PKCE rule: a code issued to a login with a challenge needs the matching verifier;
 * a verifier for a login without one, a missing or a wrong one are all the same refusal.
 */
async function verifierMatches(
  challenge: string | undefined,
  verifier: string | undefined,
): Promise<boolean> {
  if (challenge === undefined) return verifier === undefined;
  if (verifier === undefined || !CODE_VERIFIER.test(verifier)) return false;
  return sameText(await s256(verifier), challenge);
}

/**
 * The only two places a login may end. Nothing from the request is used but a port number, so the
 * callback cannot be turned into an open redirect.
 */
function targetUrl(env: GatekeeperEnv, target: LoginTarget, params: Record<string, string>): string {
  const url =
    target.kind === 'loopback'
      ? new URL(`http://127.0.0.1:${target.port}/auth/done`)
      : new URL(env.APP_DEEP_LINK || DEFAULT_APP_DEEP_LINK);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}

const redirectUri = (env: GatekeeperEnv) => `${env.PUBLIC_BASE_URL.replace(/\/+$/, '')}/auth/callback`;

function noStoreRedirect(location: string): Response {
  return new Response(null, { status: 302, headers: { Location: location, 'Cache-Control': 'no-store' } });
}

export const authRoutes = new Hono<AppEnv>();

authRoutes.use('/auth/*', rateLimit('auth'));
// Decisions-2 §4: every /auth/* route stops reading a body past 4 KiB, chunked or not.
authRoutes.use('/auth/*', limitBody());

authRoutes.get('/auth/membership', async (c) => {
  const port = c.req.query('redirect_port');
  let target: LoginTarget = { kind: 'deep-link' };
  if (port !== undefined) {
    const value = /^[0-9]{1,5}$/.test(port) ? Number(port) : Number.NaN;
    if (!(value >= 1024 && value <= 65535)) {
      throw new ApiError('bad_request', 'redirect_port must be an integer from 1024 to 65535');
    }
    target = { kind: 'loopback', port: value };
  }
  const challenge = c.req.query('code_challenge');
  const method = c.req.query('code_challenge_method');
  if (challenge !== undefined || method !== undefined) {
    if (method !== 'S256')
      throw new ApiError(
        'bad_request',
        'code_challenge_method must be S256 (RFC 7636), with a code_challenge',
      );
    if (challenge === undefined || !CODE_CHALLENGE.test(challenge))
      throw new ApiError('bad_request', 'code_challenge must be 43 to 128 base64url characters (RFC 7636)');
  }
  const state = randomToken();
  const pending: v.InferOutput<typeof PendingLogin> = { target, ...(challenge ? { challenge } : {}) };
  await oneTimeStore(c.env, 'state').put(state, JSON.stringify(pending), STATE_TTL_MS);
  return noStoreRedirect(patreonProvider(c.env).authorizeUrl({ state, redirectUri: redirectUri(c.env) }));
});

authRoutes.get('/auth/callback', async (c) => {
  const state = c.req.query('state');
  if (!state) throw new ApiError('bad_request', 'state: the query parameter is required');
  const stored = state.length <= 128 ? await oneTimeStore(c.env, 'state').take(state) : null;
  const login = stored === null ? null : parseJsonWith(PendingLogin, stored);
  if (!login?.ok)
    throw new ApiError('invalid_state', 'The login state is unknown, used or expired; start again');
  const target = { value: login.value.target };

  // The user declined at the platform (RFC 6749 §4.1.2.1): tell the app, which shows it.
  const denied = c.req.query('error');
  if (denied !== undefined) {
    const error = /^[a-z_]{1,64}$/.test(denied) ? denied : 'access_denied';
    return noStoreRedirect(targetUrl(c.env, target.value, { error }));
  }
  const platformCode = c.req.query('code');
  if (!platformCode) throw new ApiError('bad_request', 'code: the query parameter is required');

  const provider = patreonProvider(c.env);
  try {
    const tokens = await provider.exchangeCode(platformCode, redirectUri(c.env));
    const [identity, config] = await Promise.all([
      provider.identity(tokens.accessToken),
      loadRemoteConfig(c.env),
    ]);
    const tier = resolveTier(identity, c.env.MEMBERSHIP_CAMPAIGN_ID, config.membership.tiers);
    // A new login keeps the member's epoch: licences revoked by a logout stay revoked.
    const epoch = await recordLogin(c.env, identity.userId, {
      tier,
      checked_at: Date.now(),
      refresh_token: await sealToken(c.env, identity.userId, tokens.refreshToken),
    });
    const code = randomToken();
    const pendingLicence: v.InferOutput<typeof PendingLicence> = {
      sub: identity.userId,
      tier,
      epoch,
      ...(login.value.challenge ? { challenge: login.value.challenge } : {}),
    };
    await oneTimeStore(c.env, 'code').put(code, JSON.stringify(pendingLicence), CODE_TTL_MS);
    return noStoreRedirect(targetUrl(c.env, target.value, { code }));
  } catch (err) {
    if (!(err instanceof MembershipError)) throw err;
    console.error('login failed at the membership platform:', err.message);
    throw new ApiError('upstream_error', 'The membership platform did not complete the login; try again');
  }
});

authRoutes.post('/auth/exchange', async (c) => {
  // The body limit (limitBody) has already stopped anything over 4 KiB, declared or chunked.
  const body = parseJsonWith(ExchangeRequest, await c.req.text());
  if (!body.ok) {
    throw new ApiError(
      'bad_request',
      body.field ? body.error : `${body.error}; expected {"code": "<string>"}`,
    );
  }
  const stored = await oneTimeStore(c.env, 'code').take(body.value.code);
  const pending = stored === null ? null : parseJsonWith(PendingLicence, stored);
  if (!pending?.ok) throw new ApiError('invalid_code', 'The code is unknown, used or expired; sign in again');
  // The code is spent either way: a wrong verifier cannot be retried against it.
  if (!(await verifierMatches(pending.value.challenge, body.value.code_verifier)))
    throw new ApiError('invalid_code', 'The code_verifier does not match this login; sign in again');
  // The epoch the login stored, or a later one in KV: a logout elsewhere meanwhile does not sign
  // out the licence of a login that finished after it.
  const epoch = Math.max(pending.value.epoch ?? 1, memberEpoch(await readMember(c.env, pending.value.sub)));
  const { token } = await signLicence(c.env, { sub: pending.value.sub, tier: pending.value.tier, epoch });
  c.header('Cache-Control', 'no-store');
  return c.json({ token, tier: pending.value.tier });
});

/**
 * Signs every licence of the member out at once: the epoch rises, and every licence
 * signed below it is refused by /validate and /tunnels/*; the member's Kick feed sockets close. The licence presented must itself be valid
 * and not revoked: a licence below the member's epoch is `invalid_token` here as everywhere, so a
 * stolen old licence cannot sign out the member's later logins.
 */
authRoutes.post('/auth/logout', async (c) => {
  const claims = await verifyLicence(c.env, licenceBearer(c.req.header('Authorization')));
  if (!(await logoutMember(c.env, claims.sub, claims.epoch ?? 1)))
    throw new ApiError('invalid_token', 'This licence was signed out; sign in again');
  // The daemon's Kick feed closes now (4403), not when its licence would have expired.
  try {
    await kickChannelOf(c.env, claims.sub).signOut((claims.epoch ?? 1) + 1);
  } catch (err) {
    console.error(`logout of ${claims.sub}: the Kick feed could not be closed:`, err);
  }
  c.header('Cache-Control', 'no-store');
  return c.body(null, 204);
});

authRoutes.all('/auth/membership', methodNotAllowed('GET'));
authRoutes.all('/auth/logout', methodNotAllowed('POST'));
authRoutes.all('/auth/callback', methodNotAllowed('GET'));
authRoutes.all('/auth/exchange', methodNotAllowed('POST'));

authRoutes.route('/', validateRoutes);
authRoutes.route('/', jwksRoutes);
