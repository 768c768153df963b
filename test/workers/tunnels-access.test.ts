// Who may use the tunnel endpoints (decisions §2): a valid Premium licence, for its own user id only; bodies validated.
import { env, exports } from 'cloudflare:workers';
import { generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callGatekeeper,
  cloudflareHolds,
  deleteTunnel,
  expectError,
  expectNothingLeft,
  LOAD_TUNNEL_ROUTES_TIMEOUT_MS,
  licence,
  loadTunnelRoutes,
  newUserId,
  provision,
  referenceSubdomain,
  tunnelStatus,
} from './tunnels-fixtures.js';

beforeAll(loadTunnelRoutes, LOAD_TUNNEL_ROUTES_TIMEOUT_MS);

const endpoints = (userId: string) =>
  [
    (token?: string) => callGatekeeper('POST', '/tunnels/provision', { token, body: { user_id: userId } }),
    (token?: string) => callGatekeeper('GET', `/tunnels/status/${userId}`, { token }),
    (token?: string) => callGatekeeper('DELETE', `/tunnels/${userId}`, { token }),
  ] as const;

/** A token with the right claims, signed by a key the Gatekeeper never issued. */
async function forgedLicence(sub: string): Promise<string> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const kid: unknown = JSON.parse(env.JWT_PRIVATE_JWK).kid;
  return new SignJWT({ tier: 'premium' })
    .setProtectedHeader({ alg: 'EdDSA', kid: typeof kid === 'string' ? kid : 'x', typ: 'JWT' })
    .setIssuer(env.PUBLIC_BASE_URL)
    .setAudience('overlay-daemon')
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .setJti(crypto.randomUUID())
    .sign(privateKey);
}

describe('methods on /tunnels/*', () => {
  it('answers another method with 405 method_not_allowed and the Allow header, before any licence check', async () => {
    const userId = newUserId('methods');
    const cases: [string, string, string][] = [
      ['/tunnels/provision', 'GET', 'POST'],
      ['/tunnels/provision', 'PUT', 'POST'],
      ['/tunnels/provision', 'DELETE', 'POST'],
      [`/tunnels/status/${userId}`, 'POST', 'GET'],
      [`/tunnels/status/${userId}`, 'DELETE', 'GET'],
      [`/tunnels/${userId}`, 'GET', 'DELETE'],
      [`/tunnels/${userId}`, 'POST', 'DELETE'],
      [`/tunnels/${userId}`, 'PATCH', 'DELETE'],
    ];
    for (const [path, method, allow] of cases) {
      const res = await exports.default.fetch(`http://gatekeeper.test${path}`, {
        method,
        headers: { 'CF-Connecting-IP': `10.9.${Math.floor(Math.random() * 250)}.1` },
      });
      expect(res.headers.get('Allow'), `${method} ${path}`).toBe(allow);
      await expectError(res, 405, 'method_not_allowed');
    }
    expect((await cloudflareHolds(await referenceSubdomain(userId))).calls).toEqual([]);
  });
});

