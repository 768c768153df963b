// Turns tiktok-live-connector payloads into the daemon's StreamEvent (interface §2.8; README "Stream-event data").
//
// tiktok-live-connector 2.x decodes TikTok's protobuf messages. Its README documents one shape
// (`user.uniqueId`, `giftDetails.giftName`, `likeCount`/`totalLikeCount`, `viewerCount`) while the
// 2.5 runtime hands over the v3 proto shape (`user.displayId`, `gift.name`, `count`/`total`,
// `total`); both are read here, field by field, and every result is validated before it leaves.
import {
  ChatEvent,
  FollowEvent,
  GiftEvent,
  LikeEvent,
  parseWith,
  ShareEvent,
  type StreamEventOf,
  type StreamUser,
  SubscribeEvent,
  ViewerEvent,
} from '../../../../shared/protocol/index.js';
import { at, firstCount, firstOf, firstString, isRecord, own, truncate } from './fields.js';

/** The message id TikTok stamps on every push message, used to drop duplicates. */
export function messageId(payload: unknown): string | undefined {
  return firstString(at(payload, 'common', 'msgId'), own(payload, 'msgId'));
}

/** The sender of a message, or undefined when it carries no usable identity. */
function readUser(payload: unknown): StreamUser | undefined {
  const user = own(payload, 'user');
  if (!isRecord(user)) return undefined;
  const uniqueId = firstString(
    own(user, 'uniqueId'),
    own(user, 'displayId'),
    own(user, 'userId'),
    own(user, 'id'),
  );
  if (uniqueId === undefined) return undefined;
  const nickname = firstString(own(user, 'nickname')) ?? uniqueId;
  const picture = firstString(
    own(user, 'profilePictureUrl'),
    firstOf(at(user, 'avatarThumb', 'urlList')),
    firstOf(at(user, 'profilePicture', 'url')),
    firstOf(at(user, 'profilePicture', 'urls')),
  );
  return {
    uniqueId: truncate(uniqueId, 100),
    nickname: truncate(nickname, 100),
    ...(picture && picture.length <= 2048 && /^https?:\/\//.test(picture)
      ? { profilePictureUrl: picture }
      : {}),
  };
}

export interface NormalisedGift {
  event: StreamEventOf<'gift'>;
  /** `giftType` 1: TikTok repeats the message while the sender keeps tapping (a streak). */
  streakable: boolean;
  /** The message that closes a streak (`repeatEnd`). */
  streakEnded: boolean;
  /** One streak per sender and gift. */
  streakKey: string;
}

export function normaliseGift(payload: unknown): NormalisedGift | undefined {
  const user = readUser(payload);
  if (!user) return undefined;
  const details = own(payload, 'giftDetails') ?? own(payload, 'gift');
  const giftId = firstCount(own(payload, 'giftId'), own(details, 'id'));
  const giftName =
    firstString(
      own(details, 'giftName'),
      own(details, 'name'),
      at(payload, 'extendedGiftInfo', 'name'),
      own(payload, 'giftName'),
    ) ?? (giftId === undefined ? 'Gift' : `Gift ${giftId}`);
  const diamondCount = firstCount(
    own(details, 'diamondCount'),
    at(payload, 'extendedGiftInfo', 'diamond_count'),
    at(payload, 'extendedGiftInfo', 'diamondCount'),
    own(payload, 'diamondCount'),
  );
  const giftType = firstCount(own(details, 'giftType'), own(details, 'type'), own(payload, 'giftType'));
  // The gift's picture, as the documented and the v3 shapes carry it; https only (overlays show it).
  const picture = firstString(
    own(payload, 'giftPictureUrl'),
    at(details, 'giftImage', 'giftPictureUrl'),
    firstOf(at(details, 'image', 'url')),
    firstOf(at(details, 'image', 'urlList')),
  );
  const repeatEnd = own(payload, 'repeatEnd');
  const parsed = parseWith(GiftEvent, {
    type: 'gift',
    platform: 'tiktok',
    user,
    data: {
      giftName: truncate(giftName, 100),
      repeatCount: Math.max(1, firstCount(own(payload, 'repeatCount')) ?? 1),
      ...(diamondCount === undefined ? {} : { diamondCount }),
      ...(giftId === undefined ? {} : { giftId }),
      ...(picture?.startsWith('https://') && picture.length <= 2048 ? { giftPictureUrl: picture } : {}),
    },
  });
  if (!parsed.ok) return undefined;
  return {
    event: parsed.value,
    streakable: giftType === 1,
    streakEnded: repeatEnd === true || repeatEnd === 1,
    streakKey: `${user.uniqueId}\u0000${giftId ?? giftName}`,
  };
}

