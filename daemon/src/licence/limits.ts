// Tier limits from the remote config, phrased as decisions the control API turns into 403 responses.
import type { RemoteConfig, TierLimits } from '../../../shared/config.js';
import type { Tier } from '../../../shared/protocol/index.js';

export type LimitDecision =
  | { ok: true }
  | { ok: false; code: 'premium_required' | 'forbidden'; message: string; upgradeUrl: string };

export function limitsFor(config: RemoteConfig, tier: Tier): TierLimits {
  return config.tiers[tier];
}

/** May one more item be added to `count` existing ones? Existing items are never touched, only new ones refused. */
export function checkCount(
  config: RemoteConfig,
  tier: Tier,
  what: 'overlays' | 'rules',
  count: number,
): LimitDecision {
  const limits = limitsFor(config, tier);
  const max = what === 'overlays' ? limits.maxOverlays : limits.maxRules;
  if (count < max) return { ok: true };
  const have = `The ${tier} tier allows ${max} ${what}, and you have ${count}.`;
  const premiumMax = what === 'overlays' ? config.tiers.premium.maxOverlays : config.tiers.premium.maxRules;
  // Said in terms of the limit itself: remote access has nothing to do with how many overlays fit.
  return refuse(config, tier, have, `Premium allows up to ${premiumMax} ${what}:`);
}

export function checkTunnel(config: RemoteConfig, tier: Tier): LimitDecision {
  if (limitsFor(config, tier).tunnel) return { ok: true };
  return refuse(
    config,
    tier,
    `Remote access through a tunnel is not part of the ${tier} tier.`,
    config.upgrade.message,
  );
}

/** `pitch` says what upgrading changes about this limit; the upgrade URL always ends the message. */
function refuse(config: RemoteConfig, tier: Tier, what: string, pitch: string): LimitDecision {
  const upgradeUrl = config.upgrade.url;
  // Only a free user can fix this by upgrading; a premium user at the premium maximum is simply at the limit.
  if (tier === 'premium') return { ok: false, code: 'forbidden', message: what, upgradeUrl };
  return {
    ok: false,
    code: 'premium_required',
    message: `${what} ${pitch} ${upgradeUrl}`,
    upgradeUrl,
  };
}
