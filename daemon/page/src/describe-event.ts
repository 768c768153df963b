// The words the overlay shows for a stream event (alert text, event-list line).
import type { StreamEvent } from '../../../shared/protocol.js';

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

/** Appends to a bounded feed, newest last; returns the trimmed list. */
export function pushBounded<T>(list: T[], item: T, max: number): T[] {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
  return list;
}
