// Tier resolution (decisions §2): an active member of our campaign gets the tier of its highest entitled tier.
import type { Tier } from '../../../shared/protocol/index.js';
import type { MembershipIdentity } from './provider.js';

/**
 * "Highest" is the entitled tier with the largest price (`amount_cents`); equal prices fall back to
 * the tier id so the answer never depends on the platform's ordering. A tier id absent from
 * `tierMap` (an unmapped or retired tier) gives `free`; so does any membership that is not active
 * or belongs to another campaign.
 */
export function resolveTier(
  identity: MembershipIdentity,
  campaignId: string,
  tierMap: Readonly<Record<string, Tier>>,
): Tier {
  const membership = identity.memberships.find((m) => m.campaignId === campaignId && m.active);
  if (!membership) return 'free';
  const highest = [...membership.entitledTiers].sort(
    (a, b) => b.amountCents - a.amountCents || a.id.localeCompare(b.id),
  )[0];
  if (!highest) return 'free';
  return Object.hasOwn(tierMap, highest.id) ? (tierMap[highest.id] ?? 'free') : 'free';
}
