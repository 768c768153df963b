import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExchangeResponse, parseWith } from '../../shared/protocol/index.js';
import { randomToken } from '../../workers/src/base64url.js';
import { oneTimeStore } from '../../workers/src/one-time-store.js';
import {
  authorizeAt,
  gatekeeper,
  injectFailure,
  location,
  login,
  PREMIUM_TIER_ID,
  patreonBase,
  patreonCounters,
  postJson,
  premiumPatron,
  prepareLoginSuite,
  SUPPORTER_TIER_ID,
  setPatreonUser,
  uniqueIp,
  uniqueUserId,
  validate,
  WARM_UP_TIMEOUT_MS,
} from './helpers/gatekeeper.js';

const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

beforeAll(prepareLoginSuite, WARM_UP_TIMEOUT_MS);

describe('GET /auth/membership', () => {
  it('redirects to the platform with the OAuth parameters and a fresh state', async () => {
    const first = await gatekeeper('/auth/membership');
    expect(first.status).toBe(302);
    const url = location(first);
    expect(`${url.origin}${url.pathname}`).toBe(`${patreonBase()}/oauth2/authorize`);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('client_id')).toBe('test-client-id');
    expect(url.searchParams.get('redirect_uri')).toBe('http://gatekeeper.test/auth/callback');
    expect(url.searchParams.get('scope')).toBe('identity identity.memberships');
    const state = url.searchParams.get('state');
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const second = location(await gatekeeper('/auth/membership'));
    expect(second.searchParams.get('state')).not.toBe(state);
  });

  it.each(['0', '80', '1023', '65536', 'abc', '8080.5', ' 8080', '8080/evil', '-1', ''])(
    'refuses redirect_port=%j with 400 bad_request naming the field',
    async (port) => {
      const res = await gatekeeper(`/auth/membership?redirect_port=${encodeURIComponent(port)}`);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message).toContain('redirect_port');
    },
  );
});

describe('the whole login', () => {
  it('takes an active patron from /auth/membership to a validated Premium licence', async () => {
    const user = uniqueUserId('login-premium');
    await premiumPatron(user);
    const { token, tier, deepLink } = await login(user);
    expect(`${deepLink.protocol}//${deepLink.host}`).toBe('overlay-daemon://auth');
    expect(tier).toBe('premium');
    expect(parseWith(ExchangeResponse, { token, tier }).ok).toBe(true);
    const validated = await validate(token);
    expect(validated.status).toBe(200);
    expect(await validated.json()).toMatchObject({ tier: 'premium' });
  });

  it('ends at the loopback address when the app asked for redirect_port', async () => {
    const user = uniqueUserId('login-loopback');
    await premiumPatron(user);
    const ip = uniqueIp();
    const { callback } = await authorizeAt(user, { ip, query: '?redirect_port=53682' });
    const done = await gatekeeper(`${callback.pathname}${callback.search}`, { ip });
    expect(done.status).toBe(302);
    const target = location(done);
    expect(`${target.origin}${target.pathname}`).toBe('http://127.0.0.1:53682/auth/done');
    const exchanged = await postJson('/auth/exchange', { code: target.searchParams.get('code') }, ip);
    expect(exchanged.status).toBe(200);
  });

  it('ignores every other redirect target a caller slips in (no open redirect)', async () => {
    const user = uniqueUserId('login-open-redirect');
    await premiumPatron(user);
    const ip = uniqueIp();
    const evil = encodeURIComponent('https://evil.example/steal');
    const { authorize, callback } = await authorizeAt(user, {
      ip,
      query: `?redirect_uri=${evil}&next=${evil}&return_to=${evil}&redirect=${evil}`,
    });
    expect(authorize.searchParams.get('redirect_uri')).toBe('http://gatekeeper.test/auth/callback');
    const done = await gatekeeper(
      `${callback.pathname}${callback.search}&redirect_uri=${evil}&next=${evil}`,
      {
        ip,
      },
    );
    expect(done.status).toBe(302);
    expect(location(done).href.startsWith('overlay-daemon://auth?code=')).toBe(true);
  });

  it('stores the platform refresh token encrypted, never in clear', async () => {
    const user = uniqueUserId('login-sealed');
    await premiumPatron(user);
    await login(user);
    const stored = await env.GATEKEEPER_KV.get(`member:${user}`);
    const { last_refresh_token: refreshToken } = await patreonCounters(user);
    expect(refreshToken).toBeTruthy();
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(refreshToken);
    expect(stored).toMatch(/"refresh_token":"v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"/);
  });

  it('tells the app when the person declined at the platform', async () => {
    const ip = uniqueIp();
    const start = location(await gatekeeper('/auth/membership', { ip }));
    start.searchParams.set('login_hint', 'deny');
    const back = location(await fetch(start, { redirect: 'manual' }));
    const done = await gatekeeper(`${back.pathname}${back.search}`, { ip });
    expect(done.status).toBe(302);
    const target = location(done);
    expect(target.searchParams.get('error')).toBe('access_denied');
    expect(target.searchParams.has('code')).toBe(false);
  });
});

