// WebSocket messages (interface §6): the init handshake and every server message.
import * as v from 'valibot';
import { OverlayCommandInput } from './commands.js';
import { StreamEvent } from './events.js';
import { parseJsonWith } from './parse.js';
import { Uuid } from './primitives.js';
import { OverlayMeta, Widget } from './widgets.js';

/** A message number: increasing per daemon, across events and commands. */
export const Seq = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

export const ClientInit = v.object({
  action: v.literal('init'),
  overlayId: Uuid,
  token: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  /** The last `seq` the page saw: what came after it is sent again, marked `replayed`. */
  resumeFrom: v.optional(Seq),
});
export type ClientInit = v.InferOutput<typeof ClientInit>;
/** Every message a client may send; `init` is the only one. */
const ClientMessage = v.variant('action', [ClientInit]);
type ClientMessage = v.InferOutput<typeof ClientMessage>;

export const ServerInit = v.object({
  type: v.literal('init'),
  overlay: OverlayMeta,
  widgets: v.array(Widget),
});
export const OverlayUpdate = v.object({
  type: v.literal('overlay-update'),
  overlayId: Uuid,
  overlay: OverlayMeta,
  widgets: v.array(Widget),
});
/** What every journaled message carries: its number, when it happened, and whether it is sent again. */
const numbered = {
  seq: v.optional(Seq),
  /** Milliseconds since the epoch when it happened (a replayed alert too old is not shown). */
  at: v.optional(v.number()),
  replayed: v.optional(v.literal(true)),
};
export const StreamEventMessage = v.object({
  type: v.literal('stream-event'),
  event: StreamEvent,
  ...numbered,
});
export const OverlayCommand = v.object({
  type: v.literal('overlay-command'),
  ...OverlayCommandInput.entries,
  payload: v.record(v.string(), v.unknown()),
  ...numbered,
});
/** After a resume's replayed messages: which `seq`s were covered, how many, and whether some were lost. */
export const Resumed = v.object({
  type: v.literal('resumed'),
  from: Seq,
  to: Seq,
  replayed: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  gap: v.boolean(),
});
export const ServerMessage = v.variant('type', [
  ServerInit,
  OverlayUpdate,
  StreamEventMessage,
  OverlayCommand,
  Resumed,
]);
export type OverlayCommand = v.InferOutput<typeof OverlayCommand>;
export type ServerMessage = v.InferOutput<typeof ServerMessage>;

export const parseClientMessage = (text: string) => parseJsonWith(ClientMessage, text);
export const parseServerMessage = (text: string) => parseJsonWith(ServerMessage, text);

/** Typed encoding: only a well-formed message compiles. */
export const encodeServerMessage = (message: ServerMessage): string => JSON.stringify(message);
export const encodeClientMessage = (message: ClientMessage): string => JSON.stringify(message);
