// Kick through the Gatekeeper: the webhook bodies Kick sends for the seven event types the Gatekeeper
// subscribes to, how each becomes a stream event (`platform: "kick"`), and the frames of the daemon's
// event feed (`GET /kick/events`). The payload schemas keep the fields they do not name (Kick adds
// fields over time); only the fields the mapping reads are checked.
import * as v from 'valibot';
import { cutText } from '../text.js';
import { StreamEvent, type StreamUser } from './events.js';
import { nonNegativeInt, positiveInt } from './primitives.js';

/** The event types the Gatekeeper subscribes each connected channel to, and maps. */
export const KICK_EVENT_TYPES = [
  'chat.message.sent',
  'channel.followed',
  'channel.subscription.new',
  'channel.subscription.renewal',
  'channel.subscription.gifts',
  'kicks.gifted',
  'livestream.status.updated',
] as const;
export type KickEventType = (typeof KICK_EVENT_TYPES)[number];

/** The headers of a webhook delivery. */
export const KICK_WEBHOOK_HEADER = {
  messageId: 'Kick-Event-Message-Id',
  subscriptionId: 'Kick-Event-Subscription-Id',
  signature: 'Kick-Event-Signature',
  timestamp: 'Kick-Event-Message-Timestamp',
  type: 'Kick-Event-Type',
  version: 'Kick-Event-Version',
} as const;

/** Bounds of the webhook route and of what a channel keeps. */
export const KICK_WEBHOOK_LIMITS = {
  /** A body over this is refused (413) while it is read. */
  bodyBytes: 1024 * 1024,
  /** A delivery whose timestamp is further than this from the Gatekeeper's clock is refused (401). */
  timestampToleranceMs: 5 * 60 * 1000,
  /** Events are kept this long for the daemon… */
  keptMs: 24 * 60 * 60 * 1000,
  /** …and at most this many per channel (the oldest go first). */
  keptEvents: 10_000,
  /** Delivery ids remembered per channel, so a repeated delivery is stored once. */
  deliveryIds: 10_000,
} as const;

// --- Kick's payloads -----------------------------------------------------------------------------

const text = v.string();
const nullableText = v.nullish(v.string());

/** A Kick user as the payloads carry it (`broadcaster`, `sender`, `follower`, `subscriber`…). */
export const KickUser = v.looseObject({
  is_anonymous: v.nullish(v.boolean()),
  user_id: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  username: v.pipe(text, v.minLength(1)),
  is_verified: v.nullish(v.boolean()),
  profile_picture: nullableText,
  channel_slug: nullableText,
  identity: v.nullish(v.unknown()),
});
export type KickUser = v.InferOutput<typeof KickUser>;

