// The one line a person reads for a stream event: the overlay's alert and event list, the CLI's receipt, the dashboard's log.
import type { StreamEvent } from './protocol/index.js';

export function describeEvent(event: StreamEvent): string {
  const who = event.user.nickname || event.user.uniqueId;
  switch (event.type) {
    case 'gift':
      return `${who} sent ${event.data.repeatCount} × ${event.data.giftName}`;
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
