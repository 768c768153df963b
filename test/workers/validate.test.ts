import { env } from 'cloudflare:workers';
import { decodeProtectedHeader, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseWith, ValidateResponse } from '../../shared/protocol/index.js';
import { app } from '../../workers/src/index.js';
import { currentTier } from '../../workers/src/membership/check.js';
import { openToken, sealToken } from '../../workers/src/token-cipher.js';
import {
  AFTER_RETRY_PAUSE,
  ageMembership,
  HOUR,
  injectFailure,
  login,
  logout,
  patreonBase,
  patreonCounters,
  premiumPatron,
  prepareLoginSuite,
  revokePatreonGrant,
  setPatreonUser,
  TEST_CONFIG,
  uniqueIp,
  uniqueUserId,
  validate,
  WARM_UP_TIMEOUT_MS,
} from './helpers/gatekeeper.js';

interface Body {
  token?: string;
  tier?: string;
  expires_at?: string;
  error?: { code: string; message: string };
}
const bodyOf = async (res: Response): Promise<Body> => res.json();

interface StoredMember {
  tier: string;
  checked_at: number;
  refresh_token: string | null;
}
async function storedMember(user: string): Promise<StoredMember> {
  return JSON.parse((await env.GATEKEEPER_KV.get(`member:${user}`)) ?? 'null');
}

beforeAll(prepareLoginSuite, WARM_UP_TIMEOUT_MS);

async function premiumLogin(label: string) {
  const user = uniqueUserId(label);
  await premiumPatron(user);
  const { token } = await login(user);
  return { user, token };
}

