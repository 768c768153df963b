// Overlay commands (interface §6.2): what rules and the control API send to widgets.
import * as v from 'valibot';
import { finite, MediaPath, VideoPath } from './primitives.js';
import { WidgetId } from './widgets.js';

export const ShowAlertPayload = v.object({
  text: v.pipe(v.string(), v.maxLength(500)),
  /** Milliseconds on screen. */
  duration: v.pipe(finite, v.minValue(100), v.maxValue(60_000)),
  image: v.optional(MediaPath),
  sound: v.optional(MediaPath),
  video: v.optional(VideoPath),
});
export type ShowAlertPayload = v.InferOutput<typeof ShowAlertPayload>;

/** Speech the daemon rendered, at `/tts/<sha256>.wav`. */
export const TtsSound = v.pipe(
  v.string(),
  v.regex(/^\/tts\/[0-9a-f]{64}\.wav$/, 'must be /tts/<64 hex>.wav'),
);

/** A media file name, or speech the daemon rendered. */
export const PlaySoundPayload = v.object({
  sound: v.union([MediaPath, TtsSound], 'must be a media file name or /tts/<64 hex>.wav'),
  volume: v.optional(v.pipe(finite, v.minValue(0), v.maxValue(1)), 1),
});
export const SetTextPayload = v.object({ text: v.pipe(v.string(), v.maxLength(2000)) });

/** Commands widgets understand; any other name is delivered and ignored by the page. */
export const KNOWN_COMMANDS = ['show-alert', 'play-sound', 'set-text', 'reset'] as const;

export const OverlayCommandInput = v.object({
  command: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  widgetId: WidgetId,
  payload: v.optional(v.record(v.string(), v.unknown()), {}),
});
export type OverlayCommandInput = v.InferOutput<typeof OverlayCommandInput>;
