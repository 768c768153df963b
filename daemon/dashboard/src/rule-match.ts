// Which rules an event would fire, for the test panel when the daemon's answer does not list them.
import type { StreamEvent } from '../../../shared/protocol/index.js';
import type { Rule, RuleConditions } from '../../../shared/rules.js';

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** True when every condition holds; a condition the event type cannot satisfy does not hold. */
export function conditionsHold(conditions: RuleConditions, event: StreamEvent): boolean {
  const data: Record<string, unknown> = event.data;
  const c = conditions;
  if (c.userId !== undefined && c.userId !== event.user.uniqueId) return false;
  if (c.giftName !== undefined && str(data.giftName)?.toLowerCase() !== c.giftName.toLowerCase())
    return false;
  const repeat = num(data.repeatCount);
  if (c.minRepeatCount !== undefined && (repeat ?? 0) < c.minRepeatCount) return false;
  if (c.minDiamonds !== undefined && (num(data.diamondCount) ?? 0) * (repeat ?? 0) < c.minDiamonds)
    return false;
  if (c.minLikes !== undefined && (num(data.likeCount) ?? 0) < c.minLikes) return false;
  if (
    c.chatIncludes !== undefined &&
    !str(data.comment)?.toLowerCase().includes(c.chatIncludes.toLowerCase())
  ) {
    return false;
  }
  return true;
}

/** Enabled rules whose trigger and conditions match; cooldowns are the daemon's to know, not ours. */
export function matchingRules(rules: readonly Rule[], event: StreamEvent): Rule[] {
  return rules.filter((r) => r.enabled && r.trigger === event.type && conditionsHold(r.conditions, event));
}
