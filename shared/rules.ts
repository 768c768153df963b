// Rules (rules.json, GET/PUT /api/rules): a trigger, conditions, a cooldown and overlay-command actions.
import * as v from 'valibot';
import { STREAM_EVENT_TYPES, Uuid } from './protocol/index.js';

const count = v.pipe(v.number(), v.safeInteger(), v.minValue(1));

export const RuleConditions = v.object({
  /** Exact gift name, case-insensitive (gift events). */
  giftName: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  /** Minimum `data.repeatCount` (gift events). */
  minRepeatCount: v.optional(count),
  /** Minimum diamonds: `diamondCount × repeatCount` (gift events). */
  minDiamonds: v.optional(count),
  /** Minimum `data.likeCount` in one like event. */
  minLikes: v.optional(count),
  /** Case-insensitive substring of a chat comment. */
  chatIncludes: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  /** Only events from this `user.uniqueId`. */
  userId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
});
export type RuleConditions = v.InferOutput<typeof RuleConditions>;

export const RuleAction = v.object({
  overlayId: Uuid,
  widgetId: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  command: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  /** String values are templates: `{user.nickname} sent {data.repeatCount} × {data.giftName}`. */
  payload: v.optional(v.record(v.string(), v.unknown()), {}),
});
export type RuleAction = v.InferOutput<typeof RuleAction>;

export const Rule = v.object({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  name: v.optional(v.pipe(v.string(), v.maxLength(100)), ''),
  enabled: v.optional(v.boolean(), true),
  trigger: v.picklist(STREAM_EVENT_TYPES),
  conditions: v.optional(RuleConditions, {}),
  cooldownMs: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(86_400_000)), 0),
  actions: v.pipe(v.array(RuleAction), v.minLength(1), v.maxLength(10)),
});
export type Rule = v.InferOutput<typeof Rule>;

export const RuleList = v.pipe(
  v.array(Rule),
  v.maxLength(500),
  v.check((rules) => new Set(rules.map((r) => r.id)).size === rules.length, 'rule ids must be unique'),
);
export type RuleList = v.InferOutput<typeof RuleList>;