describe('POST /validate for an active member', () => {
  it('returns a fresh licence with the tier and an ISO expiry about 7 days out', async () => {
    const { token } = await premiumLogin('validate-fresh');
    const res = await validate(token);
    expect(res.status).toBe(200);
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    const body = await bodyOf(res);
    expect(parseWith(ValidateResponse, body).ok).toBe(true);
    expect(body.tier).toBe('premium');
    expect(body.token).not.toBe(token);
    const days = (Date.parse(body.expires_at ?? '') - Date.now()) / (24 * HOUR);
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    // The new licence validates in turn.
    expect((await validate(body.token ?? '')).status).toBe(200);
  });

  it('asks the platform at most once an hour, refreshing and rotating the platform token', async () => {
    const { user, token } = await premiumLogin('validate-hourly');
    const afterLogin = await patreonCounters(user);
    for (let i = 0; i < 3; i++) expect((await validate(token)).status).toBe(200);
    expect(await patreonCounters(user)).toEqual(afterLogin);

    await ageMembership(user, HOUR + 1000);
    expect((await validate(token)).status).toBe(200);
    const afterRecheck = await patreonCounters(user);
    expect(afterRecheck.refresh_grants).toBe(afterLogin.refresh_grants + 1);
    expect(afterRecheck.identity_requests).toBe(afterLogin.identity_requests + 1);
    // The refresh token used is spent at the platform; the Worker stored the rotated one.
    const spent = await fetch(`${patreonBase()}/api/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: afterLogin.last_refresh_token ?? '',
        client_id: 'test-client-id',
        client_secret: 'test-client-secret',
      }),
    });
    expect(spent.status).toBe(400);
    const stored = await env.GATEKEEPER_KV.get(`member:${user}`);
    expect(stored).not.toContain(afterRecheck.last_refresh_token);

    for (let i = 0; i < 2; i++) expect((await validate(token)).status).toBe(200);
    expect((await patreonCounters(user)).identity_requests).toBe(afterRecheck.identity_requests);
    // A second hour later the rotated token works too.
    await ageMembership(user, HOUR + 1000);
    expect((await validate(token)).status).toBe(200);
    expect((await patreonCounters(user)).refresh_grants).toBe(afterRecheck.refresh_grants + 1);
  });

  it('upgrades a Free licence once the person becomes a Premium patron', async () => {
    const user = uniqueUserId('validate-upgrade');
    await setPatreonUser(user, { patron_status: null });
    const { token, tier } = await login(user);
    expect(tier).toBe('free');
    expect((await bodyOf(await validate(token))).tier).toBe('free');
    await premiumPatron(user);
    await ageMembership(user, HOUR + 1000);
    const res = await validate(token);
    expect(res.status).toBe(200);
    expect((await bodyOf(res)).tier).toBe('premium');
  });
});

describe('POST /validate for a lapsed member', () => {
  it.each(['declined_patron', 'former_patron'] as const)(
    'answers 403 membership_inactive with a Free licence once the patron is %s',
    async (status) => {
      const { user, token } = await premiumLogin(`lapsed-${status}`);
      await setPatreonUser(user, { patron_status: status, tiers: [] });
      // Still within the hour: the cached verdict stands.
      expect((await validate(token)).status).toBe(200);
      await ageMembership(user, HOUR + 1000);
      const res = await validate(token);
      expect(res.status).toBe(403);
      const body = await bodyOf(res);
      expect(body.error).toEqual({ code: 'membership_inactive', message: expect.any(String) });
      expect(body.tier).toBe('free');
      // The Free licence in the body keeps the app going within the Free limits.
      const free = await validate(body.token ?? '');
      expect(free.status).toBe(200);
      expect((await bodyOf(free)).tier).toBe('free');
    },
  );

  it('counts access revoked at the platform as lapsed', async () => {
    const { user, token } = await premiumLogin('lapsed-revoked');
    await revokePatreonGrant(user);
    await ageMembership(user, HOUR + 1000);
    const res = await validate(token);
    expect(res.status).toBe(403);
    expect(await bodyOf(res)).toMatchObject({ error: { code: 'membership_inactive' }, tier: 'free' });
  });
});

describe('POST /validate while the platform is down', () => {
  it.each([
    ['500 from the token endpoint', { endpoint: 'token', status: 500 }],
    ['429 from the token endpoint', { endpoint: 'token', status: 429, retry_after: 60 }],
    ['503 from the identity endpoint', { endpoint: 'identity', status: 503 }],
    ['a dropped connection at the token endpoint', { endpoint: 'token', status: 0 }],
  ] as const)('keeps a Premium member signed in within the grace period (%s)', async (_label, failure) => {
    const { user, token } = await premiumLogin('outage-grace');
    await injectFailure(user, failure);
    await ageMembership(user, 5 * HOUR);
    const res = await validate(token);
    expect(res.status).toBe(200);
    expect((await bodyOf(res)).tier).toBe('premium');
    // The platform is back: once the pause after a failure is over, the next validation re-checks
    // and succeeds.
    await ageMembership(user, AFTER_RETRY_PAUSE);
    const before = await patreonCounters(user);
    expect((await validate(token)).status).toBe(200);
    expect((await patreonCounters(user)).identity_requests).toBe(before.identity_requests + 1);
  });

  it('asks the platform once, not at every validation, while it keeps failing', async () => {
    const { user, token } = await premiumLogin('outage-pause');
    await injectFailure(user, { endpoint: 'token', status: 500, times: 10 });
    await ageMembership(user, 5 * HOUR);
    const before = await patreonCounters(user);
    for (let i = 0; i < 3; i++) {
      const res = await validate(token);
      expect(res.status).toBe(200);
      expect((await bodyOf(res)).tier).toBe('premium');
    }
    expect((await patreonCounters(user)).token_requests).toBe(before.token_requests + 1);
    // Five minutes later it is asked again (and still fails: the cached verdict still answers).
    await ageMembership(user, AFTER_RETRY_PAUSE);
    expect((await validate(token)).status).toBe(200);
    expect((await validate(token)).status).toBe(200);
    expect((await patreonCounters(user)).token_requests).toBe(before.token_requests + 2);
  });

  it('pauses after an identity failure too, keeping the rotated refresh token', async () => {
    const { user, token } = await premiumLogin('outage-pause-identity');
    await injectFailure(user, { endpoint: 'identity', status: 503, times: 10 });
    await ageMembership(user, 5 * HOUR);
    const before = await patreonCounters(user);
    for (let i = 0; i < 2; i++) expect((await validate(token)).status).toBe(200);
    expect((await patreonCounters(user)).identity_requests).toBe(before.identity_requests + 1);
    expect((await patreonCounters(user)).refresh_grants).toBe(before.refresh_grants + 1);
  });

  it('treats a member the platform could not confirm for longer than grace.hours as lapsed', async () => {
    const { user, token } = await premiumLogin('outage-beyond-grace');
    await injectFailure(user, { endpoint: 'token', status: 500 });
    await ageMembership(user, (TEST_CONFIG.grace.hours + 1) * HOUR);
    const res = await validate(token);
    expect(res.status).toBe(403);
    expect(await bodyOf(res)).toMatchObject({ error: { code: 'membership_inactive' }, tier: 'free' });
    // Once the platform answers again, an active membership is Premium again.
    await ageMembership(user, AFTER_RETRY_PAUSE);
    const recovered = await validate(token);
    expect(recovered.status).toBe(200);
    expect((await bodyOf(recovered)).tier).toBe('premium');
  });
});

describe('POST /validate when the platform fails in a way that is not a verdict on the member', () => {
  it('keeps Premium within grace when the token endpoint answers 401 without invalid_grant', async () => {
    const { user, token } = await premiumLogin('token-401');
    await injectFailure(user, { endpoint: 'token', status: 401 });
    await ageMembership(user, 5 * HOUR);
    const res = await validate(token);
    expect(res.status).toBe(200);
    expect((await bodyOf(res)).tier).toBe('premium');
  });

  it('keeps Premium and the stored refresh token when our client secret is refused (invalid_client)', async () => {
    const { user } = await premiumLogin('invalid-client');
    await ageMembership(user, 5 * HOUR);
    const before = await env.GATEKEEPER_KV.get(`member:${user}`);
    const misconfigured = { ...env, MEMBERSHIP_CLIENT_SECRET: 'a-rotated-secret' };
    expect(await currentTier(misconfigured, user)).toBe('premium');
    const after: { refresh_token: string | null } = JSON.parse(
      (await env.GATEKEEPER_KV.get(`member:${user}`)) ?? '{}',
    );
    expect(after.refresh_token).not.toBeNull();
    expect(after.refresh_token).toBe(JSON.parse(before ?? '{}').refresh_token);
    // With the right secret the very same stored token still works.
    expect(await currentTier(env, user)).toBe('premium');
  });

  it('keeps Premium and the rotated refresh token when identity answers 403 after a good refresh', async () => {
    const { user, token } = await premiumLogin('identity-403');
    await injectFailure(user, { endpoint: 'identity', status: 403 });
    await ageMembership(user, 5 * HOUR);
    const before = await patreonCounters(user);
    const res = await validate(token);
    expect(res.status).toBe(200);
    expect((await bodyOf(res)).tier).toBe('premium');
    const after = await patreonCounters(user);
    expect(after.refresh_grants).toBe(before.refresh_grants + 1);
    // The token used for that refresh is spent at the platform, so only the rotated one can succeed.
    await ageMembership(user, HOUR + 1000);
    const recheck = await validate(token);
    expect(recheck.status).toBe(200);
    expect((await bodyOf(recheck)).tier).toBe('premium');
    const final = await patreonCounters(user);
    expect(final.refresh_grants).toBe(after.refresh_grants + 1);
    expect(final.identity_requests).toBe(after.identity_requests + 1);
  });

  it('answers 500 internal, and lapses nobody, when TOKEN_ENCRYPTION_KEY is missing', async () => {
    const { user, token } = await premiumLogin('no-cipher-key');
    await ageMembership(user, 5 * HOUR);
    // The re-check runs in the member's Durable Object with the Worker's own env: ask it directly
    // with the key missing. It fails (an internal error, 500 at the route), and lapses nobody.
    await expect(currentTier({ ...env, TOKEN_ENCRYPTION_KEY: '' }, user)).rejects.toThrow();
    const stored: { tier: string; refresh_token: string | null } = JSON.parse(
      (await env.GATEKEEPER_KV.get(`member:${user}`)) ?? '{}',
    );
    expect(stored.tier).toBe('premium');
    expect(stored.refresh_token).not.toBeNull();
    // Configured again, the member is still Premium.
    const ok = await validate(token);
    expect(ok.status).toBe(200);
    expect((await bodyOf(ok)).tier).toBe('premium');
  });

  it('still reads a sealed token of another user as no token at all', async () => {
    const sealed = await sealToken(env, 'someone', 'secret-refresh-token');
    expect(await openToken(env, 'someone', sealed)).toBe('secret-refresh-token');
    expect(await openToken(env, 'someone-else', sealed)).toBeNull();
    expect(await openToken(env, 'someone', `${sealed.slice(0, -2)}AA`)).toBeNull();
  });
});

describe('POST /validate from two requests at once', () => {
  it('answers both with 200 Premium', async () => {
    const { user, token } = await premiumLogin('concurrent-recheck');
    await ageMembership(user, HOUR + 1000);
    const before = await patreonCounters(user);
    const answers = await Promise.all([validate(token), validate(token), validate(token)]);
    // One re-check at a time per member (a Durable Object orders them): the platform refreshes once.
    expect((await patreonCounters(user)).refresh_grants - before.refresh_grants).toBe(1);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
    for (const res of answers) expect((await bodyOf(res)).tier).toBe('premium');
    expect(await storedMember(user)).toMatchObject({ tier: 'premium', refresh_token: expect.any(String) });
  });

  it('keeps the member Premium when its refresh token was spent by a concurrent re-check', async () => {
    const { user } = await premiumLogin('rotated-elsewhere');
    await ageMembership(user, HOUR + 1000);
    // Request B read the record (token T0) before request A wrote anything.
    const stale = await env.GATEKEEPER_KV.get(`member:${user}`);
    const t0 = await openToken(env, user, (await storedMember(user)).refresh_token ?? '');
    // Request A refreshed T0 into T1 and stored T1, but has not stored its verdict yet.
    const refreshed = await fetch(`${patreonBase()}/api/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: t0 ?? '',
        client_id: env.MEMBERSHIP_CLIENT_ID,
        client_secret: env.MEMBERSHIP_CLIENT_SECRET,
      }),
    });
    const t1 = ((await refreshed.json()) as { refresh_token: string }).refresh_token;
    const halfway = { ...(await storedMember(user)), refresh_token: await sealToken(env, user, t1) };
    await env.GATEKEEPER_KV.put(`member:${user}`, JSON.stringify(halfway));

    // B now goes on with T0, which the platform refuses as spent.
    let staleReads = 1;
    const kvAsBSawIt = new Proxy(env.GATEKEEPER_KV, {
      get(target, property) {
        if (property === 'get' && staleReads-- > 0) return async () => stale;
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const tier = await currentTier({ ...env, GATEKEEPER_KV: kvAsBSawIt }, user);
    const before = await patreonCounters(user);
    expect(tier).toBe('premium');
    expect(await storedMember(user)).toEqual(halfway);
    // A's rotated token stays usable: the next re-check succeeds at the platform.
    expect(await currentTier(env, user)).toBe('premium');
    expect((await patreonCounters(user)).refresh_grants).toBe(before.refresh_grants + 1);
  });
});

