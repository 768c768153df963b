// One stream event as a frame of the TikFinity event feed: `{"event", "data"}` with TikTok-Live-Connector's
// event names and field names, plus `platform` (docs/widgets.md "TikFinity event feed").
//
// Every platform's event is already one of the daemon's seven kinds (the sources map a Twitch cheer to a
// `gift` of Bits, a Super Chat to a `gift` worth its cents, a raid or a Kick host to a `share`, gifted
// subs to a `subscribe` with `giftCount`), so the feed only renames: `viewer` is `roomUser`, and the
// sender's fields sit at the top of `data` as TikTok-Live-Connector puts them.
import type { StreamEvent } from '../../../shared/protocol/index.js';

/** TikTok-Live-Connector's name of each kind of event. */
export const TIKFINITY_EVENT_NAMES = {
  chat: 'chat',
  gift: 'gift',
  like: 'like',
  follow: 'follow',
  share: 'share',
  subscribe: 'subscribe',
  viewer: 'roomUser',
} as const satisfies Record<StreamEvent['type'], string>;

export interface TikfinityFrame {
  event: (typeof TIKFINITY_EVENT_NAMES)[StreamEvent['type']];
  data: Record<string, unknown>;
}

const count = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : fallback;

/**
 * The frame for `event`; `msgId` names it (TikTok-Live-Connector's games drop a repeated one). Fields of
 * the event beyond the known ones (a sub's `subMonth`, a Super Chat's `currency`) go along as they are.
 */
export function tikfinityFrame(event: StreamEvent, msgId: string): TikfinityFrame {
  const { user, platform } = event;
  const sender = {
    // TikTok's numeric user id is not kept; the handle stands in, so games keying on it still tell viewers apart.
    userId: user.uniqueId,
    uniqueId: user.uniqueId,
    nickname: user.nickname,
    profilePictureUrl: user.profilePictureUrl ?? '',
  };
  const common = { ...event.data, ...sender, msgId, platform };
  switch (event.type) {
    case 'gift':
      return {
        event: 'gift',
        data: {
          ...common,
          giftId: count(event.data.giftId, 0),
          giftName: event.data.giftName,
          repeatCount: event.data.repeatCount,
          diamondCount: count(event.data.diamondCount, 0),
          // The daemon hands on a streak once, when it ends, with its whole count: always the last message.
          repeatEnd: true,
          // 1 (a streakable gift) unless the source said otherwise: games count a gift when
          // `giftType !== 1 || repeatEnd`, so either way this one counts once.
          giftType: count(event.data.giftType, 1),
        },
      };
    case 'like':
      return {
        event: 'like',
        data: {
          ...common,
          likeCount: event.data.likeCount,
          totalLikeCount: count(event.data.totalLikeCount, event.data.likeCount),
        },
      };
    case 'chat':
      return { event: 'chat', data: { ...common, comment: event.data.comment } };
    case 'viewer':
      return { event: 'roomUser', data: { ...common, viewerCount: event.data.viewerCount } };
    default:
      return { event: TIKFINITY_EVENT_NAMES[event.type], data: common };
  }
}
