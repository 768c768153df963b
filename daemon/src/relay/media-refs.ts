// The media files a page message of a public overlay refers to (widget images, sounds, videos, and those of
// alert and sound commands), and the same message with each one renamed to what the relay serves.
import type { Widget } from '../../../shared/protocol/index.js';
import type { PageInit } from '../ws/hub.js';

/** Speech the daemon rendered: not relayed (it stays on the streamer's computer). */
const TTS = /^\/tts\//;

/** Message fields that name media, per widget kind and per command. */
const WIDGET_MEDIA: Partial<Record<Widget['type'], readonly string[]>> = {
  image: ['src'],
  alert: ['image', 'sound', 'video'],
};
const COMMAND_MEDIA: Record<string, readonly string[]> = {
  'show-alert': ['image', 'sound', 'video'],
  'play-sound': ['sound'],
};

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

function namesIn(holder: Json, fields: readonly string[] | undefined, into: Set<string>): void {
  for (const field of fields ?? []) {
    const value = holder[field];
    if (typeof value === 'string' && value !== '' && !TTS.test(value)) into.add(value);
  }
}

function renamed(
  holder: Json,
  fields: readonly string[] | undefined,
  rename: (name: string) => string | undefined,
): Json {
  let copy: Json | undefined;
  for (const field of fields ?? []) {
    const value = holder[field];
    if (typeof value !== 'string') continue;
    const to = rename(value);
    if (to === undefined || to === value) continue;
    copy ??= { ...holder };
    copy[field] = to;
  }
  return copy ?? holder;
}

/** The media names an `init`, `overlay-update` or `overlay-command` refers to (speech left out). */
export function mediaNamesOf(message: Json): Set<string> {
  const names = new Set<string>();
  if (Array.isArray(message.widgets)) {
    for (const widget of message.widgets)
      if (isObject(widget)) namesIn(widget, WIDGET_MEDIA[widget.type as Widget['type']], names);
  }
  if (message.type === 'overlay-command' && isObject(message.payload) && typeof message.command === 'string')
    namesIn(message.payload, COMMAND_MEDIA[message.command], names);
  return names;
}

/** The message with each media name that `rename` knows replaced; the others stay as they are. */
export function renameMedia<T extends Json | PageInit>(
  message: T,
  rename: (name: string) => string | undefined,
): T {
  const out: Json = { ...(message as Json) };
  if (Array.isArray(out.widgets)) {
    out.widgets = out.widgets.map((widget: unknown) =>
      isObject(widget) ? renamed(widget, WIDGET_MEDIA[widget.type as Widget['type']], rename) : widget,
    );
  }
  if (out.type === 'overlay-command' && isObject(out.payload) && typeof out.command === 'string')
    out.payload = renamed(out.payload, COMMAND_MEDIA[out.command], rename);
  return out as T;
}
