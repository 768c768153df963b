// The Gatekeeper's bindings and variables (decisions §2), as `npm run types:worker` generates them from
// wrangler.toml and .dev.vars.example (workers/worker-configuration.d.ts, `Cloudflare.Env`); the example file
// documents each one. Variables that have a default in the code may be left unset.
type OptionalVariable =
  | 'MEMBERSHIP_AUTHORIZE_URL'
  | 'MEMBERSHIP_API_BASE'
  | 'APP_DEEP_LINK'
  | 'JWT_PUBLIC_JWKS'
  | 'CLOUDFLARE_API_BASE'
  | 'TUNNEL_ORIGIN_SERVICE'
  | 'RELAY_SHARDS'
  | 'RELAY_SHARD_SIZE'
  | 'LICENCE_TTL_SECONDS';

export type GatekeeperEnv = Omit<Cloudflare.Env, OptionalVariable> &
  Partial<Record<OptionalVariable, string>>;

/** A positive integer variable, or its default when unset or not a positive integer. */
export function positiveVar(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

export interface LicenceClaims {
  sub: string;
  tier: import('../../shared/protocol/index.js').Tier;
  iat: number;
  exp: number;
  jti: string;
  /** The member's licence epoch when it was signed; licences from before epochs count as 1. */
  epoch?: number;
}

export type AppEnv = { Bindings: GatekeeperEnv; Variables: { licence: LicenceClaims } };
