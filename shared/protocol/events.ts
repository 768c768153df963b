// Stream events (interface §2.8): one schema per event type.
import * as v from 'valibot';
import { SOURCE_PLATFORMS } from '../platforms.js';
import { nonNegativeInt, positiveInt } from './primitives.js';

export const STREAM_EVENT_TYPES = ['gift', 'follow', 'like', 'chat', 'share', 'subscribe', 'viewer'] as const;
export type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

export const StreamUser = v.object({
  uniqueId: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  nickname: v.pipe(v.string(), v.maxLength(100)),
  profilePictureUrl: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});
export type StreamUser = v.InferOutput<typeof StreamUser>;

/** Where an event came from; `api` for events posted to /api/events without one. */
export const PLATFORMS = [...SOURCE_PLATFORMS, 'api'] as const;
export type Platform = (typeof PLATFORMS)[number];
export const PlatformSchema = v.picklist(PLATFORMS, `must be one of ${PLATFORMS.join(', ')}`);

// `data` keeps fields it does not know (decisions §3: forwarded as given); known ones are checked.
const streamEvent = <T extends StreamEventType, D extends v.ObjectEntries>(type: T, data: D) =>
  v.object({
    type: v.literal(type),
    platform: v.optional(PlatformSchema, 'api'),
    user: StreamUser,
    data: v.looseObject(data),
  });

export const GiftEvent = streamEvent('gift', {
  giftName: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  repeatCount: positiveInt,
  diamondCount: v.optional(nonNegativeInt),
  giftId: v.optional(nonNegativeInt),
});
export const FollowEvent = streamEvent('follow', {});
export const LikeEvent = streamEvent('like', {
  likeCount: positiveInt,
  totalLikeCount: v.optional(nonNegativeInt),
});
export const ChatEvent = streamEvent('chat', {
  comment: v.pipe(v.string(), v.maxLength(500)),
});
export const ShareEvent = streamEvent('share', {});
export const SubscribeEvent = streamEvent('subscribe', {});
export const ViewerEvent = streamEvent('viewer', { viewerCount: nonNegativeInt });

export const StreamEvent = v.variant('type', [
  GiftEvent,
  FollowEvent,
  LikeEvent,
  ChatEvent,
  ShareEvent,
  SubscribeEvent,
  ViewerEvent,
]);
export type StreamEvent = v.InferOutput<typeof StreamEvent>;
export type StreamEventOf<T extends StreamEventType> = Extract<StreamEvent, { type: T }>;
