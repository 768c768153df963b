// Membership login (decisions §2): /auth/membership → platform → /auth/callback → /auth/exchange.
import { Hono } from 'hono';
import * as v from 'valibot';
import { ExchangeRequest, parseJsonWith, Tier } from '../../../shared/protocol/index.js';
import { randomToken } from '../base64url.js';
import type { AppEnv, GatekeeperEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { signLicence } from '../licence.js';
import { writeMember } from '../membership/member-store.js';
import { patreonProvider } from '../membership/patreon.js';
import { MembershipError } from '../membership/provider.js';
import { resolveTier } from '../membership/tier.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { oneTimeStore } from '../one-time-store.js';
import { loadRemoteConfig } from '../remote-config.js';
import { sealToken } from '../token-cipher.js';

const STATE_TTL_MS = 10 * 60 * 1000;
const CODE_TTL_MS = 120 * 1000;
const MAX_EXCHANGE_BODY_BYTES = 4096;
export const DEFAULT_APP_DEEP_LINK = 'overlay-daemon://auth';

/** Where the login ends: the app's deep link, or a loopback port of the app (RFC 8252 §7.3). */
const LoginTarget = v.variant('kind', [
  v.object({ kind: v.literal('deep-link') }),
  v.object({
    kind: v.literal('loopback'),
    port: v.pipe(v.number(), v.integer(), v.minValue(1024), v.maxValue(65535)),
  }),
]);
type LoginTarget = v.InferOutput<typeof LoginTarget>;
const PendingLicence = v.object({ sub: v.pipe(v.string(), v.minLength(1)), tier: Tier });

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
  const state = randomToken();
  await oneTimeStore(c.env, 'state').put(state, JSON.stringify(target), STATE_TTL_MS);
  return noStoreRedirect(patreonProvider(c.env).authorizeUrl({ state, redirectUri: redirectUri(c.env) }));
});

authRoutes.get('/auth/callback', async (c) => {
  const state = c.req.query('state');
  if (!state) throw new ApiError('bad_request', 'state: the query parameter is required');
  const stored = state.length <= 128 ? await oneTimeStore(c.env, 'state').take(state) : null;
  const target = stored === null ? null : parseJsonWith(LoginTarget, stored);
  if (!target?.ok)
    throw new ApiError('invalid_state', 'The login state is unknown, used or expired; start again');

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
    await writeMember(c.env, identity.userId, {
      tier,
      checked_at: Date.now(),
      refresh_token: await sealToken(c.env, identity.userId, tokens.refreshToken),
    });
    const code = randomToken();
    await oneTimeStore(c.env, 'code').put(code, JSON.stringify({ sub: identity.userId, tier }), CODE_TTL_MS);
    return noStoreRedirect(targetUrl(c.env, target.value, { code }));
  } catch (err) {
    if (!(err instanceof MembershipError)) throw err;
    console.error('login failed at the membership platform:', err.message);
    throw new ApiError('upstream_error', 'The membership platform did not complete the login; try again');
  }
});

authRoutes.post('/auth/exchange', async (c) => {
  // Limits first: a declared length over the limit is refused before the body is read.
  if (Number(c.req.header('Content-Length') ?? 0) > MAX_EXCHANGE_BODY_BYTES) {
    throw new ApiError('payload_too_large', `The body is larger than ${MAX_EXCHANGE_BODY_BYTES} bytes`);
  }
  const text = await c.req.text();
  if (text.length > MAX_EXCHANGE_BODY_BYTES) {
    throw new ApiError('payload_too_large', `The body is larger than ${MAX_EXCHANGE_BODY_BYTES} bytes`);
  }
  const body = parseJsonWith(ExchangeRequest, text);
  if (!body.ok) {
    throw new ApiError(
      'bad_request',
      body.field ? body.error : `${body.error}; expected {"code": "<string>"}`,
    );
  }
  const stored = await oneTimeStore(c.env, 'code').take(body.value.code);
  const pending = stored === null ? null : parseJsonWith(PendingLicence, stored);
  if (!pending?.ok) throw new ApiError('invalid_code', 'The code is unknown, used or expired; sign in again');
  const { token } = await signLicence(c.env, pending.value);
  c.header('Cache-Control', 'no-store');
  return c.json({ token, tier: pending.value.tier });
});

authRoutes.all('/auth/membership', methodNotAllowed('GET'));
authRoutes.all('/auth/callback', methodNotAllowed('GET'));
authRoutes.all('/auth/exchange', methodNotAllowed('POST'));
