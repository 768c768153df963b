// The wire protocol of both servers: one schema per message and body, types derived from them.
// Sections cited as "interface §x" refer to docs/interface.md, "decisions §x" to docs/decisions.md.
import * as v from 'valibot';

// ---------------------------------------------------------------------------
// Parsing: a result, never an exception
// ---------------------------------------------------------------------------

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string; field?: string };

/** Validates untrusted data against a schema. Unknown object keys are dropped (decisions §1). */
export function parseWith<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
): ParseResult<v.InferOutput<S>> {
  const result = v.safeParse(schema, input);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const field = v.getDotPath(issue) ?? undefined;
  return {
    ok: false,
    error: field ? `${field}: ${issue.message}` : issue.message,
    ...(field ? { field } : {}),
  };
}

/** Parses JSON text, then validates it; non-JSON is a rejection like any other. */
export function parseJsonWith<S extends v.GenericSchema>(
  schema: S,
  text: string,
): ParseResult<v.InferOutput<S>> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, error: 'body is not valid JSON' };
  }
  return parseWith(schema, data);
}

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

export const Uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const finite = v.pipe(v.number(), v.finite());
const nonNegativeInt = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const positiveInt = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
const shortText = v.pipe(v.string(), v.maxLength(200));
const colour = v.pipe(v.string(), v.maxLength(64));
/** A file name inside the data directory's media/ folder, as served at /assets/<name>. */
export const MediaPath = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(255),
  v.regex(/^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._ /-]*$/, 'must be a media file name without ..'),
);

// ---------------------------------------------------------------------------
// Stream events (interface §2.8)
// ---------------------------------------------------------------------------

export const STREAM_EVENT_TYPES = ['gift', 'follow', 'like', 'chat', 'share', 'subscribe', 'viewer'] as const;
export type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

export const StreamUser = v.object({
  uniqueId: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  nickname: v.pipe(v.string(), v.maxLength(100)),
  profilePictureUrl: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});
export type StreamUser = v.InferOutput<typeof StreamUser>;

// `data` keeps fields it does not know (decisions §3: forwarded as given); known ones are checked.
const streamEvent = <T extends StreamEventType, D extends v.ObjectEntries>(type: T, data: D) =>
  v.object({ type: v.literal(type), user: StreamUser, data: v.looseObject(data) });

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

// ---------------------------------------------------------------------------
// Overlays and widgets (interface §§2.6, 2.7; decisions §3)
// ---------------------------------------------------------------------------

export const OverlayMeta = v.object({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  width: v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(7680)),
  height: v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(4320)),
});
export type OverlayMeta = v.InferOutput<typeof OverlayMeta>;

const WidgetId = v.pipe(v.string(), v.minLength(1), v.maxLength(64));

const widgetBase = {
  id: WidgetId,
  x: finite,
  y: finite,
  width: v.optional(v.pipe(finite, v.minValue(0))),
  height: v.optional(v.pipe(finite, v.minValue(0))),
};

export const TextWidget = v.object({
  ...widgetBase,
  type: v.literal('text'),
  content: v.pipe(v.string(), v.maxLength(2000)),
  fontFamily: v.optional(shortText),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
  color: v.optional(colour),
});

export const ImageWidget = v.object({
  ...widgetBase,
  type: v.literal('image'),
  src: MediaPath,
});

export const AlertWidget = v.object({
  ...widgetBase,
  type: v.literal('alert'),
  /** Milliseconds each alert stays on screen unless its command says otherwise. */
  duration: v.optional(v.pipe(finite, v.minValue(100), v.maxValue(60_000)), 5000),
  image: v.optional(MediaPath),
  sound: v.optional(MediaPath),
  color: v.optional(colour),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
  /** Event types the widget announces by itself; absent or empty: only `show-alert` commands. */
  events: v.optional(v.pipe(v.array(v.picklist(STREAM_EVENT_TYPES)), v.maxLength(STREAM_EVENT_TYPES.length))),
});

export const GOAL_SOURCES = ['likes', 'gifts', 'diamonds', 'follows', 'shares', 'subscribes'] as const;
export const GoalWidget = v.object({
  ...widgetBase,
  type: v.literal('goal'),
  title: v.optional(shortText, ''),
  source: v.picklist(GOAL_SOURCES),
  target: positiveInt,
  /** Progress kept by the daemon so a reloaded page resumes where it was. */
  current: v.optional(nonNegativeInt, 0),
  color: v.optional(colour),
});

export const ChatWidget = v.object({
  ...widgetBase,
  type: v.literal('chat'),
  maxMessages: v.optional(v.pipe(positiveInt, v.maxValue(100)), 10),
  color: v.optional(colour),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
});

export const CounterWidget = v.object({
  ...widgetBase,
  type: v.literal('counter'),
  label: v.optional(shortText, ''),
  source: v.optional(v.picklist(GOAL_SOURCES)),
  value: v.optional(v.pipe(v.number(), v.safeInteger()), 0),
  color: v.optional(colour),
  fontSize: v.optional(v.pipe(finite, v.minValue(1), v.maxValue(1000))),
});

export const EventListWidget = v.object({
  ...widgetBase,
  type: v.literal('event-list'),
  maxEvents: v.optional(v.pipe(positiveInt, v.maxValue(100)), 10),
  eventTypes: v.optional(v.array(v.picklist(STREAM_EVENT_TYPES))),
  color: v.optional(colour),
});

