// The trust boundary of the paid tier: PKCE, revocable licences, lapsed members'
// tunnels, bounded bodies, no storage for a guess, and only public key members in the JWKS.
import {
  createExecutionContext,
  createScheduledController,
  runInDurableObject,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { bytesToBase64Url, randomToken } from '../../workers/src/base64url.js';
import worker, { app } from '../../workers/src/index.js';
import { publicJwks } from '../../workers/src/licence.js';
import { oneTimeStore } from '../../workers/src/one-time-store.js';
import {
  ageMembership,
  authorizeAt,
  gatekeeper,
  HOUR,
  holdPatreon,
  location,
  logout,
  patreonHolding,
  postJson,
  premiumPatron,
  prepareLoginSuite,
  releasePatreon,
  setPatreonUser,
  uniqueIp,
  uniqueUserId,
  validate,
  WARM_UP_TIMEOUT_MS,
} from './helpers/gatekeeper.js';
import {
  cloudflareHolds,
  expectError,
  expectNothingLeft,
  LOAD_TUNNEL_ROUTES_TIMEOUT_MS,
  loadTunnelRoutes,
  provision,
  referenceSubdomain,
  tunnelStatus,
} from './tunnels-fixtures.js';

beforeAll(async () => {
  await prepareLoginSuite();
  await loadTunnelRoutes();
}, WARM_UP_TIMEOUT_MS + LOAD_TUNNEL_ROUTES_TIMEOUT_MS);

const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

async function challengeOf(verifier: string): Promise<string> {
  return bytesToBase64Url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
}

/** A login up to the code the platform's redirect hands to the app; `challenge` is sent as PKCE S256. */
async function codeFor(userId: string, challenge?: string): Promise<string> {
  const ip = uniqueIp();
  const query = challenge ? `?code_challenge=${challenge}&code_challenge_method=S256` : '';
  const { callback } = await authorizeAt(userId, { ip, query });
  const done = await gatekeeper(`${callback.pathname}${callback.search}`, { ip });
  expect(done.status).toBe(302);
  const code = location(done).searchParams.get('code');
  if (!code) throw new Error('no code in the redirect');
  return code;
}

async function pkceLogin(userId: string): Promise<string> {
  const verifier = randomToken();
  const code = await codeFor(userId, await challengeOf(verifier));
  const res = await postJson('/auth/exchange', { code, code_verifier: verifier });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

describe('PKCE on the login (RFC 7636, S256)', () => {
  it('refuses a malformed challenge or another method with 400 bad_request', async () => {
    const good = await challengeOf(randomToken());
    for (const query of [
      `?code_challenge=${good}&code_challenge_method=plain`,
      `?code_challenge=${good}`,
      '?code_challenge_method=S256',
      '?code_challenge=short&code_challenge_method=S256',
      `?code_challenge=${good.slice(0, 40)}+/=&code_challenge_method=S256`,
      `?code_challenge=${'a'.repeat(129)}&code_challenge_method=S256`,
    ]) {
      const res = await gatekeeper(`/auth/membership${query}`);
      expect(res.status, query).toBe(400);
      expect(await errorOf(res)).toBe('bad_request');
    }
  });

  it('exchanges a code only with the matching verifier', async () => {
    const userId = uniqueUserId('pkce-ok');
    await premiumPatron(userId);
    const token = await pkceLogin(userId);
    expect((await validate(token)).status).toBe(200);
  });

  it.each([
    ['no verifier', undefined],
    ['a wrong verifier', randomToken()],
    ['a malformed verifier', 'x'],
  ])('refuses %s with 400 invalid_code, and the code is spent', async (_, sent) => {
    const userId = uniqueUserId('pkce-bad');
    await premiumPatron(userId);
    const verifier = randomToken();
    const code = await codeFor(userId, await challengeOf(verifier));
    const bad = await postJson(
      '/auth/exchange',
      sent === undefined ? { code } : { code, code_verifier: sent },
    );
    expect(bad.status).toBe(400);
    expect(await errorOf(bad)).toBe('invalid_code');
    // Spent: not even the right verifier redeems it now.
    const again = await postJson('/auth/exchange', { code, code_verifier: verifier });
    expect(await errorOf(again)).toBe('invalid_code');
  });

  it('refuses a verifier for a code whose login carried no challenge', async () => {
    const userId = uniqueUserId('pkce-none');
    await premiumPatron(userId);
    const code = await codeFor(userId);
    const res = await postJson('/auth/exchange', { code, code_verifier: randomToken() });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe('invalid_code');
  });

  it("defeats code injection: an attacker's own code does not redeem with the victim's verifier", async () => {
    const attacker = uniqueUserId('pkce-attacker');
    await premiumPatron(attacker);
    // The victim's app made this verifier and sent its challenge with its own login.
    const victimVerifier = randomToken();
    const victim = uniqueUserId('pkce-victim');
    await premiumPatron(victim);
    await codeFor(victim, await challengeOf(victimVerifier));
    // The attacker ran a login of their own (with or without a challenge of theirs) and plants its code.
    for (const attackerChallenge of [undefined, await challengeOf(randomToken())]) {
      const planted = await codeFor(attacker, attackerChallenge);
      const res = await postJson('/auth/exchange', { code: planted, code_verifier: victimVerifier });
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toBe('invalid_code');
    }
  });
});

describe('revocable licences: the epoch and POST /auth/logout', () => {
  it('carries the epoch claim, and a logout kills every licence of the member at once', async () => {
    const userId = uniqueUserId('logout');
    await premiumPatron(userId);
    const first = await pkceLogin(userId);
    const second = await pkceLogin(userId);
    const claims = JSON.parse(atob(first.split('.')[1]?.replace(/-/g, '+').replace(/_/g, '/') ?? ''));
    expect(claims.epoch).toBe(1);

    const out = await gatekeeper('/auth/logout', {
      method: 'POST',
      headers: { Authorization: `Bearer ${first}` },
    });
    expect(out.status).toBe(204);
    for (const token of [first, second]) {
      const res = await validate(token);
      expect(res.status).toBe(401);
      expect(await errorOf(res)).toBe('invalid_token');
      await expectError(await tunnelStatus(userId, token), 401, 'invalid_token');
    }
    // Signing in again gives a licence of the new epoch, which works.
    const fresh = await pkceLogin(userId);
    expect((await validate(fresh)).status).toBe(200);
  });

  it('answers 401 to a logout without a valid licence, and 405 to other methods', async () => {
    expect((await gatekeeper('/auth/logout', { method: 'POST' })).status).toBe(401);
    const forged = await gatekeeper('/auth/logout', {
      method: 'POST',
      headers: { Authorization: 'Bearer x.y.z' },
    });
    expect(forged.status).toBe(401);
    expect((await gatekeeper('/auth/logout')).status).toBe(405);
  });

  it('refuses a logout with a revoked licence (401 invalid_token): a stolen old licence cannot sign out later logins', async () => {
    const userId = uniqueUserId('logout-revoked');
    await premiumPatron(userId);
    const stolen = await pkceLogin(userId);
    expect((await logout(stolen)).status).toBe(204);
    const later = await pkceLogin(userId);

    const replayed = await logout(stolen);
    expect(replayed.status).toBe(401);
    expect(await errorOf(replayed)).toBe('invalid_token');
    // The member's login after the logout still works, however often the old licence is replayed.
    expect((await logout(stolen)).status).toBe(401);
    const res = await validate(later);
    expect(res.status).toBe(200);
    await expectError(await tunnelStatus(userId, later), 404, 'not_found');
  });

  it('keeps a logout made while a membership re-check waits on the platform', async () => {
    const userId = uniqueUserId('logout-during-recheck');
    await premiumPatron(userId);
    const token = await pkceLogin(userId);
    await ageMembership(userId, HOUR + 1000);
    // The re-check has read the member record and refreshed the token; the platform is slow to
    // answer the identity request.
    await holdPatreon(userId, 'identity');
    const refreshing = validate(token);
    await patreonHolding(userId);
    expect((await logout(token)).status).toBe(204);
    await releasePatreon(userId);
    const during = await refreshing;

    // The re-check stored its verdict and the rotated token, and the logout still stands.
    const stored: { tier: string; epoch: number } = JSON.parse(
      (await env.GATEKEEPER_KV.get(`member:${userId}`)) ?? '{}',
    );
    expect(stored).toMatchObject({ tier: 'premium', epoch: 2 });
    const again = await validate(token);
    expect(again.status).toBe(401);
    expect(await errorOf(again)).toBe('invalid_token');
    // What the re-check answered in the meantime was signed before the logout took effect: revoked too.
    if (during.status === 200) {
      const { token: renewed } = (await during.json()) as { token: string };
      expect((await validate(renewed)).status).toBe(401);
    }
    // A new login works, and its licence refreshes.
    expect((await validate(await pkceLogin(userId))).status).toBe(200);
  });
});

describe('a lapsed member keeps no tunnel', () => {
  async function premiumWithTunnel(label: string) {
    const userId = uniqueUserId(label);
    await premiumPatron(userId);
    const token = await pkceLogin(userId);
    expect((await provision(userId, token)).status).toBe(201);
    const subdomain = await referenceSubdomain(userId);
    expect((await cloudflareHolds(subdomain)).tunnels).toHaveLength(1);
    return { userId, token, subdomain };
  }

  it('/validate that finds the membership lapsed deletes the tunnel and its CNAME', async () => {
    const { userId, token, subdomain } = await premiumWithTunnel('lapse-validate');
    await setPatreonUser(userId, { patron_status: 'former_patron', tiers: [] });
    await ageMembership(userId, HOUR + 1000);
    const res = await validate(token);
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toBe('membership_inactive');
    await expectNothingLeft(subdomain);
    expect(await env.GATEKEEPER_KV.get(`tunnel:${userId}`)).toBeNull();
  });

  it("refuses a lapsed member's last Premium licence on provision and status: 403 premium_required", async () => {
    const userId = uniqueUserId('lapsed-reprovision');
    await premiumPatron(userId);
    const token = await pkceLogin(userId);
    await setPatreonUser(userId, { patron_status: 'former_patron', tiers: [] });
    await ageMembership(userId, HOUR + 1000);
    // A re-check finds the lapse and stores the Free verdict; the Premium licence has days left.
    expect((await validate(token)).status).toBe(403);

    await expectError(await provision(userId, token), 403, 'premium_required');
    await expectError(await tunnelStatus(userId, token), 403, 'premium_required');
    const subdomain = await referenceSubdomain(userId);
    await expectNothingLeft(subdomain);
    expect((await cloudflareHolds(subdomain)).calls).toEqual([]);
  });

  it('the daily sweep (scheduled handler) deletes the tunnel of a member lapsed since the last check', async () => {
    const kept = await premiumWithTunnel('sweep-kept');
    const { userId, subdomain } = await premiumWithTunnel('sweep-lapsed');
    await setPatreonUser(userId, { patron_status: 'declined_patron', tiers: [] });
    await ageMembership(userId, 25 * HOUR);

    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: '17 4 * * *' }), env, ctx);
    await waitOnExecutionContext(ctx);
    await expectNothingLeft(subdomain);
    expect((await cloudflareHolds(kept.subdomain)).tunnels).toHaveLength(1);
  });
});

