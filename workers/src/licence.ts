// Licence JWTs (decisions §2): EdDSA with a `kid`, pinned algorithm, issuer and audience, 30 s tolerance.
import { createLocalJWKSet, importJWK, type JWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import * as v from 'valibot';
import { LICENCE_JWT, parseWith, Tier } from '../../shared/protocol/index.js';
import { type GatekeeperEnv, type LicenceClaims, positiveVar } from './env.js';
import { ApiError } from './errors.js';
import { type MemberRecord, memberEpoch, readMember } from './membership/member-store.js';

/** How long a licence is valid: `LICENCE_TTL_SECONDS`, 7 days by default. */
export const DEFAULT_LICENCE_TTL_SECONDS = 7 * 24 * 60 * 60;
export const licenceTtlSeconds = (env: GatekeeperEnv) =>
  positiveVar(env.LICENCE_TTL_SECONDS, DEFAULT_LICENCE_TTL_SECONDS);
const ALG = LICENCE_JWT.algorithm;

const LicenceClaimsSchema: v.GenericSchema<LicenceClaims> = v.object({
  sub: v.pipe(v.string(), v.minLength(1)),
  tier: Tier,
  iat: v.number(),
  exp: v.number(),
  jti: v.string(),
  epoch: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
});

interface KeyMaterial {
  kid: string;
  privateKey: CryptoKey;
  publicJwks: { keys: JWK[] };
  verifyKeys: ReturnType<typeof createLocalJWKSet>;
}

// Imported once per isolate; a secret change deploys a new isolate.
let cached: { source: string; keys: Promise<KeyMaterial> } | undefined;

function keyMaterial(env: GatekeeperEnv): Promise<KeyMaterial> {
  const source = `${env.JWT_PRIVATE_JWK}\n${env.JWT_PUBLIC_JWKS ?? ''}`;
  if (cached?.source !== source) cached = { source, keys: loadKeys(env) };
  return cached.keys;
}

async function loadKeys(env: GatekeeperEnv): Promise<KeyMaterial> {
  if (!env.JWT_PRIVATE_JWK) throw new Error('JWT_PRIVATE_JWK is not set');
  const jwk = JSON.parse(env.JWT_PRIVATE_JWK) as JWK;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || !jwk.d || !jwk.kid) {
    throw new Error('JWT_PRIVATE_JWK must be an Ed25519 private JWK with a kid');
  }
  const privateKey = (await importJWK(jwk, ALG)) as CryptoKey;
  const current: JWK = { ...publicMembers(jwk), alg: ALG, use: 'sig' };
  const listed: JWK[] = env.JWT_PUBLIC_JWKS ? (JSON.parse(env.JWT_PUBLIC_JWKS) as { keys: JWK[] }).keys : [];
  const older = listed.map(publicMembers);
  const publicJwks = { keys: [current, ...older.filter((k) => k.kid !== current.kid)] };
  return { kid: jwk.kid, privateKey, publicJwks, verifyKeys: createLocalJWKSet(publicJwks) };
}

/**
 * Only the public members of an Ed25519 JWK are ever published: an allow-list, so a private or unknown
 * member pasted into a secret by mistake (`d`, or anything else) never leaves the Worker.
 */
const PUBLIC_JWK_MEMBERS = ['kty', 'crv', 'x', 'kid', 'alg', 'use'] as const;
function publicMembers(jwk: JWK): JWK {
  const out: JWK = {};
  for (const name of PUBLIC_JWK_MEMBERS) if (typeof jwk[name] === 'string') out[name] = jwk[name];
  return out;
}

export async function publicJwks(env: GatekeeperEnv): Promise<{ keys: JWK[] }> {
  return (await keyMaterial(env)).publicJwks;
}

export async function signLicence(
  env: GatekeeperEnv,
  subject: { sub: string; tier: Tier; epoch?: number },
  now = Date.now(),
): Promise<{ token: string; expiresAt: Date }> {
  const { kid, privateKey } = await keyMaterial(env);
  const iat = Math.floor(now / 1000);
  const exp = iat + licenceTtlSeconds(env);
  const token = await new SignJWT({ tier: subject.tier, epoch: subject.epoch ?? 1 })
    .setProtectedHeader({ alg: ALG, kid, typ: 'JWT' })
    .setIssuer(env.PUBLIC_BASE_URL)
    .setAudience(LICENCE_JWT.audience)
    .setSubject(subject.sub)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(crypto.randomUUID())
    .sign(privateKey);
  return { token, expiresAt: new Date(exp * 1000) };
}

/** Verifies a licence; anything forged, expired, malformed, or signed otherwise is `invalid_token`. */
export async function verifyLicence(env: GatekeeperEnv, token: string): Promise<LicenceClaims> {
  const { verifyKeys } = await keyMaterial(env);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, verifyKeys, {
      algorithms: [ALG],
      issuer: env.PUBLIC_BASE_URL,
      audience: LICENCE_JWT.audience,
      clockTolerance: LICENCE_JWT.clockToleranceSeconds,
      requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      typ: 'JWT',
    }));
  } catch {
    throw new ApiError('invalid_token', 'The licence token is invalid or expired');
  }
  // The signature vouches for the issuer, not for the shape: the claims are still checked.
  const claims = parseWith(LicenceClaimsSchema, payload);
  if (!claims.ok)
    throw new ApiError('invalid_token', `The licence token carries bad claims (${claims.error})`);
  return claims.value;
}

/** The bearer token of an Authorization header, or `unauthenticated`. */
export function bearerToken(header: string | undefined): string {
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  if (!match?.[1]) throw new ApiError('unauthenticated', 'Authorization: Bearer <token> is required');
  return match[1];
}

/**
 * A licence that is valid and not revoked: its signature and claims hold, and its epoch is not below
 * the member's (a logout raised it). Revoked is `invalid_token`, like forged.
 */
export async function verifyCurrentLicence(env: GatekeeperEnv, token: string): Promise<LicenceClaims> {
  return (await verifyCurrentLicenceOf(env, token)).claims;
}

/** verifyCurrentLicence, with the member record it read (null when none is on record). */
export async function verifyCurrentLicenceOf(
  env: GatekeeperEnv,
  token: string,
): Promise<{ claims: LicenceClaims; member: MemberRecord | null }> {
  const claims = await verifyLicence(env, token);
  const member = await readMember(env, claims.sub);
  if ((claims.epoch ?? 1) < memberEpoch(member))
    throw new ApiError('invalid_token', 'This licence was signed out; sign in again');
  return { claims, member };
}

/**
 * The licence of an Authorization header on /validate and /auth/logout, where a missing or malformed
 * token is `invalid_token`, like a forged one (decisions §2).
 */
export function licenceBearer(header: string | undefined): string {
  try {
    return bearerToken(header);
  } catch {
    throw new ApiError('invalid_token', 'Authorization: Bearer <licence token> is required');
  }
}
