// Overlays and widgets (interface §§2.6, 2.7; decisions §3): one schema per widget kind.
import * as v from 'valibot';
import { PlatformSchema, STREAM_EVENT_TYPES } from './events.js';
import {
  colour,
  finite,
  MediaPath,
  nonNegativeInt,
  positiveInt,
  shortText,
  Uuid,
  VideoPath,
} from './primitives.js';

export const OverlayMeta = v.object({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  width: v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(7680)),
  height: v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(4320)),
});
export type OverlayMeta = v.InferOutput<typeof OverlayMeta>;

export const WidgetId = v.pipe(v.string(), v.minLength(1), v.maxLength(64));

const widgetBase = {
  id: WidgetId,
  /** What the streamer calls it ("Gift alert"); the dashboard shows it instead of the id. */
  name: v.optional(v.pipe(v.string(), v.maxLength(60))),
  x: finite,
  y: finite,
  width: v.optional(v.pipe(finite, v.minValue(0))),
  height: v.optional(v.pipe(finite, v.minValue(0))),
};

const TextWidget = v.object({
  ...widgetBase,
  type: v.literal('text'),
  content: v.pipe(v.string(), v.maxLength(2000)),
  fontFamily: v.optional(shortText),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
  color: v.optional(colour),
});

const ImageWidget = v.object({
  ...widgetBase,
  type: v.literal('image'),
  src: MediaPath,
});

/** How an alert looks and moves: a card that pops in, a banner that slides, or plain text that fades. */
export const ALERT_STYLES = ['pop', 'slide', 'plain'] as const;
export type AlertStyle = (typeof ALERT_STYLES)[number];

const AlertWidget = v.object({
  ...widgetBase,
  type: v.literal('alert'),
  /** Absent: `pop`. */
  style: v.optional(v.picklist(ALERT_STYLES)),
  /** Milliseconds each alert stays on screen unless its command says otherwise. */
  duration: v.optional(v.pipe(finite, v.minValue(100), v.maxValue(60_000)), 5000),
  image: v.optional(MediaPath),
  sound: v.optional(MediaPath),
  /** A video from the media library (mp4 or webm) played with each alert, in place of the image. */
  video: v.optional(VideoPath),
  /** The video plays without its sound (its sound would otherwise play beside the audio queue). */
  videoMuted: v.optional(v.boolean()),
  color: v.optional(colour),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
  /** Event types the widget announces by itself; absent or empty: only `show-alert` commands. */
  events: v.optional(v.pipe(v.array(v.picklist(STREAM_EVENT_TYPES)), v.maxLength(STREAM_EVENT_TYPES.length))),
});

export const GOAL_SOURCES = ['likes', 'gifts', 'diamonds', 'follows', 'shares', 'subscribes'] as const;
const GoalWidget = v.object({
  ...widgetBase,
  type: v.literal('goal'),
  title: v.optional(shortText, ''),
  source: v.picklist(GOAL_SOURCES),
  target: positiveInt,
  /** Progress kept by the daemon so a reloaded page resumes where it was. */
  current: v.optional(nonNegativeInt, 0),
  color: v.optional(colour),
});

const ChatWidget = v.object({
  ...widgetBase,
  type: v.literal('chat'),
  maxMessages: v.optional(v.pipe(positiveInt, v.maxValue(100)), 10),
  color: v.optional(colour),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
});

const CounterWidget = v.object({
  ...widgetBase,
  type: v.literal('counter'),
  label: v.optional(shortText, ''),
  source: v.optional(v.picklist(GOAL_SOURCES)),
  value: v.optional(v.pipe(v.number(), v.safeInteger()), 0),
  color: v.optional(colour),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
});

const EventListWidget = v.object({
  ...widgetBase,
  type: v.literal('event-list'),
  maxEvents: v.optional(v.pipe(positiveInt, v.maxValue(100)), 10),
  eventTypes: v.optional(v.array(v.picklist(STREAM_EVENT_TYPES))),
  color: v.optional(colour),
});

const Gifter = v.object({
  uniqueId: v.string(),
  nickname: v.string(),
  diamonds: nonNegativeInt,
  /** The figure of the widget's `metric` when it is not diamonds (likes, chats or points). */
  value: v.optional(v.number()),
  /**
   * Where every gift counted in `diamonds` came from, so the page names its unit (diamonds, bits, a
   * currency); `mixed` when they came in different units (the sum is then shown without one).
   */
  platform: v.optional(v.union([PlatformSchema, v.literal('mixed')])),
  /** The currency of YouTube gifts counted in `diamonds` (then cents), when all share one. */
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/))),
});
/** What a ranking counts, and over which time. */
export const RANKING_METRICS = ['diamonds', 'likes', 'chats', 'points'] as const;
export type RankingMetric = (typeof RANKING_METRICS)[number];

const TopGiftersWidget = v.object({
  ...widgetBase,
  type: v.literal('top-gifters'),
  /**
   * `session`: this stream; `all`: every stream in the journal. With either this or `metric` set the
   * ranking comes from the event journal; without both, from the gifts since the widget was last reset.
   */
  scope: v.optional(v.picklist(['session', 'all'])),
  metric: v.optional(v.picklist(RANKING_METRICS)),
  maxEntries: v.optional(v.pipe(positiveInt, v.maxValue(50)), 5),
  entries: v.optional(v.pipe(v.array(Gifter), v.maxLength(50)), []),
  color: v.optional(colour),
});

/**
 * The value a widget keeps from stream events (goal progress, a counter, the top-gifters list), apart from
 * its layout: what the daemon stores in live-values.json.
 */
export const LiveWidgetValue = v.variant('type', [
  v.pick(GoalWidget, ['type', 'current']),
  v.pick(CounterWidget, ['type', 'value']),
  v.pick(TopGiftersWidget, ['type', 'entries']),
]);
export type LiveWidgetValue = v.InferOutput<typeof LiveWidgetValue>;

/** Every widget kind. A new kind is one more schema in this list. */
export const Widget = v.variant('type', [
  TextWidget,
  ImageWidget,
  AlertWidget,
  GoalWidget,
  ChatWidget,
  CounterWidget,
  EventListWidget,
  TopGiftersWidget,
]);
export type Widget = v.InferOutput<typeof Widget>;
export type WidgetType = Widget['type'];
export type WidgetOf<T extends WidgetType> = Extract<Widget, { type: T }>;

const Widgets = v.pipe(
  v.array(Widget),
  v.maxLength(200),
  v.check(
    (widgets) => new Set(widgets.map((w) => w.id)).size === widgets.length,
    'widget ids must be unique',
  ),
);

/** The body of `PUT /api/overlays/:id` and `POST /api/overlays`: everything but the id. */
export const OverlayInput = v.object({
  ...OverlayMeta.entries,
  widgets: v.optional(Widgets, []),
  /** Published through the Gatekeeper's relay (docs/relay.md; Premium only). A PUT without it sets false. */
  public: v.optional(v.boolean(), false),
});
export type OverlayInput = v.InferOutput<typeof OverlayInput>;

/** One file `overlays/<id>.json` of the data directory. */
export const Overlay = v.object({
  id: Uuid,
  ...OverlayMeta.entries,
  widgets: Widgets,
  /** A file written before `public` existed reads as not public. */
  public: v.optional(v.boolean(), false),
});
export type Overlay = v.InferOutput<typeof Overlay>;
