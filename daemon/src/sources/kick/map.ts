// Kick's chat socket events → stream events. A chat message is `chat` (Kick's message id kept as
// `data.messageId`, by which it is delivered once whichever way it came); a host or raid is
// `share {viewers}`; a subscription is `subscribe {subMonth}`, gifted ones `subscribe {giftCount}` from the
// gifter. Each payload is read through one schema; one that does not fit is dropped with its reason.
import * as v from 'valibot';
import { parseWith, StreamEvent, type StreamUser } from '../../../../shared/protocol/index.js';
import { kickSlugOf } from '../../../../shared/protocol/kick.js';
import { cutText } from '../../../../shared/text.js';

/** The events of the chatroom channel (`chatrooms.<id>.v2`) and the channel's own (`channel.<id>`). */
export const KICK_EVENTS = {
  chat: 'App\\Events\\ChatMessageEvent',
  host: 'App\\Events\\StreamHostEvent',
  chatroomHost: 'App\\Events\\ChatroomHostEvent',
  subscription: 'App\\Events\\SubscriptionEvent',
  giftedSubscriptions: 'App\\Events\\GiftedSubscriptionsEvent',
  streamEnded: 'App\\Events\\StopStreamBroadcast',
} as const;

/**
 * Events Kick sends that are not stream events (moderation, pins, polls, chat settings, counts), or that
 * repeat one mapped above on the channel's own channel (its subscription and gift notices): ignored
 * without a line.
 */
const NOT_EVENTS = new Set(
  [
    'ChatroomUpdatedEvent',
    'ChatroomClearEvent',
    'MessageDeletedEvent',
    'UserBannedEvent',
    'UserUnbannedEvent',
    'PinnedMessageCreatedEvent',
    'PinnedMessageDeletedEvent',
    'PollUpdateEvent',
    'PollDeleteEvent',
    'FollowersUpdated',
    'ChannelSubscriptionEvent',
    'LuckyUsersWhoGotGiftSubscriptionsEvent',
    'GiftsLeaderboardUpdated',
    'StreamerIsLive',
    'LivestreamUpdated',
    'LiveStreamUpdated',
    'ChatMoveToSupportedChannelEvent',
    'KicksGifted',
    'RewardRedeemedEvent',
  ].map((name) => `App\\Events\\${name}`),
);

const name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100));
const count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

const ChatMessage = v.looseObject({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  content: v.string(),
  sender: v.looseObject({
    username: name,
    slug: v.optional(v.string()),
    id: v.optional(v.number()),
  }),
});

const Host = v.looseObject({
  host_username: name,
  number_viewers: v.optional(count),
});

const Subscription = v.looseObject({
  username: name,
  months: v.optional(count),
});

const GiftedSubscriptions = v.looseObject({
  gifter_username: v.optional(v.nullable(v.string())),
  gifted_usernames: v.array(v.string()),
});

export type KickMapResult =
  /** `subscription`: a subscription notice, which Kick's webhooks (the Gatekeeper's feed) also bring. */
  | { event: StreamEvent; messageId?: string; subscription?: true }
  | { streamEnded: true }
  | { ignored: true }
  | { unknown: string }
  | { drop: string };

/** Never splits a character (one cutter for every platform's text). */
const cut = cutText;

/**
 * A viewer as the socket names them: `uniqueId` their slug (the chat message's `sender.slug`, else made from
 * the name as Kick makes it), as the webhooks give it, so one viewer's points and boards do not split in
 * two; `nickname` the name as shown.
 */
function user(username: string, slug?: string): StreamUser {
  const uniqueId = slug?.trim() || kickSlugOf(username);
  return { uniqueId: cut(uniqueId, 100), nickname: cut(username, 100) };
}

function read<S extends v.GenericSchema>(schema: S, data: unknown, what: string): v.InferOutput<S> | string {
  const parsed = v.safeParse(schema, data);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  return `${what} did not match: ${v.getDotPath(issue) ?? '(the payload)'}: ${issue.message}`;
}

function finish(candidate: unknown, messageId?: string): KickMapResult {
  const parsed = parseWith(StreamEvent, candidate);
  if (!parsed.ok) return { drop: `not a valid event: ${parsed.error}` };
  return messageId ? { event: parsed.value, messageId } : { event: parsed.value };
}

function subscription(result: KickMapResult): KickMapResult {
  return 'event' in result ? { ...result, subscription: true } : result;
}

/** One event of Kick's chat socket, its `data` already parsed from JSON. */
export function mapKickEvent(event: string, data: unknown): KickMapResult {
  switch (event) {
    case KICK_EVENTS.chat: {
      const message = read(ChatMessage, data, 'a chat message');
      if (typeof message === 'string') return { drop: message };
      return finish(
        {
          type: 'chat',
          platform: 'kick',
          user: user(message.sender.username, message.sender.slug),
          data: { comment: cut(message.content, 500), messageId: message.id },
        },
        message.id,
      );
    }
    case KICK_EVENTS.host:
    case KICK_EVENTS.chatroomHost: {
      const host = read(Host, data, 'a host');
      if (typeof host === 'string') return { drop: host };
      return finish({
        type: 'share',
        platform: 'kick',
        user: user(host.host_username),
        data: { viewers: host.number_viewers ?? 0 },
      });
    }
    case KICK_EVENTS.subscription: {
      const sub = read(Subscription, data, 'a subscription');
      if (typeof sub === 'string') return { drop: sub };
      return subscription(
        finish({
          type: 'subscribe',
          platform: 'kick',
          user: user(sub.username),
          data: sub.months ? { subMonth: sub.months } : {},
        }),
      );
    }
    case KICK_EVENTS.giftedSubscriptions: {
      const gift = read(GiftedSubscriptions, data, 'gifted subscriptions');
      if (typeof gift === 'string') return { drop: gift };
      const gifter = gift.gifter_username?.trim();
      return subscription(
        finish({
          type: 'subscribe',
          platform: 'kick',
          user: gifter ? user(gifter) : { uniqueId: 'anonymous', nickname: 'Anonymous' },
          data: { gifted: true, giftCount: Math.max(1, gift.gifted_usernames.length) },
        }),
      );
    }
    case KICK_EVENTS.streamEnded:
      return { streamEnded: true };
    default:
      return NOT_EVENTS.has(event) ? { ignored: true } : { unknown: event };
  }
}