describe('bounded bodies and storage', () => {
  it('stops reading a chunked /auth/exchange body past 4 KiB: 413 payload_too_large', async () => {
    const chunk = new TextEncoder().encode(`{"code":"${'a'.repeat(1000)}`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 64) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const chunked = await gatekeeper('/auth/exchange', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
      // @ts-expect-error: `duplex` is required by fetch for a streamed body, not yet in every type set
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);
    expect(await errorOf(chunked)).toBe('payload_too_large');
  });

  it('cancels a chunked body refused past 4 KiB, so the connection is free for the next request', async () => {
    const chunk = new TextEncoder().encode('a'.repeat(1000));
    let cancelled: () => void = () => {};
    const wasCancelled = new Promise<void>((resolve) => {
      cancelled = resolve;
    });
    // A client that would go on sending for ever: only a cancel from the Worker stops it.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(chunk);
      },
      cancel() {
        cancelled();
      },
    });
    // The Worker's app called in this isolate, so the cancel reaches this very stream.
    const request = new Request('http://gatekeeper.test/auth/exchange', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': uniqueIp() },
      body,
      duplex: 'half',
    } as RequestInit);
    const refused = await app.fetch(request, env);
    expect(refused.status).toBe(413);
    await wasCancelled;
  });

  it('creates no Durable Object storage for an unknown code, and deletes it once the last value is taken', async () => {
    const guess = randomToken();
    expect(await oneTimeStore(env, 'code').take(guess)).toBeNull();
    const guessed = env.ONE_TIME_STORE.get(env.ONE_TIME_STORE.idFromName(`code:${guess}`));
    await runInDurableObject(guessed, async (_instance, state) => {
      expect(state.storage.sql.databaseSize).toBeLessThanOrEqual(4096);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray()).toEqual(
        [],
      );
    });

    const key = randomToken();
    await oneTimeStore(env, 'state').put(key, 'value', 60_000);
    expect(await oneTimeStore(env, 'state').take(key)).toBe('value');
    const used = env.ONE_TIME_STORE.get(env.ONE_TIME_STORE.idFromName(`state:${key}`));
    await runInDurableObject(used, async (_instance, state) => {
      expect(
        state.storage.sql
          .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'entries'")
          .toArray(),
      ).toEqual([]);
    });
  });
});

describe('the JWKS', () => {
  it('publishes only the public members of each key, whatever the secrets carry', async () => {
    const current = JSON.parse(env.JWT_PRIVATE_JWK);
    const leaky = {
      ...current,
      kid: 'older',
      d: current.d,
      p: 'secret',
      extra: 'internal note',
      key_ops: ['sign'],
    };
    const { keys } = await publicJwks({ ...env, JWT_PUBLIC_JWKS: JSON.stringify({ keys: [leaky] }) });
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(
        Object.keys(key)
          .filter((name) => ['kty', 'crv', 'x', 'kid', 'alg', 'use'].includes(name))
          .sort(),
      );
      expect(key).not.toHaveProperty('d');
    }
    const served = await (await gatekeeper('/.well-known/jwks.json')).json();
    expect(JSON.stringify(served)).not.toContain('"d"');
  });
});
