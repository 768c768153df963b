// EventSub notifications → stream events: follow → `follow`; a subscription, a resub
// message or a gift of subscriptions → `subscribe`; a cheer → `gift {giftName: "Bits", repeatCount: bits,
// diamondCount: 1}`; a raid → `share {viewers}`. Each event type is read through its own schema (the
// fields of Twitch's subscription types reference); a notification that does not fit is dropped with
// its reason, never thrown.
import * as v from 'valibot';
import { parseWith, StreamEvent, type StreamUser } from '../../../../shared/protocol/index.js';
import { cutText } from '../../../../shared/text.js';

export type EventSubMapResult = { event: StreamEvent } | { drop: string };

const login = v.pipe(v.string(), v.minLength(1));
const count = v.pipe(v.number(), v.integer(), v.minValue(0));

// Twitch's event payloads (only the fields used; the others pass unread).
const FollowEvent = v.object({ user_login: login, user_name: v.string() });
const SubscribeEvent = v.object({
  user_login: login,
  user_name: v.string(),
  tier: v.string(),
  is_gift: v.boolean(),
});
const SubscriptionMessageEvent = v.object({
  user_login: login,
  user_name: v.string(),
  tier: v.string(),
  message: v.object({ text: v.nullish(v.string()) }),
  cumulative_months: v.nullish(count),
});
/** `user_*` are null when the gifter chose to stay anonymous. */
const SubscriptionGiftEvent = v.object({
  user_login: v.nullish(v.string()),
  user_name: v.nullish(v.string()),
  tier: v.string(),
  total: v.pipe(count, v.minValue(1)),
  is_anonymous: v.boolean(),
});
const CheerEvent = v.object({
  user_login: v.nullish(v.string()),
  user_name: v.nullish(v.string()),
  is_anonymous: v.boolean(),
  message: v.nullish(v.string()),
  bits: v.pipe(count, v.minValue(1)),
});
const RaidEvent = v.object({
  from_broadcaster_user_login: login,
  from_broadcaster_user_name: v.string(),
  viewers: count,
});

function twitchUser(userLogin: string, userName: string | null | undefined): StreamUser {
  return { uniqueId: cutText(userLogin, 100), nickname: cutText(userName?.trim() || userLogin, 100) };
}

const ANONYMOUS: StreamUser = { uniqueId: 'anonymous', nickname: 'Anonymous' };

/** The gifter or cheerer, or `anonymous` when they chose to be. */
function maybeAnonymous(event: {
  is_anonymous: boolean;
  user_login?: string | null | undefined;
  user_name?: string | null | undefined;
}): StreamUser {
  return event.is_anonymous || !event.user_login ? ANONYMOUS : twitchUser(event.user_login, event.user_name);
}

/** `1000`, `2000` or `3000`, as EventSub spells the tiers. */
function tier(value: string): { tier?: string } {
  return /^[123]000$/.test(value) ? { tier: value } : {};
}

/** The stream event, not yet validated, or why there is none. */
type Candidate = { type: StreamEvent['type']; platform: 'twitch'; user: StreamUser; data: object };

const MAPPERS: Record<string, (event: unknown) => Candidate | string> = {
  'channel.follow': (event) =>
    read(FollowEvent, event, (e) => ({
      type: 'follow',
      platform: 'twitch',
      user: twitchUser(e.user_login, e.user_name),
      data: {},
    })),
  'channel.subscribe': (event) =>
    read(SubscribeEvent, event, (e) => ({
      type: 'subscribe',
      platform: 'twitch',
      user: twitchUser(e.user_login, e.user_name),
      data: { ...tier(e.tier), gifted: e.is_gift },
    })),
  'channel.subscription.message': (event) =>
    read(SubscriptionMessageEvent, event, (e) => ({
      type: 'subscribe',
      platform: 'twitch',
      user: twitchUser(e.user_login, e.user_name),
      data: {
        ...(e.cumulative_months ? { subMonth: e.cumulative_months } : {}),
        ...tier(e.tier),
        ...(e.message.text ? { comment: cutText(e.message.text, 500) } : {}),
      },
    })),
  'channel.subscription.gift': (event) =>
    read(SubscriptionGiftEvent, event, (e) => ({
      type: 'subscribe',
      platform: 'twitch',
      user: maybeAnonymous(e),
      data: { ...tier(e.tier), gifted: true, giftCount: e.total },
    })),
  'channel.cheer': (event) =>
    read(CheerEvent, event, (e) => ({
      type: 'gift',
      platform: 'twitch',
      user: maybeAnonymous(e),
      data: {
        giftName: 'Bits',
        repeatCount: e.bits,
        diamondCount: 1,
        ...(e.message ? { comment: cutText(e.message, 500) } : {}),
      },
    })),
  'channel.raid': (event) =>
    read(RaidEvent, event, (e) => ({
      type: 'share',
      platform: 'twitch',
      user: twitchUser(e.from_broadcaster_user_login, e.from_broadcaster_user_name),
      data: { viewers: e.viewers },
    })),
};

function read<S extends v.GenericSchema>(
  schema: S,
  event: unknown,
  map: (e: v.InferOutput<S>) => Candidate,
): Candidate | string {
  const parsed = parseWith(schema, event);
  return parsed.ok ? map(parsed.value) : `event.${parsed.error}`;
}

/** One notification (its `subscription.type` and `event`) as a validated stream event of platform `twitch`. */
export function mapNotification(type: string, event: unknown): EventSubMapResult {
  const mapper = Object.hasOwn(MAPPERS, type) ? MAPPERS[type] : undefined;
  if (!mapper) return { drop: `${type} is not a type this daemon subscribes to` };
  const candidate = mapper(event);
  if (typeof candidate === 'string') return { drop: `${type}: ${candidate}` };
  const parsed = parseWith(StreamEvent, candidate);
  return parsed.ok ? { event: parsed.value } : { drop: `${type}: not a valid event: ${parsed.error}` };
}
