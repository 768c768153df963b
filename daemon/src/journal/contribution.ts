// What an event adds to its session's totals and its viewer's figures, and the points it earns.
import { giftCurrency } from '../../../shared/money.js';
import type { StreamEvent } from '../../../shared/protocol/index.js';

/** Points per action of a viewer (settings.json `points`). */
export interface PointRules {
  perDiamond: number;
  perLike: number;
  perChat: number;
  perFollow: number;
  perShare: number;
}

export const DEFAULT_POINTS: PointRules = {
  perDiamond: 1,
  perLike: 0,
  perChat: 0,
  perFollow: 0,
  perShare: 0,
};

/** What an event adds to its session and to its viewer. */
export function contribution(event: StreamEvent, points: PointRules) {
  let gifts = 0;
  let diamonds = 0;
  let likes = 0;
  let chats = 0;
  let follows = 0;
  let shares = 0;
  let subscribes = 0;
  let viewers = 0;
  /** The currency of a gift's value (its cents) where its platform counts in money, as the platform said it. */
  let currency: string | undefined;
  switch (event.type) {
    case 'gift':
      // A Twitch cheer is one gift whose value is its bits (`repeatCount`): six cheers of 100 bits are
      // six gifts, not 600.
      gifts = event.platform === 'twitch' && event.data.giftName === 'Bits' ? 1 : event.data.repeatCount;
      diamonds = (event.data.diamondCount ?? 0) * event.data.repeatCount;
      currency = giftCurrency(event.platform, event.data.currency);
      break;
    case 'like':
      likes = event.data.likeCount;
      break;
    case 'chat':
      chats = 1;
      break;
    case 'follow':
      follows = 1;
      break;
    case 'share':
      shares = 1;
      break;
    case 'subscribe':
      subscribes = 1;
      break;
    case 'viewer':
      viewers = event.data.viewerCount;
      break;
  }
  const earned = Math.round(
    diamonds * points.perDiamond +
      likes * points.perLike +
      chats * points.perChat +
      follows * points.perFollow +
      shares * points.perShare,
  );
  return { gifts, diamonds, likes, chats, follows, shares, subscribes, viewers, points: earned, currency };
}