export const Gifter = v.object({
  uniqueId: v.string(),
  nickname: v.string(),
  diamonds: nonNegativeInt,
});
export const TopGiftersWidget = v.object({
  ...widgetBase,
  type: v.literal('top-gifters'),
  maxEntries: v.optional(v.pipe(positiveInt, v.maxValue(50)), 5),
  entries: v.optional(v.pipe(v.array(Gifter), v.maxLength(50)), []),
  color: v.optional(colour),
});

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
export const OverlayInput = v.object({ ...OverlayMeta.entries, widgets: v.optional(Widgets, []) });
export type OverlayInput = v.InferOutput<typeof OverlayInput>;

/** One file `overlays/<id>.json` of the data directory. */
export const Overlay = v.object({ id: Uuid, ...OverlayMeta.entries, widgets: Widgets });
export type Overlay = v.InferOutput<typeof Overlay>;

// ---------------------------------------------------------------------------
// Overlay commands (interface §6.2)
// ---------------------------------------------------------------------------

export const ShowAlertPayload = v.object({
  text: v.pipe(v.string(), v.maxLength(500)),
  /** Milliseconds on screen. */
  duration: v.pipe(finite, v.minValue(100), v.maxValue(60_000)),
  image: v.optional(MediaPath),
  sound: v.optional(MediaPath),
});
export type ShowAlertPayload = v.InferOutput<typeof ShowAlertPayload>;

export const PlaySoundPayload = v.object({
  sound: MediaPath,
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

// ---------------------------------------------------------------------------
// WebSocket messages (interface §6)
// ---------------------------------------------------------------------------

export const ClientInit = v.object({
  action: v.literal('init'),
  overlayId: Uuid,
  token: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
});
export type ClientInit = v.InferOutput<typeof ClientInit>;
/** Every message a client may send; `init` is the only one. */
export const ClientMessage = v.variant('action', [ClientInit]);
export type ClientMessage = v.InferOutput<typeof ClientMessage>;

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
export const StreamEventMessage = v.object({ type: v.literal('stream-event'), event: StreamEvent });
export const OverlayCommand = v.object({
  type: v.literal('overlay-command'),
  ...OverlayCommandInput.entries,
  payload: v.record(v.string(), v.unknown()),
});
export const ServerMessage = v.variant('type', [
  ServerInit,
  OverlayUpdate,
  StreamEventMessage,
  OverlayCommand,
]);
export type ServerInit = v.InferOutput<typeof ServerInit>;
export type OverlayUpdate = v.InferOutput<typeof OverlayUpdate>;
export type StreamEventMessage = v.InferOutput<typeof StreamEventMessage>;
export type OverlayCommand = v.InferOutput<typeof OverlayCommand>;
export type ServerMessage = v.InferOutput<typeof ServerMessage>;

export const parseClientMessage = (text: string) => parseJsonWith(ClientMessage, text);
export const parseServerMessage = (text: string) => parseJsonWith(ServerMessage, text);

/** Typed encoding: only a well-formed message compiles. */
export const encodeServerMessage = (message: ServerMessage): string => JSON.stringify(message);
export const encodeClientMessage = (message: ClientMessage): string => JSON.stringify(message);

// ---------------------------------------------------------------------------
// Gatekeeper bodies (interface §§2.1–2.4, decisions §2)
// ---------------------------------------------------------------------------

export const TIERS = ['free', 'premium'] as const;
export const Tier = v.picklist(TIERS);
export type Tier = v.InferOutput<typeof Tier>;

export const Health = v.object({
  status: v.literal('ok'),
  version: v.pipe(v.string(), v.regex(/^\d+(\.\d+)*$/, 'must be a dotted version')),
});
export type Health = v.InferOutput<typeof Health>;

export const ExchangeRequest = v.object({ code: v.pipe(v.string(), v.minLength(1), v.maxLength(512)) });
export const ExchangeResponse = v.object({ token: v.string(), tier: Tier });
export const ValidateResponse = v.object({
  token: v.string(),
  tier: Tier,
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type ExchangeResponse = v.InferOutput<typeof ExchangeResponse>;
export type ValidateResponse = v.InferOutput<typeof ValidateResponse>;

export const ProvisionRequest = v.object({
  user_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
});
export const ProvisionResponse = v.object({
  tunnel_id: Uuid,
  tunnel_token: v.pipe(v.string(), v.minLength(1)),
  public_url: v.pipe(v.string(), v.url()),
  subdomain: v.pipe(v.string(), v.regex(/^[a-z0-9-]{1,63}$/)),
});
export type ProvisionResponse = v.InferOutput<typeof ProvisionResponse>;

export const TUNNEL_STATES = ['provisioned', 'active', 'inactive'] as const;
export type TunnelState = (typeof TUNNEL_STATES)[number];
export const TunnelStatus = v.object({
  tunnel_id: Uuid,
  subdomain: v.string(),
  public_url: v.pipe(v.string(), v.url()),
  active: v.boolean(),
  state: v.picklist(TUNNEL_STATES),
  connections: nonNegativeInt,
  created_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type TunnelStatus = v.InferOutput<typeof TunnelStatus>;

// ---------------------------------------------------------------------------
// Errors (decisions §1)
// ---------------------------------------------------------------------------

export const ERROR_STATUS = {
  bad_request: 400,
  invalid_state: 400,
  invalid_code: 400,
  unauthenticated: 401,
  invalid_token: 401,
  forbidden: 403,
  premium_required: 403,
  membership_inactive: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export const ErrorBody = v.object({
  error: v.object({
    code: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]*$/)),
    message: v.string(),
  }),
});
export type ErrorBody = v.InferOutput<typeof ErrorBody>;

export const errorBody = (code: ErrorCode, message: string): ErrorBody => ({
  error: { code, message },
});
