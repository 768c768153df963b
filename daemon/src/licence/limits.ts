// Tier limits from the remote config, phrased as decisions the control API turns into 403 responses.
import { premiumPageUrl, type RemoteConfig, type TierLimits } from '../../../shared/config.js';
import type { Tier } from '../../../shared/protocol/index.js';

export type LimitDecision =
  | { ok: true }
  | { ok: false; code: 'premium_required' | 'forbidden'; message: string; upgradeUrl: string | undefined };

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

/**
 * May a rule list of `count` rules replace the `saved` ones? The refusal counts what is saved, and says how
 * many the list would have: "you have 4" while 4 are saved, even when the list sent holds 6.
 */
export function checkRuleList(config: RemoteConfig, tier: Tier, count: number, saved: number): LimitDecision {
  const max = limitsFor(config, tier).maxRules;
  if (count <= max || count <= saved) return { ok: true };
  const have = `The ${tier} tier allows ${max} rules, and you have ${saved} saved; this list has ${count}.`;
  return refuse(config, tier, have, `Premium allows up to ${config.tiers.premium.maxRules} rules:`);
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

/** Public overlays are served to viewers through the Gatekeeper's relay, which only Premium may use. */
export function checkPublish(config: RemoteConfig, tier: Tier): LimitDecision {
  if (tier === 'premium') return { ok: true };
  return refuse(
    config,
    tier,
    `Public overlays (served to viewers by the Gatekeeper's relay) are not part of the ${tier} tier.`,
    'Premium publishes overlays to any number of viewers:',
  );
}

/** `pitch` says what upgrading changes about this limit; the premium page, when there is one, ends the message. */
function refuse(config: RemoteConfig, tier: Tier, what: string, pitch: string): LimitDecision {
  const upgradeUrl = premiumPageUrl(config);
  // Only a free user can fix this by upgrading; a premium user at the premium maximum is simply at the limit.
  if (tier === 'premium') return { ok: false, code: 'forbidden', message: what, upgradeUrl };
  return {
    ok: false,
    code: 'premium_required',
    message: upgradeUrl ? `${what} ${pitch} ${upgradeUrl}` : `${what} ${pitch.replace(/:$/, '.')}`,
    upgradeUrl,
  };
}
