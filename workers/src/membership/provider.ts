// The membership platform behind login and licence checks: a small interface so another platform can be added.

/** Tokens the platform returns from its token endpoint (authorization code or refresh grant). */
export interface PlatformTokens {
  accessToken: string;
  /** Platforms rotate refresh tokens: the new one replaces the stored one at once. */
  refreshToken: string;
}

/** One entitled tier of a membership, with its price (used to pick the highest one). */
export interface EntitledTier {
  id: string;
  amountCents: number;
}

/** One of the user's memberships, reduced to what tier resolution needs. */
export interface Membership {
  campaignId: string;
  /** True only while the platform counts the member as paying (Patreon: `active_patron`). */
  active: boolean;
  /** The platform's own status word, kept for logs and docs (`declined_patron`, …). */
  status: string | null;
  entitledTiers: EntitledTier[];
}

export interface MembershipIdentity {
  userId: string;
  memberships: Membership[];
}

/**
 * Why a platform call failed. `unavailable` (network, timeout, 429, 5xx, a response we cannot read)
 * never costs a user their licence by itself; `rejected` (the grant was refused: revoked access,
 * used or unknown code) means the platform no longer vouches for the user.
 */
export class MembershipError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'rejected',
    message: string,
  ) {
    super(message);
  }
}

export interface MembershipProvider {
  /** The platform's authorization page for this login. */
  authorizeUrl(params: { state: string; redirectUri: string }): string;
  exchangeCode(code: string, redirectUri: string): Promise<PlatformTokens>;
  refresh(refreshToken: string): Promise<PlatformTokens>;
  identity(accessToken: string): Promise<MembershipIdentity>;
}
