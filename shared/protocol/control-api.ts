// The control API's answers (decisions §3, decisions-2 §5): the daemon produces exactly these shapes and
// the dashboard parses them, so neither guesses at the other's.
import * as v from 'valibot';
import { MediaPath } from './primitives.js';

/** `POST /api/events` → 202: the rules the event fired, in rule order. */
export const EventReceipt = v.object({
  accepted: v.literal(true),
  firedRules: v.array(v.string()),
});
export type EventReceipt = v.InferOutput<typeof EventReceipt>;

/** `POST /api/overlays/:id/commands` → 202: how many open pages got it. */
export const CommandReceipt = v.object({ delivered: v.pipe(v.number(), v.safeInteger(), v.minValue(0)) });
export type CommandReceipt = v.InferOutput<typeof CommandReceipt>;

/** One file of `GET /api/media`. */
export const MediaEntry = v.object({
  name: MediaPath,
  size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  type: v.string(),
  /** ISO 8601 time of the last change. */
  modified: v.string(),
});
export type MediaEntry = v.InferOutput<typeof MediaEntry>;
export const MediaList = v.array(MediaEntry);

/** `PUT /api/media/<name>` → 200/201. */
export const MediaSaved = v.object({
  name: MediaPath,
  size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  type: v.string(),
});
export type MediaSaved = v.InferOutput<typeof MediaSaved>;

/** `GET /api/clients`: subscribed connections per overlay id, for every overlay. */
export const ClientCounts = v.object({
  clients: v.record(v.string(), v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
});
export type ClientCounts = v.InferOutput<typeof ClientCounts>;
