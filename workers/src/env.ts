// The Gatekeeper's bindings and variables (decisions §2); `.dev.vars.example` documents each one.
export interface GatekeeperEnv {
  /** Tunnel records, remote config, membership cache. */
  GATEKEEPER_KV: KVNamespace;
  /** Single-use OAuth `state` values and temporary auth codes (KV cannot make anything single-use). */
  ONE_TIME_STORE: DurableObjectNamespace<import('./one-time-store.js').OneTimeStore>;
  /** One object per member: their membership re-checks run one at a time (refresh-token rotation). */
  MEMBERSHIP_RECHECK: DurableObjectNamespace<import('./membership/recheck-lock.js').MembershipRecheck>;
  /** Per-IP limits on /auth/*, /validate and /tunnels/* (the Workers `ratelimits` binding). */
  RATE_LIMITER: RateLimit;
  /** The Gatekeeper's own origin: JWT `iss`, and the base of the OAuth redirect_uri. */
  PUBLIC_BASE_URL: string;
  MEMBERSHIP_CLIENT_ID: string;
  MEMBERSHIP_CLIENT_SECRET: string;
  MEMBERSHIP_AUTHORIZE_URL?: string;
  MEMBERSHIP_API_BASE?: string;
  MEMBERSHIP_CAMPAIGN_ID: string;
  APP_DEEP_LINK?: string;
  /** Ed25519 private JWK (JSON) with a `kid`. */
  JWT_PRIVATE_JWK: string;
  /** Optional JSON `{keys:[…]}` of older public keys still accepted during a rotation. */
  JWT_PUBLIC_JWKS?: string;
  CLOUDFLARE_API_TOKEN: string;
  CLOUDFLARE_ACCOUNT_ID: string;
  CLOUDFLARE_ZONE_ID: string;
  CLOUDFLARE_API_BASE?: string;
  TUNNEL_DOMAIN: string;
  TUNNEL_ORIGIN_SERVICE?: string;
  SUBDOMAIN_SECRET: string;
  /** 32 random bytes, base64: AES-GCM key for stored platform refresh tokens. */
  TOKEN_ENCRYPTION_KEY: string;
}

export interface LicenceClaims {
  sub: string;
  tier: import('../../shared/protocol/index.js').Tier;
  iat: number;
  exp: number;
  jti: string;
  /** The member's licence epoch when it was signed (decisions-2 §4); licences from before epochs count as 1. */
  epoch?: number;
}

export type AppEnv = { Bindings: GatekeeperEnv; Variables: { licence: LicenceClaims } };

// Types `env` and `exports` from "cloudflare:workers" for this Worker.
declare global {
  namespace Cloudflare {
    interface Env extends GatekeeperEnv {}
    interface GlobalProps {
      mainModule: typeof import('./index.js');
    }
  }
}