describe('tier resolution at login', () => {
  const cases: [string, Parameters<typeof setPatreonUser>[1], 'free' | 'premium'][] = [
    [
      'a declined patron',
      { patron_status: 'declined_patron', tiers: [{ id: PREMIUM_TIER_ID, amount_cents: 500 }] },
      'free',
    ],
    [
      'a former patron',
      { patron_status: 'former_patron', tiers: [{ id: PREMIUM_TIER_ID, amount_cents: 500 }] },
      'free',
    ],
    ['someone who never pledged', { patron_status: null }, 'free'],
    [
      'an active patron of another campaign',
      {
        patron_status: 'active_patron',
        campaign_id: '2000',
        tiers: [{ id: PREMIUM_TIER_ID, amount_cents: 500 }],
      },
      'free',
    ],
    [
      'an active patron of an unmapped tier',
      { patron_status: 'active_patron', tiers: [{ id: 't-x', amount_cents: 900 }] },
      'free',
    ],
    [
      'an active patron whose most expensive tier is Premium',
      {
        patron_status: 'active_patron',
        tiers: [
          { id: SUPPORTER_TIER_ID, amount_cents: 100 },
          { id: PREMIUM_TIER_ID, amount_cents: 500 },
        ],
      },
      'premium',
    ],
    [
      'an active patron whose most expensive tier maps to Free',
      {
        patron_status: 'active_patron',
        tiers: [
          { id: SUPPORTER_TIER_ID, amount_cents: 2000 },
          { id: PREMIUM_TIER_ID, amount_cents: 500 },
        ],
      },
      'free',
    ],
  ];
  it.each(cases)('%s gets %s', async (_label, setup, expected) => {
    const user = uniqueUserId('tier');
    await setPatreonUser(user, setup);
    expect((await login(user)).tier).toBe(expected);
  });
});

describe('GET /auth/callback errors', () => {
  it('refuses a reused state with 400 invalid_state', async () => {
    const user = uniqueUserId('state-reuse');
    await premiumPatron(user);
    const ip = uniqueIp();
    const { callback } = await authorizeAt(user, { ip });
    expect((await gatekeeper(`${callback.pathname}${callback.search}`, { ip })).status).toBe(302);
    const again = await gatekeeper(`${callback.pathname}${callback.search}`, { ip });
    expect(again.status).toBe(400);
    expect(await errorOf(again)).toBe('invalid_state');
  });

  it('refuses an unknown state with 400 invalid_state, and a missing one with bad_request', async () => {
    const unknown = await gatekeeper('/auth/callback?code=abc&state=not-a-state-we-issued');
    expect(unknown.status).toBe(400);
    expect(await errorOf(unknown)).toBe('invalid_state');
    const missing = await gatekeeper('/auth/callback?code=abc');
    expect(missing.status).toBe(400);
    const body = (await missing.json()) as { error: { code: string; message: string } };
    expect(body.error).toEqual({ code: 'bad_request', message: expect.stringContaining('state') });
  });

  it('refuses a callback without the platform code', async () => {
    const ip = uniqueIp();
    const state = location(await gatekeeper('/auth/membership', { ip })).searchParams.get('state');
    const res = await gatekeeper(`/auth/callback?state=${state}`, { ip });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toEqual({ code: 'bad_request', message: expect.stringContaining('code') });
  });

  it.each([
    ['the token endpoint fails', { endpoint: 'token', status: 500 }],
    ['the token endpoint rate limits', { endpoint: 'token', status: 429, retry_after: 30 }],
    ['the identity endpoint fails', { endpoint: 'identity', status: 503 }],
    ['the identity endpoint drops the connection', { endpoint: 'identity', status: 0 }],
  ] as const)('answers 502 upstream_error when %s', async (_label, failure) => {
    const user = uniqueUserId('callback-upstream');
    await premiumPatron(user);
    const ip = uniqueIp();
    const { callback } = await authorizeAt(user, { ip });
    await injectFailure(user, failure);
    const res = await gatekeeper(`${callback.pathname}${callback.search}`, { ip });
    expect(res.status).toBe(502);
    expect(await errorOf(res)).toBe('upstream_error');
  });

  it('answers 502 when the platform refuses its own code (replayed or forged)', async () => {
    const ip = uniqueIp();
    const state = location(await gatekeeper('/auth/membership', { ip })).searchParams.get('state');
    const res = await gatekeeper(`/auth/callback?code=forged&state=${state}`, { ip });
    expect(res.status).toBe(502);
    expect(await errorOf(res)).toBe('upstream_error');
  });
});