describe('POST /validate refuses bad tokens with 401 invalid_token', () => {
  const base64url = (text: string) => btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const privateJwk = (): JWK => JSON.parse(env.JWT_PRIVATE_JWK);
  const claims = (sub: string) => ({ tier: 'premium', sub, jti: crypto.randomUUID() });

  async function signWith(
    options: {
      iss?: string;
      aud?: string;
      iat?: number;
      exp?: number;
      key?: JWK;
      kid?: string;
      tier?: string;
    },
    sub: string,
  ) {
    const jwk = options.key ?? privateJwk();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ ...claims(sub), tier: options.tier ?? 'premium' })
      .setProtectedHeader({ alg: 'EdDSA', kid: options.kid ?? privateJwk().kid ?? '', typ: 'JWT' })
      .setIssuer(options.iss ?? env.PUBLIC_BASE_URL)
      .setAudience(options.aud ?? 'overlay-daemon')
      .setIssuedAt(options.iat ?? now)
      .setExpirationTime(options.exp ?? now + 3600)
      .sign(await importJWK(jwk, 'EdDSA'));
  }

  let user: string;
  let good: string;
  beforeAll(async () => {
    ({ user, token: good } = await premiumLogin('bad-tokens'));
  });

  const cases: [string, () => Promise<string | null>][] = [
    ['a missing Authorization header', async () => null],
    ['a malformed token', async () => 'not.a.jwt'],
    ['garbage', async () => 'garbage'],
    [
      'a token signed with another key under our kid',
      async () => {
        const { privateKey } = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
          'sign',
          'verify',
        ])) as CryptoKeyPair;
        const other = (await crypto.subtle.exportKey('jwk', privateKey)) as JWK;
        return signWith({ key: other }, user);
      },
    ],
    [
      'alg: none',
      async () => {
        const header = base64url(JSON.stringify({ alg: 'none', typ: 'JWT', kid: privateJwk().kid }));
        const now = Math.floor(Date.now() / 1000);
        const payload = base64url(
          JSON.stringify({
            ...claims(user),
            iss: env.PUBLIC_BASE_URL,
            aud: 'overlay-daemon',
            iat: now,
            exp: now + 3600,
          }),
        );
        return `${header}.${payload}.`;
      },
    ],
    [
      'HS256 keyed with the public key',
      async () => {
        const { d: _d, ...publicJwk } = privateJwk();
        const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
        const now = Math.floor(Date.now() / 1000);
        return new SignJWT(claims(user))
          .setProtectedHeader({ alg: 'HS256', kid: privateJwk().kid ?? '', typ: 'JWT' })
          .setIssuer(env.PUBLIC_BASE_URL)
          .setAudience('overlay-daemon')
          .setIssuedAt(now)
          .setExpirationTime(now + 3600)
          .sign(secret);
      },
    ],
    [
      'an expired token (beyond the 30 s tolerance)',
      async () => {
        const now = Math.floor(Date.now() / 1000);
        return signWith({ iat: now - 8 * 86400, exp: now - 31 }, user);
      },
    ],
    ['another issuer', async () => signWith({ iss: 'https://evil.example' }, user)],
    ['another audience', async () => signWith({ aud: 'someone-else' }, user)],
    ['our signature over an unknown tier', async () => signWith({ tier: 'gold' }, user)],
    [
      'a genuine token whose payload was edited',
      async () => {
        const [header, payload, signature] = good.split('.');
        const edited = {
          ...JSON.parse(atob((payload ?? '').replace(/-/g, '+').replace(/_/g, '/'))),
          tier: 'premium',
          sub: 'x',
        };
        return `${header}.${base64url(JSON.stringify(edited))}.${signature}`;
      },
    ],
  ];

  it.each(cases)('%s', async (_label, make) => {
    const res = await validate(await make());
    expect(res.status).toBe(401);
    expect((await bodyOf(res)).error?.code).toBe('invalid_token');
  });

  it('accepts a token within the 30 s clock tolerance, signed by our key (the control case)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const res = await validate(await signWith({ iat: now - 3600, exp: now - 10 }, user));
    expect(res.status).toBe(200);
  });

  it('refuses a genuine token of someone with no membership on record', async () => {
    const res = await validate(await signWith({}, uniqueUserId('never-logged-in')));
    expect(res.status).toBe(401);
    expect((await bodyOf(res)).error?.code).toBe('invalid_token');
  });
});

