// The one line a person reads for a stream event: the overlay's alert and event list, the CLI's receipt, the dashboard's log.
import { currencyCode, giftValueText } from './money.js';
import type { StreamEvent, StreamEventOf } from './protocol/index.js';
import { diamondsOf } from './widget-reactions.js';

/**
 * A gift in the platform's words: a TikTok gift by name and count, a Twitch cheer in bits, a Super Chat or
 * Super Sticker with its amount in its currency (as YouTube displays it when it says so), a Kick gift by
 * name with its worth in Kicks.
 */
function describeGift(who: string, event: StreamEventOf<'gift'>): string {
  const { data } = event;
  if (event.platform === 'twitch' && data.giftName === 'Bits')
    return `${who} cheered ${giftValueText('twitch', diamondsOf(event))}`;
  if (event.platform === 'youtube') {
    const shown =
      typeof data.amountDisplayString === 'string' && data.amountDisplayString.length <= 40
        ? data.amountDisplayString
        : giftValueText('youtube', diamondsOf(event), currencyCode(data.currency));
    if (data.giftName === 'Super Chat') return `${who} sent a ${shown} Super Chat`;
    const sticker = data.giftName === 'Super Sticker' ? '' : ` (${data.giftName})`;
    return `${who} sent a ${shown} Super Sticker${sticker}`;
  }
  if (event.platform === 'kick')
    return `${who} sent ${data.giftName} (${giftValueText('kick', diamondsOf(event))})`;
  return `${who} sent ${data.repeatCount} × ${data.giftName}`;
}

export function describeEvent(event: StreamEvent): string {
  const who = event.user.nickname || event.user.uniqueId;
  switch (event.type) {
    case 'gift':
      return describeGift(who, event);
    case 'follow':
      return `${who} followed`;
    case 'subscribe':
      return `${who} subscribed`;
    case 'share':
      return `${who} shared the stream`;
    case 'like':
      return `${who} liked ×${event.data.likeCount}`;
    case 'chat':
      return `${who}: ${event.data.comment}`;
    case 'viewer':
      return `${event.data.viewerCount} watching`;
  }
}