export function normaliseChat(payload: unknown): StreamEventOf<'chat'> | undefined {
  const user = readUser(payload);
  const comment = firstString(own(payload, 'comment'), own(payload, 'content'));
  if (!user || comment === undefined) return undefined;
  const parsed = parseWith(ChatEvent, {
    type: 'chat',
    platform: 'tiktok',
    user,
    data: { comment: truncate(comment, 500) },
  });
  return parsed.ok ? parsed.value : undefined;
}

export function normaliseFollow(payload: unknown): StreamEventOf<'follow'> | undefined {
  const user = readUser(payload);
  const parsed = user && parseWith(FollowEvent, { type: 'follow', platform: 'tiktok', user, data: {} });
  return parsed?.ok ? parsed.value : undefined;
}

export function normaliseShare(payload: unknown): StreamEventOf<'share'> | undefined {
  const user = readUser(payload);
  const parsed = user && parseWith(ShareEvent, { type: 'share', platform: 'tiktok', user, data: {} });
  return parsed?.ok ? parsed.value : undefined;
}

/** `subNotify`: a viewer subscribed; `subMonth` is forwarded when TikTok sends it. */
export function normaliseSubscribe(payload: unknown): StreamEventOf<'subscribe'> | undefined {
  const user = readUser(payload);
  if (!user) return undefined;
  const subMonth = firstCount(own(payload, 'subMonth'));
  const parsed = parseWith(SubscribeEvent, {
    type: 'subscribe',
    platform: 'tiktok',
    user,
    data: subMonth ? { subMonth } : {},
  });
  return parsed.ok ? parsed.value : undefined;
}

/** `roomUser`: the room's viewer count. It has no sender, so the event names the streamer. */
export function normaliseViewer(payload: unknown, host: StreamUser): StreamEventOf<'viewer'> | undefined {
  const viewerCount = firstCount(own(payload, 'viewerCount'), own(payload, 'total'));
  if (viewerCount === undefined) return undefined;
  const parsed = parseWith(ViewerEvent, {
    type: 'viewer',
    platform: 'tiktok',
    user: host,
    data: { viewerCount },
  });
  return parsed.ok ? parsed.value : undefined;
}

/**
 * Like events carry the room's running total. TikTok does not send every like message on busy
 * streams, so the delta of totals counts what the skipped messages held; the message's own
 * count is the fallback when there is no earlier total (first like of a session, or no totals).
 */
export class LikeCounter {
  private lastTotal: number | undefined;

  /** Forget the total: a new connection may be a new live whose total starts again. */
  reset(): void {
    this.lastTotal = undefined;
  }

  next(payload: unknown): StreamEventOf<'like'> | undefined {
    const user = readUser(payload);
    if (!user) return undefined;
    const count = firstCount(own(payload, 'likeCount'), own(payload, 'count'));
    const total = firstCount(own(payload, 'totalLikeCount'), own(payload, 'total'));
    const delta = total !== undefined && this.lastTotal !== undefined ? total - this.lastTotal : (count ?? 0);
    if (total !== undefined) this.lastTotal = Math.max(this.lastTotal ?? 0, total);
    // A total that went down (messages out of order) adds nothing: never a negative like count.
    if (delta <= 0) return undefined;
    const parsed = parseWith(LikeEvent, {
      type: 'like',
      platform: 'tiktok',
      user,
      data: { likeCount: delta, ...(total === undefined ? {} : { totalLikeCount: total }) },
    });
    return parsed.ok ? parsed.value : undefined;
  }
}
