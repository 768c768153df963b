// Rules (rules.json, GET/PUT /api/rules): a trigger, conditions, a cooldown and overlay-command actions.
import * as v from 'valibot';
import { CHAT_PLATFORMS } from './platforms.js';
import { PlatformSchema, STREAM_EVENT_TYPES, Uuid, VoiceId } from './protocol/index.js';

const count = v.pipe(v.number(), v.safeInteger(), v.minValue(1));

export const RuleConditions = v.object({
  /** Exact gift name, case-insensitive (gift events). */
  giftName: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  /** Minimum `data.repeatCount` (gift events). */
  minRepeatCount: v.optional(count),
  /** Minimum diamonds: `diamondCount × repeatCount` (gift events). */
  minDiamonds: v.optional(count),
  /** Minimum `data.likeCount` in one like event. */
  minLikes: v.optional(count),
  /** Case-insensitive substring of a chat comment. */
  chatIncludes: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  /** Only events from this `user.uniqueId`. */
  userId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
  /** A chat message whose first word is this command, case-insensitive (`!dance`). */
  command: v.optional(v.pipe(v.string(), v.regex(/^\S{1,50}$/, 'must be one word of at most 50 characters'))),
  /** Fires each time the room's like total crosses a multiple of this (like events). */
  everyLikes: v.optional(count),
  /** Only events from this platform. */
  platform: v.optional(PlatformSchema),
});
export type RuleConditions = v.InferOutput<typeof RuleConditions>;

/** Fields every action may have: a wait before it, and the queue it runs in. */
const actionCommon = {
  /** Milliseconds waited before the action runs. */
  delayMs: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(60_000))),
  /** Actions with the same queue run one at a time, in arrival order, across rules. */
  queue: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, _ or -')),
  ),
};

/** String values of action fields are templates: `{user.nickname} sent {data.repeatCount} × {data.giftName}`. */
const templated = v.record(v.string(), v.unknown());

/** An overlay command, as actions always were; `kind` may be left out. */
export const OverlayAction = v.object({
  kind: v.optional(v.literal('overlay')),
  ...actionCommon,
  overlayId: Uuid,
  widgetId: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  command: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  payload: v.optional(templated, {}),
});

/** A placeholder of a template (`{user.nickname}`); `{{` and `}}` are literal braces. */
const URL_PLACEHOLDER = /\{\{|\}\}|\{[A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+){0,7}\}/g;

/**
 * Where a URL template's origin ends: the first `/`, `?` or `#` after `scheme://` (the end when none).
 * Everything before it is the scheme, user info, host and port.
 */
export function urlOriginEnd(template: string): number {
  const scheme = template.indexOf('://');
  const from = scheme === -1 ? 0 : scheme + 3;
  const end = template.slice(from).search(/[/?#]/);
  return end === -1 ? template.length : from + end;
}

/**
 * The first placeholder of a webhook URL template that stands in its scheme, user info, host or port
 * (viewer text there could send the request anywhere), or undefined when every one is in the path,
 * query or fragment.
 */
export function placeholderBeforePath(template: string): string | undefined {
  const end = urlOriginEnd(template);
  for (const match of template.matchAll(URL_PLACEHOLDER)) {
    if (match.index >= end) return undefined;
    if (match[0] !== '{{' && match[0] !== '}}') return match[0];
  }
  return undefined;
}

/** An HTTP request to another tool: 5 s timeout, redirects not followed, a POST never retried. */
export const WebhookAction = v.object({
  kind: v.literal('webhook'),
  ...actionCommon,
  url: v.pipe(
    v.string(),
    v.maxLength(2048),
    v.check(
      (u) => placeholderBeforePath(u) === undefined,
      'a placeholder may stand only in the path, query or fragment, never in the scheme, user info, host or port',
    ),
    v.url(),
    v.check((u) => /^https?:\/\//i.test(u), 'must be an http or https URL'),
  ),
  method: v.optional(v.picklist(['POST', 'GET', 'PUT'])),
  headers: v.optional(
    v.record(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]{1,64}$/)), v.pipe(v.string(), v.maxLength(1000))),
  ),
  body: v.optional(v.unknown()),
});

/** A Streamer.bot action through its HTTP server (`POST {streamerbot.url}/DoAction`). */
export const StreamerbotAction = v.object({
  kind: v.literal('streamerbot'),
  ...actionCommon,
  action: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  args: v.optional(templated),
});

/** The OBS requests an `obs` action may send, with the params each takes. */
export const OBS_REQUESTS = [
  'SetCurrentProgramScene',
  'SetSceneItemEnabled',
  'SetInputMute',
  'ToggleInputMute',
  'SetSourceFilterEnabled',
  'TriggerHotkeyByName',
] as const;
export type ObsRequest = (typeof OBS_REQUESTS)[number];

const obsName = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
/** Params are templates too: a scene can be named after the gift (`Gift {data.giftName}`). */
const OBS_PARAMS = {
  SetCurrentProgramScene: v.object({ sceneName: obsName }),
  SetSceneItemEnabled: v.object({ sceneName: obsName, sourceName: obsName, enabled: v.boolean() }),
  SetInputMute: v.object({ inputName: obsName, inputMuted: v.boolean() }),
  ToggleInputMute: v.object({ inputName: obsName }),
  SetSourceFilterEnabled: v.object({ sourceName: obsName, filterName: obsName, filterEnabled: v.boolean() }),
  TriggerHotkeyByName: v.object({ hotkeyName: obsName }),
} as const satisfies Record<ObsRequest, v.GenericSchema>;

