// The overlay relay (docs/relay.md): the daemon publishes each public overlay once to the Gatekeeper,
// whose Durable Objects fan it out to viewers. One schema per frame, shared by the Worker, the daemon
// and the viewer page.
import * as v from 'valibot';
import { OverlayCommand, OverlayUpdate, Seq, ServerInit, StreamEventMessage } from './messages.js';
import { Uuid } from './primitives.js';

/** The limits of §9, in one place for the hub, the shards, the daemon and the tests. */
export const RELAY_LIMITS = {
  /** A publisher frame (snapshot or message), in bytes of its text. */
  publisherFrameBytes: 256 * 1024,
  /** Publisher frames per second, sustained (a token bucket of this rate and this capacity). */
  publisherFramesPerSecond: 200,
  /** A viewer frame (`init` or `ping`), in bytes. */
  viewerFrameBytes: 1024,
  /** Viewer sockets per client address (`CF-Connecting-IP`) per overlay. */
  viewersPerIp: 5,
  /** The hub keeps the last this many messages, or the last `bufferMs`, whichever holds more. */
  bufferMessages: 500,
  bufferMs: 5 * 60_000,
  /** The hub sends its shards at most one batch per this many ms. */
  batchMs: 50,
  /** `viewers` reaches the publisher at most this often. */
  viewerCountMs: 5000,
  /** Media of public overlays in R2: per file, and per member. */
  mediaFileBytes: 20 * 1024 * 1024,
  mediaMemberBytes: 500 * 1024 * 1024,
  /** Defaults of the RELAY_SHARDS and RELAY_SHARD_SIZE variables. */
  shards: 20,
  shardSize: 5000,
  /** Member state (lapse, logout, revocation) reaches open relays within this long. */
  lapseCheckMs: 60_000,
} as const;

/** Close codes of the relay's sockets. */
export const RELAY_CLOSE = {
  /** A frame the protocol does not allow, too big or too many. */
  policy: 1008,
  /** The publisher's licence expired (its `exp` passed): it reconnects with a refreshed one. */
  licenceExpired: 4401,
  /** The member is no longer Premium, or the overlay was unpublished: viewers stop. */
  notPublished: 4403,
  /** Another daemon published the same overlay: the replaced one does not reconnect by itself. */
  replaced: 4409,
} as const;

/**
 * The reason a replaced publisher is closed with (4409): the words, and the address the Gatekeeper saw the
 * new publisher at, so the streamer learns where the other copy of the licence runs. A close reason holds
 * 123 bytes; an address fits.
 */
export const REPLACED_REASON = 'another daemon publishes this overlay';
export const replacedReason = (ip: string): string => `${REPLACED_REASON} (from ${ip})`.slice(0, 123);
/** The address in a 4409's reason, if it names one. */
export function replacedFrom(reason: string | undefined): string | undefined {
  return /\(from ([0-9A-Fa-f.:]{2,45})\)$/.exec(reason ?? '')?.[1];
}

/** What a page of the overlay gets, and what the publisher forwards verbatim. */
export const RelayedMessage = v.variant('type', [OverlayUpdate, StreamEventMessage, OverlayCommand]);
export type RelayedMessage = v.InferOutput<typeof RelayedMessage>;

/** Hub → daemon, first: what the hub already has (null on a first publish) and where viewers look. */
export const RelayHello = v.object({
  type: v.literal('hello'),
  lastSeq: v.nullable(Seq),
  viewerUrl: v.string(),
});
/** Hub → daemon, right after `hello` and whenever the count changed (at most every 5 s). */
export const RelayViewers = v.object({
  type: v.literal('viewers'),
  count: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
});
export const HubToPublisher = v.variant('type', [RelayHello, RelayViewers]);
export type HubToPublisher = v.InferOutput<typeof HubToPublisher>;

/** Daemon → hub: the `init` a page of the overlay would get now (after each connect, and when it likes). */
export const RelaySnapshot = v.object({ type: v.literal('snapshot'), init: ServerInit });
/** Daemon → hub: one page message, verbatim, with its `seq`. */
export const RelayMessageFrame = v.object({ type: v.literal('message'), msg: RelayedMessage });
/** Daemon → hub: the overlay stopped being public (or the streamer logged out). */
export const RelayUnpublish = v.object({ type: v.literal('unpublish') });
export const PublisherToHub = v.variant('type', [RelaySnapshot, RelayMessageFrame, RelayUnpublish]);
export type PublisherToHub = v.InferOutput<typeof PublisherToHub>;

/** Viewer → relay: `init` first, then nothing but `ping`. No token: the relay is public and receive-only. */
export const ViewerInit = v.object({
  action: v.literal('init'),
  overlayId: Uuid,
  resumeFrom: v.optional(Seq),
});
export const ViewerPing = v.object({ action: v.literal('ping') });
export const ViewerMessage = v.variant('action', [ViewerInit, ViewerPing]);
export type ViewerMessage = v.InferOutput<typeof ViewerMessage>;

/** The ping a viewer sends and the pong the relay answers without waking (exact bytes: auto-response). */
export const VIEWER_PING = '{"action":"ping"}';
export const VIEWER_PONG = '{"type":"pong"}';

/** `relay` entries of the daemon's local `/status`: one per public overlay. */
export const RELAY_STATES = ['connecting', 'connected', 'backoff', 'error', 'off'] as const;
export const RelayStatus = v.object({
  overlayId: Uuid,
  state: v.picklist(RELAY_STATES),
  viewers: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  viewerUrl: v.optional(v.string()),
  detail: v.optional(v.string()),
  /** Taken over by another daemon (4409): when (ISO), and from which address, when the relay said. */
  takenOverAt: v.optional(v.string()),
  takenOverFrom: v.optional(v.string()),
});
export type RelayStatus = v.InferOutput<typeof RelayStatus>;

/** Media of a public overlay in R2: `<sha256 hex>.<ext>`, the name it is uploaded and served under. */
export const RELAY_MEDIA_NAME = /^[0-9a-f]{64}\.[a-z0-9]{1,8}$/;