describe('licence checks on /tunnels/*', () => {
  it('answers 401 unauthenticated without a token and 401 invalid_token for a forged one', async () => {
    const userId = newUserId('anon');
    const forged = await forgedLicence(userId);
    for (const call of endpoints(userId)) {
      await expectError(await call(), 401, 'unauthenticated');
      await expectError(await call(forged), 401, 'invalid_token');
      await expectError(await call('not-a-jwt'), 401, 'invalid_token');
    }
    expect((await cloudflareHolds(await referenceSubdomain(userId))).calls).toEqual([]);
  });

  it('answers 403 premium_required to a free licence for provision and status, and creates nothing', async () => {
    const userId = newUserId('free');
    const token = await licence(userId, 'free');
    const [provisionCall, statusCall] = endpoints(userId);
    for (const call of [provisionCall, statusCall])
      await expectError(await call(token), 403, 'premium_required');
    expect((await cloudflareHolds(await referenceSubdomain(userId))).calls).toEqual([]);
  });

  it('lets a free licence delete its own tunnel (a lapsed member can always remove it)', async () => {
    const userId = newUserId('lapsed-delete');
    expect((await provision(userId)).status).toBe(201);
    const subdomain = await referenceSubdomain(userId);
    expect((await cloudflareHolds(subdomain)).tunnels).toHaveLength(1);

    const [, , deleteCall] = endpoints(userId);
    const res = await deleteCall(await licence(userId, 'free'));
    expect(res.status).toBe(204);
    await expectNothingLeft(subdomain);
    // Nothing left to delete: 404, and a free licence still creates nothing.
    await expectError(await deleteCall(await licence(userId, 'free')), 404, 'not_found');
    await expectNothingLeft(subdomain);
  });

  it("answers 403 forbidden for someone else's user id and leaves their tunnel alone", async () => {
    const victim = newUserId('victim');
    expect((await provision(victim)).status).toBe(201);
    const before = await cloudflareHolds(await referenceSubdomain(victim));

    const intruder = await licence(newUserId('intruder'));
    for (const call of endpoints(victim)) await expectError(await call(intruder), 403, 'forbidden');
    // Percent-encoded or differently cased ids are other ids, not a way around the check.
    await expectError(await deleteTunnel(victim.toUpperCase(), await licence(victim)), 403, 'forbidden');

    const after = await cloudflareHolds(await referenceSubdomain(victim));
    expect(after.tunnels).toEqual(before.tunnels);
    expect(after.records).toEqual(before.records);
    expect((await tunnelStatus(victim)).status).toBe(200);
  });
});

describe('provision request body', () => {
  it('answers 400 bad_request naming user_id when it is missing, mistyped or too long', async () => {
    const userId = newUserId('body');
    const token = await licence(userId);
    for (const body of [
      {},
      { user_id: 42 },
      { user_id: '' },
      { user_id: 'x'.repeat(65) },
      { userid: userId },
    ]) {
      const message = await expectError(
        await callGatekeeper('POST', '/tunnels/provision', { token, body }),
        400,
        'bad_request',
      );
      expect(message).toContain('user_id');
    }
  });

  it('answers 400 bad_request to a body that is not JSON', async () => {
    const userId = newUserId('json');
    const res = await callGatekeeper('POST', '/tunnels/provision', {
      token: await licence(userId),
      rawBody: '{"user_id":',
    });
    await expectError(res, 400, 'bad_request');
  });

  it('answers 413 payload_too_large to an oversized body', async () => {
    const userId = newUserId('big');
    const res = await callGatekeeper('POST', '/tunnels/provision', {
      token: await licence(userId),
      body: { user_id: userId, padding: 'x'.repeat(8 * 1024) },
    });
    await expectError(res, 413, 'payload_too_large');
  });

  it('stops reading a chunked body (no Content-Length) past 4 KiB: 413 payload_too_large, no tunnel', async () => {
    const userId = newUserId('chunked');
    const chunk = new TextEncoder().encode(`{"user_id":"${userId}","padding":"${'x'.repeat(1000)}`);
    let sent = 0;
    const res = await callGatekeeper('POST', '/tunnels/provision', {
      token: await licence(userId),
      rawBody: new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 64) controller.enqueue(chunk);
          else controller.close();
        },
      }),
    });
    await expectError(res, 413, 'payload_too_large');
    expect(sent).toBeLessThan(64);
    expect((await tunnelStatus(userId)).status).toBe(404);
  });

  it('ignores unknown fields', async () => {
    const userId = newUserId('extra');
    const res = await callGatekeeper('POST', '/tunnels/provision', {
      token: await licence(userId),
      body: { user_id: userId, region: 'eu', note: { any: 'thing' } },
    });
    expect(res.status).toBe(201);
  });
});