describe('POST /validate: what it reads per request, and the keys it keeps per isolate', () => {
  /** The Worker's app with a member-object binding that counts the objects it is asked for. */
  function countingMemberObjects() {
    const counted = { gets: 0 };
    const namespace = new Proxy(env.MEMBERSHIP_RECHECK, {
      get(target, property) {
        if (property === 'get') {
          return (...args: Parameters<typeof target.get>) => {
            counted.gets += 1;
            return target.get(...args);
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const call = (token: string, overrides: Partial<typeof env> = {}) =>
      app.fetch(
        new Request('http://gatekeeper.test/validate', {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'CF-Connecting-IP': uniqueIp() },
        }),
        { ...env, MEMBERSHIP_RECHECK: namespace, ...overrides },
      );
    return { counted, call };
  }

  it('answers a verdict checked within the hour without the member object, and re-checks an older one there', async () => {
    const { user, token } = await premiumLogin('validate-no-object');
    const { counted, call } = countingMemberObjects();
    for (let i = 0; i < 3; i++) expect((await call(token)).status).toBe(200);
    expect(counted.gets).toBe(0);

    await ageMembership(user, HOUR + 1000);
    const before = await patreonCounters(user);
    const rechecked = await call(token);
    expect(rechecked.status).toBe(200);
    expect((await bodyOf(rechecked)).tier).toBe('premium');
    // The re-check went through the member's object (one at a time per member) and asked the platform.
    expect(counted.gets).toBe(1);
    expect((await patreonCounters(user)).refresh_grants).toBe(before.refresh_grants + 1);
  });

  it('refuses a signed-out licence on the very next request, its verdict fresh', async () => {
    const { token } = await premiumLogin('validate-revoked-fresh');
    const { call } = countingMemberObjects();
    const renewed = await call(token);
    expect(renewed.status).toBe(200);
    const { token: next } = await bodyOf(renewed);
    expect((await logout(token)).status).toBe(204);
    for (const licence of [token, next ?? '']) {
      const res = await call(licence);
      expect(res.status).toBe(401);
      expect((await bodyOf(res)).error?.code).toBe('invalid_token');
    }
  });

  it('signs with a rotated key at once, and still verifies licences of the key it replaced', async () => {
    const { token } = await premiumLogin('validate-rotated-key');
    const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    const rotated = { ...((await crypto.subtle.exportKey('jwk', pair.privateKey)) as JWK), kid: 'rotated' };
    const { d: _d, ...previous } = JSON.parse(env.JWT_PRIVATE_JWK) as JWK;
    const rotatedEnv = {
      JWT_PRIVATE_JWK: JSON.stringify(rotated),
      JWT_PUBLIC_JWKS: JSON.stringify({ keys: [previous] }),
    };
    const { call } = countingMemberObjects();
    // The isolate has the current key in use already.
    expect((await call(token)).status).toBe(200);

    const res = await call(token, rotatedEnv);
    expect(res.status).toBe(200);
    const { token: signed } = await bodyOf(res);
    expect(decodeProtectedHeader(signed ?? '')).toMatchObject({ kid: 'rotated' });
    const { x } = rotated;
    await expect(
      jwtVerify(signed ?? '', await importJWK({ kty: 'OKP', crv: 'Ed25519', x }, 'EdDSA'), {
        issuer: env.PUBLIC_BASE_URL,
        audience: 'overlay-daemon',
      }),
    ).resolves.toBeTruthy();
    // Back on the old secrets, a licence of the rotated key is someone else's: refused.
    const back = await call(signed ?? '');
    expect(back.status).toBe(401);
    expect((await call(token)).status).toBe(200);
  });
});
