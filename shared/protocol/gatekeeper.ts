// Gatekeeper bodies (interface §§2.1–2.4, decisions §2): health, login, licences, tunnels.
import * as v from 'valibot';
import { nonNegativeInt, Uuid } from './primitives.js';

/**
 * How a licence JWT is signed and checked on both sides (decisions §2): the Gatekeeper signs with this
 * algorithm and audience, the daemon and the Gatekeeper verify with exactly these, and the same clock skew.
 */
export const LICENCE_JWT = {
  algorithm: 'EdDSA',
  audience: 'overlay-daemon',
  clockToleranceSeconds: 30,
} as const;

const TIERS = ['free', 'premium'] as const;
export const Tier = v.picklist(TIERS);
export type Tier = v.InferOutput<typeof Tier>;

export const Health = v.object({
  status: v.literal('ok'),
  version: v.pipe(v.string(), v.regex(/^\d+(\.\d+)*$/, 'must be a dotted version')),
});
export type Health = v.InferOutput<typeof Health>;

export const ExchangeRequest = v.object({
  code: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
  /** PKCE (RFC 7636): checked against the login's challenge once the code is taken. */
  code_verifier: v.optional(v.pipe(v.string(), v.maxLength(512))),
});
export const ExchangeResponse = v.object({ token: v.string(), tier: Tier });
export const ValidateResponse = v.object({
  token: v.string(),
  tier: Tier,
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type ExchangeResponse = v.InferOutput<typeof ExchangeResponse>;
export type ValidateResponse = v.InferOutput<typeof ValidateResponse>;

export const ProvisionRequest = v.object({
  user_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
});
export const ProvisionResponse = v.object({
  tunnel_id: Uuid,
  tunnel_token: v.pipe(v.string(), v.minLength(1)),
  public_url: v.pipe(v.string(), v.url()),
  subdomain: v.pipe(v.string(), v.regex(/^[a-z0-9-]{1,63}$/)),
});
export type ProvisionResponse = v.InferOutput<typeof ProvisionResponse>;

export const TUNNEL_STATES = ['provisioned', 'active', 'inactive'] as const;
export type TunnelState = (typeof TUNNEL_STATES)[number];
export const TunnelStatus = v.object({
  tunnel_id: Uuid,
  subdomain: v.string(),
  public_url: v.pipe(v.string(), v.url()),
  active: v.boolean(),
  state: v.picklist(TUNNEL_STATES),
  connections: nonNegativeInt,
  created_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type TunnelStatus = v.InferOutput<typeof TunnelStatus>;