const obsCommon = {
  kind: v.literal('obs'),
  ...actionCommon,
  /** Undoes the request after this long: the previous scene, the opposite enabled or muted state. */
  revertAfterMs: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(600_000))),
};

/** One OBS request over obs-websocket v5; its params checked for that request. */
export const ObsAction = v.variant(
  'request',
  OBS_REQUESTS.map((request) =>
    v.object({ ...obsCommon, request: v.literal(request), params: OBS_PARAMS[request] }),
  ) as unknown as [
    v.ObjectSchema<
      typeof obsCommon & {
        request: v.LiteralSchema<ObsRequest, undefined>;
        params: v.GenericSchema<Record<string, unknown>>;
      },
      undefined
    >,
  ],
  `request must be one of ${OBS_REQUESTS.join(', ')}`,
);

/** An `obs` action as stored. */
export interface ObsRuleAction {
  kind: 'obs';
  request: ObsRequest;
  params: Record<string, unknown>;
  revertAfterMs?: number | undefined;
  delayMs?: number | undefined;
  queue?: string | undefined;
}

/** Text to speech, played by the overlay page's audio queue. */
export const SpeakAction = v.object({
  kind: v.literal('speak'),
  ...actionCommon,
  text: v.pipe(v.string(), v.minLength(1), v.maxLength(1000)),
  overlayId: Uuid,
  voice: v.optional(VoiceId),
  /** 0.5–2: the engine's usual pace times this. */
  rate: v.optional(v.pipe(v.number(), v.minValue(0.5), v.maxValue(2))),
  volume: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
});

/** Where a `chat` action writes: `same` is the platform the event came from. */
export const CHAT_TARGETS = ['same', ...CHAT_PLATFORMS, 'all'] as const;
export type ChatTarget = (typeof CHAT_TARGETS)[number];

/**
 * A chat message as the streamer (decisions-3 §12): `text` is a template, cut to the platform's limit
 * when sent; `platform` defaults to `same`.
 */
export const ChatAction = v.object({
  kind: v.literal('chat'),
  ...actionCommon,
  text: v.pipe(
    v.string(),
    v.check((t) => t.trim() !== '', 'must not be empty'),
    v.maxLength(1000),
  ),
  platform: v.optional(v.picklist(CHAT_TARGETS, `must be one of ${CHAT_TARGETS.join(', ')}`)),
});
export type ChatRuleAction = v.InferOutput<typeof ChatAction>;

export const ACTION_KINDS = ['overlay', 'speak', 'webhook', 'streamerbot', 'obs', 'chat'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

const UnknownKind = v.object({
  kind: v.picklist(ACTION_KINDS, `kind must be one of ${ACTION_KINDS.join(', ')}`),
});

/**
 * One action: the schema of its `kind` (absent: `overlay`). Chosen by the input's kind rather than
 * tried in turn, so a mistake is named by its field (`actions.0.url`), as before.
 */
export const RuleAction = v.lazy((input: unknown) => {
  const kind = typeof input === 'object' && input !== null ? (input as { kind?: unknown }).kind : undefined;
  if (kind === undefined || kind === 'overlay') return OverlayAction;
  if (kind === 'webhook') return WebhookAction;
  if (kind === 'streamerbot') return StreamerbotAction;
  if (kind === 'obs') return ObsAction;
  if (kind === 'speak') return SpeakAction;
  if (kind === 'chat') return ChatAction;
  return UnknownKind;
}) as v.GenericSchema<
  unknown,
  | v.InferOutput<typeof OverlayAction>
  | v.InferOutput<typeof WebhookAction>
  | v.InferOutput<typeof StreamerbotAction>
  | v.InferOutput<typeof SpeakAction>
  | ChatRuleAction
  | ObsRuleAction
>;
export type RuleAction = v.InferOutput<typeof RuleAction>;
export type OverlayRuleAction = v.InferOutput<typeof OverlayAction>;

export const Rule = v.object({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  name: v.optional(v.pipe(v.string(), v.maxLength(100)), ''),
  enabled: v.optional(v.boolean(), true),
  trigger: v.picklist(STREAM_EVENT_TYPES),
  conditions: v.optional(RuleConditions, {}),
  cooldownMs: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(86_400_000)), 0),
  /** Per sender: the same viewer cannot fire the rule again within this. */
  userCooldownMs: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(86_400_000))),
  /** Gift rules: the actions run once per gift of a streak (at most 100 times). */
  perUnit: v.optional(v.boolean()),
  actions: v.pipe(v.array(RuleAction), v.minLength(1), v.maxLength(10)),
});
export type Rule = v.InferOutput<typeof Rule>;

export const RuleList = v.pipe(
  v.array(Rule),
  v.maxLength(500),
  v.check((rules) => new Set(rules.map((r) => r.id)).size === rules.length, 'rule ids must be unique'),
);
export type RuleList = v.InferOutput<typeof RuleList>;

/** An action that sends an overlay command (no `kind`, or `overlay`). */
export function isOverlayAction(action: RuleAction): action is OverlayRuleAction {
  return action.kind === undefined || action.kind === 'overlay';
}

/**
 * `POST /api/rules/test`: `{rule}`, a rule whose actions run once for a sample event (saved or not with
 * the admin key; a paired device's must be the saved rule of that id), or `{ruleId}`, the saved rule.
 */
export const RuleTestInput = v.lazy((input: unknown) =>
  typeof input === 'object' && input !== null && 'ruleId' in input && !('rule' in input)
    ? v.object({ ruleId: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) })
    : v.object({ rule: Rule }),
) as v.GenericSchema<unknown, { rule: Rule } | { ruleId: string }>;