/** A gifter: every field but `is_anonymous` is null when they chose to stay anonymous. */
export const KickMaybeAnonymousUser = v.looseObject({
  is_anonymous: v.nullish(v.boolean()),
  user_id: v.nullish(v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
  username: nullableText,
  is_verified: v.nullish(v.boolean()),
  profile_picture: nullableText,
  channel_slug: nullableText,
  identity: v.nullish(v.unknown()),
});

const withBroadcaster = <E extends v.ObjectEntries>(entries: E) =>
  v.looseObject({ broadcaster: KickUser, ...entries });

export const KickChatMessagePayload = withBroadcaster({
  message_id: v.pipe(text, v.minLength(1), v.maxLength(200)),
  sender: KickUser,
  content: text,
  replies_to: v.nullish(v.unknown()),
  emotes: v.nullish(v.unknown()),
  created_at: nullableText,
});
export const KickFollowPayload = withBroadcaster({ follower: KickUser });
export const KickSubscriptionPayload = withBroadcaster({
  subscriber: KickUser,
  /** Months: 1 for a new subscription, the running count for a renewal. */
  duration: v.nullish(nonNegativeInt),
  created_at: nullableText,
  expires_at: nullableText,
});
export const KickSubscriptionGiftsPayload = withBroadcaster({
  gifter: KickMaybeAnonymousUser,
  giftees: v.array(v.looseObject({})),
  created_at: nullableText,
  expires_at: nullableText,
});
export const KickKicksGiftedPayload = withBroadcaster({
  sender: KickUser,
  gift: v.looseObject({
    /** The Kicks spent. */
    amount: nonNegativeInt,
    name: v.pipe(text, v.minLength(1)),
    type: nullableText,
    tier: nullableText,
    message: nullableText,
  }),
  created_at: nullableText,
});
export const KickLivestreamStatusPayload = withBroadcaster({
  is_live: v.boolean(),
  title: nullableText,
  started_at: nullableText,
  ended_at: nullableText,
});

/** The body schema of each mapped event type. */
export const KICK_WEBHOOK_PAYLOADS = {
  'chat.message.sent': KickChatMessagePayload,
  'channel.followed': KickFollowPayload,
  'channel.subscription.new': KickSubscriptionPayload,
  'channel.subscription.renewal': KickSubscriptionPayload,
  'channel.subscription.gifts': KickSubscriptionGiftsPayload,
  'kicks.gifted': KickKicksGiftedPayload,
  'livestream.status.updated': KickLivestreamStatusPayload,
} as const satisfies Record<KickEventType, v.GenericSchema>;
export type KickWebhookPayload<T extends KickEventType> = v.InferOutput<(typeof KICK_WEBHOOK_PAYLOADS)[T]>;

export const isKickEventType = (type: string): type is KickEventType =>
  (KICK_EVENT_TYPES as readonly string[]).includes(type);

// --- The daemon's event feed ---------------------------------------------------------------------

/**
 * A stream going live or ending (`livestream.status.updated`). It is not a stream event (no viewer, no
 * rules): the daemon ends its current session on it, so a stream that starts opens a fresh session with
 * its first event and one that ends closes the session at its last event.
 */
export const KickLivestreamEvent = v.object({
  type: v.literal('livestream'),
  platform: v.literal('kick'),
  live: v.boolean(),
  title: v.optional(v.pipe(v.string(), v.maxLength(200))),
  startedAt: v.optional(v.pipe(v.string(), v.maxLength(64))),
  endedAt: v.optional(v.pipe(v.string(), v.maxLength(64))),
});
export type KickLivestreamEvent = v.InferOutput<typeof KickLivestreamEvent>;

/** What the feed carries: a stream event, or a live/offline marker. */
export const KickFeedEvent = v.variant('type', [StreamEvent, KickLivestreamEvent]);
export type KickFeedEvent = v.InferOutput<typeof KickFeedEvent>;

const seq = positiveInt;
/**
 * When an event happened, in milliseconds since the epoch (UTC): the time Kick's payload gives
 * (`created_at`; a stream's `started_at`, or `ended_at` once it ended) where it gives one, else when the
 * Gatekeeper received the delivery; never later than that receipt. A daemon tells events it catches up
 * on (this far in the past) from live ones by it.
 */
export const KickEventAt = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
/** Every frame the Gatekeeper sends on `GET /kick/events` (server to daemon; the daemon sends nothing). */
export const KickEventsFrame = v.variant('type', [
  v.object({ type: v.literal('event'), seq, at: KickEventAt, event: KickFeedEvent }),
  /** Events from `from - 1` down to the daemon's `after` are no longer kept (past 24 h or 10,000 events). */
  v.object({ type: v.literal('gap'), from: seq }),
]);
export type KickEventsFrame = v.InferOutput<typeof KickEventsFrame>;

/**
 * How the Gatekeeper ends a feed socket (besides 1000 when the member unlinked Kick). The licence's `exp`
 * passing: reconnect with a refreshed licence. Signed out, or no longer a member: do not reconnect before
 * a new sign-in. Replaced: the member opened more feed sockets than they may hold and this, the oldest,
 * made way; do not reconnect by yourself (two daemons of one member would take turns).
 */
export const KICK_FEED_CLOSE = { licenceExpired: 4401, signedOut: 4403, replaced: 4409 } as const;

/** Feed sockets one member may hold at once; a newer one closes the oldest (4409). */
export const KICK_FEED_MAX_SOCKETS = 2;

/** `after` of `GET /kick/events`: a seq already received (0 for "everything kept"); absent for live only. */
export const KickEventsAfter = v.pipe(
  v.string(),
  v.regex(/^(0|[1-9][0-9]{0,15})$/, 'after must be a seq (a whole number)'),
  v.transform(Number),
  nonNegativeInt,
);

// --- Mapping ------------------------------------------------------------------------------------------

const ANONYMOUS: StreamUser = { uniqueId: 'anonymous', nickname: 'Anonymous' };

/** At most `max` UTF-16 units, never splitting a character (one cutter for every platform's text). */
const cut = cutText;

/**
 * A Kick user's slug (the lowercase name in the channel's address, as Twitch's login) from their display
 * name, where a payload gives no slug: Kick makes it by lowercasing the name and turning `_` into `-`
 * (`Cool_Guy` → `cool-guy`). One viewer is one `uniqueId` whichever way the event came.
 */
export function kickSlugOf(username: string): string {
  return username.trim().toLowerCase().replace(/_/g, '-');
}

/**
 * A Kick user as a stream user: `uniqueId` is the channel slug (from the name when the payload has none,
 * the user id when it has neither); `nickname` the display name.
 */
export function kickStreamUser(user: v.InferOutput<typeof KickUser>): StreamUser {
  const uniqueId = user.channel_slug?.trim() || kickSlugOf(user.username) || String(user.user_id);
  return {
    uniqueId: cut(uniqueId, 100),
    nickname: cut(user.username, 100),
    ...(user.profile_picture ? { profilePictureUrl: cut(user.profile_picture, 2048) } : {}),
  };
}

function gifterOf(gifter: v.InferOutput<typeof KickMaybeAnonymousUser>): StreamUser {
  if (gifter.is_anonymous || gifter.user_id == null || !gifter.username) return ANONYMOUS;
  return kickStreamUser({ ...gifter, user_id: gifter.user_id, username: gifter.username });
}

/** A checked payload of a mapped type as what the feed carries. */
function mapPayload(type: KickEventType, payload: unknown): KickFeedEvent {
  switch (type) {
    case 'chat.message.sent': {
      const p = payload as KickWebhookPayload<'chat.message.sent'>;
      return {
        type: 'chat',
        platform: 'kick',
        user: kickStreamUser(p.sender),
        data: { comment: cut(p.content, 500), messageId: p.message_id },
      };
    }
    case 'channel.followed': {
      const p = payload as KickWebhookPayload<'channel.followed'>;
      return { type: 'follow', platform: 'kick', user: kickStreamUser(p.follower), data: {} };
    }
    case 'channel.subscription.new':
    case 'channel.subscription.renewal': {
      const p = payload as KickWebhookPayload<'channel.subscription.new'>;
      return {
        type: 'subscribe',
        platform: 'kick',
        user: kickStreamUser(p.subscriber),
        data: p.duration ? { subMonth: p.duration } : {},
      };
    }
    case 'channel.subscription.gifts': {
      const p = payload as KickWebhookPayload<'channel.subscription.gifts'>;
      return {
        type: 'subscribe',
        platform: 'kick',
        user: gifterOf(p.gifter),
        data: { gifted: true, giftCount: Math.max(1, p.giftees.length) },
      };
    }
    case 'kicks.gifted': {
      const p = payload as KickWebhookPayload<'kicks.gifted'>;
      return {
        type: 'gift',
        platform: 'kick',
        user: kickStreamUser(p.sender),
        data: { giftName: cut(p.gift.name, 100), repeatCount: 1, diamondCount: p.gift.amount },
      };
    }
    case 'livestream.status.updated': {
      const p = payload as KickWebhookPayload<'livestream.status.updated'>;
      return {
        type: 'livestream',
        platform: 'kick',
        live: p.is_live,
        ...(p.title ? { title: cut(p.title, 200) } : {}),
        ...(p.started_at ? { startedAt: cut(p.started_at, 64) } : {}),
        ...(p.ended_at ? { endedAt: cut(p.ended_at, 64) } : {}),
      };
    }
  }
}

/** An RFC 3339 time of Kick's payloads in ms since the epoch; undefined when absent or not such a time. */
function kickTime(value: string | null | undefined): number | undefined {
  if (!value || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(value)) {
    return undefined;
  }
  const at = Date.parse(value);
  return Number.isSafeInteger(at) && at >= 0 ? at : undefined;
}

/** When Kick says the event of a checked payload happened (a follow carries no time). */
function timeOf(type: KickEventType, payload: unknown): number | undefined {
  switch (type) {
    case 'channel.followed':
      return undefined;
    case 'livestream.status.updated': {
      const p = payload as KickWebhookPayload<'livestream.status.updated'>;
      return kickTime(p.is_live ? p.started_at : p.ended_at);
    }
    default:
      return kickTime((payload as { created_at?: string | null }).created_at);
  }
}

/** What a webhook body is, once its signature holds. */
export type KickWebhookParse =
  | { kind: 'unmapped' }
  | { kind: 'invalid'; error: string }
  | {
      kind: 'event';
      broadcasterUserId: number;
      event: KickFeedEvent;
      /** When Kick says it happened (ms since the epoch), when the payload says. */
      at?: number;
    };

/**
 * A webhook body (already JSON-parsed) of type `type`: a type we do not map is `unmapped`; a body that
 * does not fit its type's schema is `invalid` with the reason; else the event it maps to, the channel
 * (the broadcaster's user id) it belongs to, and when Kick says it happened.
 */
export function parseKickWebhook(type: string, body: unknown): KickWebhookParse {
  if (!isKickEventType(type)) return { kind: 'unmapped' };
  const result = v.safeParse(KICK_WEBHOOK_PAYLOADS[type], body);
  if (!result.success) {
    const issue = result.issues[0];
    const field = v.getDotPath(issue);
    return { kind: 'invalid', error: field ? `${field}: ${issue.message}` : issue.message };
  }
  const event = mapPayload(type, result.output);
  const at = timeOf(type, result.output);
  return {
    kind: 'event',
    broadcasterUserId: result.output.broadcaster.user_id,
    event,
    ...(at === undefined ? {} : { at }),
  };
}

/** The event a webhook body maps to, or undefined for a type we do not map or a body that does not fit. */
export function mapKickWebhook(type: string, payload: unknown): KickFeedEvent | undefined {
  const parsed = parseKickWebhook(type, payload);
  return parsed.kind === 'event' ? parsed.event : undefined;
}
