import { env } from 'cloudflare:workers';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { signLicence } from '../../workers/src/licence.js';
import {
  gatekeeper,
  login,
  premiumPatron,
  prepareLoginSuite,
  uniqueUserId,
  WARM_UP_TIMEOUT_MS,
} from './helpers/gatekeeper.js';

beforeAll(prepareLoginSuite, WARM_UP_TIMEOUT_MS);

describe('GET /.well-known/jwks.json', () => {
  it('publishes the public key only: no private member leaks', async () => {
    const res = await gatekeeper('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    const text = await res.text();
    const jwks: JSONWebKeySet = JSON.parse(text);
    expect(jwks.keys).toHaveLength(1);
    const [key] = jwks.keys;
    expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(key?.kid).toBe(JSON.parse(env.JWT_PRIVATE_JWK).kid);
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key).not.toHaveProperty(secret);
    expect(text).not.toContain(JSON.parse(env.JWT_PRIVATE_JWK).d);
  });

  it('verifies a licence issued by the login, by its kid', async () => {
    const user = uniqueUserId('jwks');
    await premiumPatron(user);
    const { token } = await login(user);
    const jwks: JSONWebKeySet = await (await gatekeeper('/.well-known/jwks.json')).json();
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: env.PUBLIC_BASE_URL,
      audience: 'overlay-daemon',
      algorithms: ['EdDSA'],
    });
    expect(payload).toMatchObject({ sub: user, tier: 'premium' });
    expect(payload.exp! - payload.iat!).toBe(7 * 24 * 60 * 60);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'EdDSA', typ: 'JWT', kid: jwks.keys[0]?.kid });
  });

  it('signs licences for LICENCE_TTL_SECONDS when it is set', async () => {
    const { token, expiresAt } = await signLicence(
      { ...env, LICENCE_TTL_SECONDS: '45' },
      { sub: 'ttl', tier: 'premium' },
    );
    const payload = decodeJwt(token);
    expect(payload.exp! - payload.iat!).toBe(45);
    expect(expiresAt.getTime()).toBe(payload.exp! * 1000);
  });
});
