// Verifies license.json's JWT against the Gatekeeper's published keys: the daemon takes
// tier and expiry from signed claims only, never from what its own file says.
import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, errors, type JSONWebKeySet, jwtVerify } from 'jose';
import * as v from 'valibot';
import { LICENCE_JWT, parseJsonWith, Tier } from '../../../shared/protocol/index.js';
import { writeFileAtomic } from '../store/atomic-file.js';

/** The algorithm the Gatekeeper signs with, pinned: a token with any other is refused. */
const ALGORITHMS = [LICENCE_JWT.algorithm];

/**
 * A licence the cached keys do not verify asks the Gatekeeper for its keys again at most this often: a
 * key replaced under the same `kid` is picked up, and forged licences cannot make the daemon fetch on
 * every read.
 */
export const JWKS_REFETCH_MS = 60_000;

const Jwks = v.object({
  keys: v.array(v.looseObject({ kty: v.string(), kid: v.optional(v.string()) })),
});

const VerifiedClaims = v.object({
  sub: v.pipe(v.string(), v.minLength(1)),
  tier: Tier,
  exp: v.pipe(v.number(), v.safeInteger()),
  /** When the Gatekeeper signed it, on its clock: `exp - iat` is the licence's lifetime. */
  iat: v.optional(v.pipe(v.number(), v.safeInteger())),
  epoch: v.optional(v.pipe(v.number(), v.safeInteger())),
});
export type VerifiedClaims = v.InferOutput<typeof VerifiedClaims>;

type Verification = { ok: true; claims: VerifiedClaims } | { ok: false; reason: string };

/** A key set and its jose resolver, built once per set (jose imports each key on first use and keeps it). */
interface KeySet {
  keys: JSONWebKeySet;
  resolve: ReturnType<typeof createLocalJWKSet>;
}

function keySet(keys: JSONWebKeySet): KeySet {
  return { keys, resolve: createLocalJWKSet(keys) };
}

interface LicenceVerifierOptions {
  /** Where jwks.json is cached. */
  jwksFile: string;
  /** The Gatekeeper's origin: the licence's `iss`. */
  issuer: string;
  /** Fetches the Gatekeeper's current key set; absent offline (the cache alone is used). */
  fetchJwks?: () => Promise<unknown>;
  now?: () => number;
}

export class LicenceVerifier {
  readonly #options: LicenceVerifierOptions;
  /**
   * The Gatekeeper's keys: jwks.json in the data dir, so a licence verifies offline; fetched again when a
   * licence does not verify with them (an unknown kid, or a signature the cached key does not match).
   */
  #keys: KeySet | undefined;
  /** When the keys were last fetched because a licence did not verify. */
  #refetchedAt = Number.NEGATIVE_INFINITY;

  constructor(options: LicenceVerifierOptions) {
    this.#options = options;
  }

  /**
   * Verifies signature, `iss`, `aud`, `exp` and the pinned algorithm. Without a cached set, the set is
   * fetched. A `kid` the cached set does not hold, or a signature its key does not verify (a key made
   * afresh under the same `kid`), fetches the set again, at most once a minute, then tries again.
   */
  async verify(token: string): Promise<Verification> {
    const cached = this.#keys ?? (await this.#readCache());
    if (cached) {
      const first = await this.#verifyWith(cached, token);
      if (first.ok || !first.keyMayHaveChanged) return first.result;
      const now = this.#options.now?.() ?? Date.now();
      if (now - this.#refetchedAt < JWKS_REFETCH_MS) return first.result;
      this.#refetchedAt = now;
    }
    const fresh = await this.#refresh();
    if (!fresh)
      return {
        ok: false,
        reason: 'the Gatekeeper’s signing keys are not available (never fetched, and it cannot be reached)',
      };
    return (await this.#verifyWith(fresh, token)).result;
  }

  async #verifyWith(
    keys: KeySet,
    token: string,
  ): Promise<
    { ok: true; result: Verification } | { ok: false; keyMayHaveChanged: boolean; result: Verification }
  > {
    try {
      const { payload } = await jwtVerify(token, keys.resolve, {
        algorithms: ALGORITHMS,
        issuer: this.#options.issuer,
        audience: LICENCE_JWT.audience,
        clockTolerance: LICENCE_JWT.clockToleranceSeconds,
        currentDate: new Date(this.#options.now?.() ?? Date.now()),
        requiredClaims: ['sub', 'exp'],
      });
      const claims = v.safeParse(VerifiedClaims, payload);
      if (!claims.success)
        return {
          ok: false,
          keyMayHaveChanged: false,
          result: { ok: false, reason: 'its claims are malformed' },
        };
      return { ok: true, result: { ok: true, claims: claims.output } };
    } catch (err) {
      const keyMayHaveChanged =
        err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWSSignatureVerificationFailed;
      return { ok: false, keyMayHaveChanged, result: { ok: false, reason: describe(err) } };
    }
  }

  async #readCache(): Promise<KeySet | undefined> {
    let text: string;
    try {
      text = await readFile(this.#options.jwksFile, 'utf8');
    } catch {
      return undefined;
    }
    const parsed = parseJsonWith(Jwks, text);
    if (parsed.ok) this.#keys = keySet(parsed.value as JSONWebKeySet);
    return this.#keys;
  }

  async #refresh(): Promise<KeySet | undefined> {
    if (!this.#options.fetchJwks) return this.#keys;
    let body: unknown;
    try {
      body = await this.#options.fetchJwks();
    } catch {
      return this.#keys;
    }
    const parsed = v.safeParse(Jwks, body);
    if (!parsed.success) return this.#keys;
    this.#keys = keySet(parsed.output as JSONWebKeySet);
    await writeFileAtomic(this.#options.jwksFile, `${JSON.stringify(this.#keys.keys, null, 2)}\n`).catch(
      () => {},
    );
    return this.#keys;
  }
}

function describe(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'it has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `its ${err.claim} claim is wrong`;
  if (err instanceof errors.JWKSNoMatchingKey) return 'it is signed by a key the Gatekeeper does not publish';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'it uses an algorithm that is not allowed';
  return 'it is not a well-formed licence';
}