describe('POST /auth/exchange', () => {
  async function deepLinkCode(label: string): Promise<{ code: string; ip: string }> {
    const user = uniqueUserId(label);
    await premiumPatron(user);
    const ip = uniqueIp();
    const { callback } = await authorizeAt(user, { ip });
    const done = await gatekeeper(`${callback.pathname}${callback.search}`, { ip });
    return { code: location(done).searchParams.get('code') ?? '', ip };
  }

  it('accepts a code once: a second exchange is 400 invalid_code', async () => {
    const { code, ip } = await deepLinkCode('code-reuse');
    expect((await postJson('/auth/exchange', { code }, ip)).status).toBe(200);
    const again = await postJson('/auth/exchange', { code }, ip);
    expect(again.status).toBe(400);
    expect(await errorOf(again)).toBe('invalid_code');
  });

  it('lets exactly one of two concurrent exchanges of one code win', async () => {
    const { code, ip } = await deepLinkCode('code-race');
    const results = await Promise.all([
      postJson('/auth/exchange', { code }, ip),
      postJson('/auth/exchange', { code }, ip),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const loser = results.find((r) => r.status === 400);
    expect(loser && (await errorOf(loser))).toBe('invalid_code');
  });

  it('refuses an unknown code with 400 invalid_code', async () => {
    const res = await postJson('/auth/exchange', { code: 'never-issued' });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe('invalid_code');
  });

  it.each([
    ['a body that is not JSON', 'code=abc', 'JSON'],
    ['a body without code', { token: 'abc' }, 'code'],
    ['a code that is not a string', { code: 42 }, 'code'],
    ['an empty code', { code: '' }, 'code'],
    ['a JSON array', [], 'code'],
  ])('answers 400 bad_request naming the field for %s', async (_label, body, field) => {
    const res = await postJson('/auth/exchange', body);
    expect(res.status).toBe(400);
    const parsed = (await res.json()) as { error: { code: string; message: string } };
    expect(parsed.error.code).toBe('bad_request');
    expect(parsed.error.message).toContain(field);
  });

  it('expires codes: one past its lifetime is 400 invalid_code, one within it is honoured', async () => {
    const pending = JSON.stringify({ sub: uniqueUserId('expiry'), tier: 'free' });
    const storeFor = (code: string) => env.ONE_TIME_STORE.get(env.ONE_TIME_STORE.idFromName(`code:${code}`));
    // Codes of the issued shape (randomToken()), so only their lifetime decides.
    const expiredCode = randomToken();
    const liveCode = randomToken();
    await storeFor(expiredCode).put(expiredCode, pending, 0);
    await storeFor(liveCode).put(liveCode, pending, 60_000);
    const expired = await postJson('/auth/exchange', { code: expiredCode });
    expect(expired.status).toBe(400);
    expect(await errorOf(expired)).toBe('invalid_code');
    const live = await postJson('/auth/exchange', { code: liveCode });
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ tier: 'free' });
  });
});

describe('codes and states we cannot have issued', () => {
  // Each is stored in the one-time store as if it were genuine: only the shape check can refuse it.
  const issuedShape = randomToken;
  const tooLong = () => `${issuedShape()}${issuedShape()}`;
  const pending = (label: string) => JSON.stringify({ sub: uniqueUserId(label), tier: 'premium' });

  it('exchanges a stored code of the issued shape (the control case)', async () => {
    const code = issuedShape();
    expect(code).toHaveLength(43);
    await oneTimeStore(env, 'code').put(code, pending('shape-ok'), 60_000);
    expect((await postJson('/auth/exchange', { code })).status).toBe(200);
  });

  it.each([
    ['longer than 43 characters', tooLong],
    ['of 43 characters outside base64url', () => `${issuedShape().slice(0, 42)}.`],
  ])('refuses a code %s with 400 invalid_code without looking it up', async (_label, make) => {
    const code = make();
    await oneTimeStore(env, 'code').put(code, pending('shape-bad'), 60_000);
    const res = await postJson('/auth/exchange', { code });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe('invalid_code');
  });

  it('refuses a callback state longer than 43 characters with 400 invalid_state', async () => {
    const state = tooLong();
    await oneTimeStore(env, 'state').put(state, JSON.stringify({ kind: 'deep-link' }), 60_000);
    const res = await gatekeeper(`/auth/callback?state=${state}&code=anything`);
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe('invalid_state');
  });
});

describe('methods and sizes', () => {
  it.each([
    ['GET', '/auth/exchange', 'POST'],
    ['POST', '/auth/membership', 'GET'],
    ['DELETE', '/auth/callback', 'GET'],
    ['GET', '/validate', 'POST'],
    ['POST', '/config', 'GET'],
    ['PUT', '/.well-known/jwks.json', 'GET'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const res = await gatekeeper(path, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('Allow')).toBe(allow);
    expect(await errorOf(res)).toBe('method_not_allowed');
  });

  it('refuses an exchange body over 4 KiB with 413 payload_too_large', async () => {
    const res = await postJson('/auth/exchange', { code: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(await errorOf(res)).toBe('payload_too_large');
  });
});
