// YouTube live chat messages → stream events: a text message is `chat`; a Super Chat or a
// Super Sticker is `gift {giftName, repeatCount: 1, diamondCount: <amount in cents>}` with its currency
// and display amount; a new member, a membership milestone or gifted memberships are `subscribe`. Each
// message is read through one schema; one that does not fit is dropped with its reason.
import * as v from 'valibot';
import { parseWith, StreamEvent } from '../../../../shared/protocol/index.js';
import { cutText } from '../../../../shared/text.js';

const Amount = {
  amountMicros: v.union([v.string(), v.number()]),
  currency: v.optional(v.string()),
  amountDisplayString: v.optional(v.string()),
  tier: v.optional(v.number()),
};

/** The liveChatMessage resource, the parts this mapping reads. */
const LiveChatMessage = v.looseObject({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  snippet: v.looseObject({
    type: v.string(),
    publishedAt: v.optional(v.string()),
    displayMessage: v.optional(v.string()),
    textMessageDetails: v.optional(v.looseObject({ messageText: v.optional(v.string()) })),
    superChatDetails: v.optional(v.looseObject({ ...Amount, userComment: v.optional(v.string()) })),
    superStickerDetails: v.optional(
      v.looseObject({
        ...Amount,
        superStickerMetadata: v.optional(v.looseObject({ altText: v.optional(v.string()) })),
      }),
    ),
    newSponsorDetails: v.optional(
      v.looseObject({ memberLevelName: v.optional(v.string()), isUpgrade: v.optional(v.boolean()) }),
    ),
    memberMilestoneChatDetails: v.optional(
      v.looseObject({
        memberLevelName: v.optional(v.string()),
        memberMonth: v.optional(v.number()),
        userComment: v.optional(v.string()),
      }),
    ),
    membershipGiftingDetails: v.optional(
      v.looseObject({
        giftMembershipsCount: v.optional(v.number()),
        giftMembershipsLevelName: v.optional(v.string()),
      }),
    ),
  }),
  authorDetails: v.looseObject({
    channelId: v.pipe(v.string(), v.minLength(1)),
    displayName: v.optional(v.string()),
    profileImageUrl: v.optional(v.string()),
  }),
});

export type MapResult =
  | { event: StreamEvent; id: string; publishedAt: string | undefined }
  | { drop: string; id?: string };

/** Micros → cents, e.g. 5,000,000 micros ($5.00) → 500. */
function cents(micros: string | number): number | undefined {
  const n = Number(micros);
  return Number.isFinite(n) && n >= 0 ? Math.round(n / 10_000) : undefined;
}

export function mapLiveChatMessage(resource: unknown): MapResult {
  const parsed = v.safeParse(LiveChatMessage, resource);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const id =
      typeof (resource as { id?: unknown })?.id === 'string' ? (resource as { id: string }).id : undefined;
    return { drop: `${v.getDotPath(issue) ?? 'message'}: ${issue.message}`, ...(id ? { id } : {}) };
  }
  const { id, snippet, authorDetails } = parsed.output;
  const user = {
    uniqueId: cutText(authorDetails.channelId, 100),
    nickname: cutText(authorDetails.displayName?.trim() || authorDetails.channelId, 100),
    ...(authorDetails.profileImageUrl
      ? { profilePictureUrl: cutText(authorDetails.profileImageUrl, 2048) }
      : {}),
  };
  let candidate: unknown;
  switch (snippet.type) {
    case 'textMessageEvent': {
      const text = snippet.textMessageDetails?.messageText ?? snippet.displayMessage ?? '';
      candidate = { type: 'chat', platform: 'youtube', user, data: { comment: cutText(text, 500) } };
      break;
    }
    case 'superChatEvent':
    case 'superStickerEvent': {
      const details =
        snippet.type === 'superChatEvent' ? snippet.superChatDetails : snippet.superStickerDetails;
      if (!details) return { drop: `${snippet.type} without its details`, id };
      const amount = cents(details.amountMicros);
      if (amount === undefined) return { drop: `${snippet.type} with an amount that is not a number`, id };
      const sticker = snippet.superStickerDetails?.superStickerMetadata?.altText;
      const comment = snippet.superChatDetails?.userComment;
      candidate = {
        type: 'gift',
        platform: 'youtube',
        user,
        data: {
          giftName:
            snippet.type === 'superChatEvent'
              ? 'Super Chat'
              : cutText(sticker?.trim() || 'Super Sticker', 100),
          repeatCount: 1,
          diamondCount: amount,
          ...(details.currency ? { currency: details.currency } : {}),
          ...(details.amountDisplayString ? { amountDisplayString: details.amountDisplayString } : {}),
          ...(comment ? { comment: cutText(comment, 500) } : {}),
        },
      };
      break;
    }
    case 'newSponsorEvent': {
      const level = snippet.newSponsorDetails?.memberLevelName;
      candidate = {
        type: 'subscribe',
        platform: 'youtube',
        user,
        data: level ? { tier: cutText(level, 100) } : {},
      };
      break;
    }
    case 'memberMilestoneChatEvent': {
      const details = snippet.memberMilestoneChatDetails;
      candidate = {
        type: 'subscribe',
        platform: 'youtube',
        user,
        data: {
          ...(details?.memberMonth ? { subMonth: details.memberMonth } : {}),
          ...(details?.memberLevelName ? { tier: cutText(details.memberLevelName, 100) } : {}),
          ...(details?.userComment ? { comment: cutText(details.userComment, 500) } : {}),
        },
      };
      break;
    }
    case 'membershipGiftingEvent': {
      // The gifter, with how many memberships: like a gift of Twitch subs (its user is the gifter).
      const details = snippet.membershipGiftingDetails;
      candidate = {
        type: 'subscribe',
        platform: 'youtube',
        user,
        data: {
          gifted: true,
          ...(details?.giftMembershipsCount ? { giftCount: details.giftMembershipsCount } : {}),
          ...(details?.giftMembershipsLevelName
            ? { tier: cutText(details.giftMembershipsLevelName, 100) }
            : {}),
        },
      };
      break;
    }
    default:
      return { drop: `${snippet.type} is not an event`, id };
  }
  const event = parseWith(StreamEvent, candidate);
  return event.ok
    ? { event: event.value, id, publishedAt: snippet.publishedAt }
    : { drop: `not a valid event: ${event.error}`, id };
}
