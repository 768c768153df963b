// settings.json and GET/PUT /api/settings: OBS, Streamer.bot, speech, points,
// the journal, event sources, the built-in chat commands and the platforms' keys. Secrets are stored in the file (mode 0600) and never returned: the API says
// only whether one is set.
import * as v from 'valibot';
import { SOURCE_PLATFORMS, type SourcePlatform } from './platforms.js';

export { SOURCE_PLATFORMS, type SourcePlatform };

const wsUrl = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.url(),
  v.check((u) => /^wss?:\/\//i.test(u), 'must be a ws or wss URL'),
);
const httpUrl = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.url(),
  v.check((u) => /^https?:\/\//i.test(u), 'must be an http or https URL'),
);

const TtsSettings = v.object({
  enabled: v.optional(v.boolean(), true),
  maxChars: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(1000)), 200),
  blockedWords: v.optional(
    v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(100))), v.maxLength(500)),
    [],
  ),
  userCooldownMs: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0), v.maxValue(86_400_000)), 0),
});

export const MAX_SOURCES = 20;

/**
 * A channel as each platform names it: a TikTok username, a Twitch login (4–25 letters, digits, _),
 * a YouTube handle `@name` or channel id `UC…` (24 characters), a Kick channel's slug (as in kick.com/<slug>).
 */
export function channelProblem(platform: SourcePlatform, channel: string): string | undefined {
  switch (platform) {
    case 'tiktok':
      return /^@?[A-Za-z0-9._]{1,64}$/.test(channel)
        ? undefined
        : 'must be a TikTok username (letters, digits, . and _)';
    case 'twitch':
      return /^[A-Za-z0-9_]{1,25}$/.test(channel)
        ? undefined
        : 'must be a Twitch channel name (letters, digits and _, at most 25)';
    case 'youtube':
      return /^@[A-Za-z0-9._-]{3,30}$/.test(channel) || /^UC[A-Za-z0-9_-]{22}$/.test(channel)
        ? undefined
        : 'must be a YouTube handle (@name) or a channel id (UC followed by 22 characters)';
    case 'kick':
      return /^[A-Za-z0-9_-]{1,64}$/.test(channel)
        ? undefined
        : 'must be a Kick channel as in kick.com/<channel> (letters, digits, - and _)';
  }
}

/** The canonical spelling of a channel: what two entries are compared by. */
export function normaliseChannel(platform: SourcePlatform, channel: string): string {
  const trimmed = channel.trim();
  if (platform === 'tiktok') return trimmed.replace(/^@/, '').toLowerCase();
  if (platform === 'twitch' || platform === 'kick') return trimmed.toLowerCase();
  return trimmed.startsWith('@') ? trimmed.toLowerCase() : trimmed;
}

export const SourceEntry = v.pipe(
  v.object({
    platform: v.picklist(SOURCE_PLATFORMS, `must be one of ${SOURCE_PLATFORMS.join(', ')}`),
    channel: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(100)),
    enabled: v.optional(v.boolean(), true),
    /** Kick only: the channel's chatroom id, for when Kick's site refuses to give it. */
    chatroomId: v.optional(
      v.pipe(
        v.number('must be a number'),
        v.safeInteger('must be a whole number'),
        v.minValue(1, 'must be a positive number'),
      ),
    ),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    if (dataset.value.chatroomId !== undefined && dataset.value.platform !== 'kick')
      addIssue({
        message: 'only a Kick source has a chatroom id',
        path: [
          {
            type: 'object',
            origin: 'value',
            input: dataset.value,
            key: 'chatroomId',
            value: dataset.value.chatroomId,
          },
        ],
      });
    const problem = channelProblem(dataset.value.platform, dataset.value.channel);
    if (problem)
      addIssue({
        message: problem,
        path: [
          {
            type: 'object',
            origin: 'value',
            input: dataset.value,
            key: 'channel',
            value: dataset.value.channel,
          },
        ],
      });
  }),
  v.transform((entry) => ({ ...entry, channel: normaliseChannel(entry.platform, entry.channel) })),
);
export type SourceEntry = v.InferOutput<typeof SourceEntry>;

/** `sources`: each platform and channel once. (An empty object, what earlier versions wrote, is no source.) */
const Sources = v.optional(
  v.pipe(
    v.unknown(),
    v.transform((input) =>
      input !== null && typeof input === 'object' && !Array.isArray(input) && Object.keys(input).length === 0
        ? []
        : input,
    ),
    v.array(SourceEntry, 'must be a list of sources'),
    v.maxLength(MAX_SOURCES, `at most ${MAX_SOURCES} sources`),
    v.check(
      (list) => new Set(list.map((s) => `${s.platform}:${s.channel}`)).size === list.length,
      'each platform and channel may appear once',
    ),
  ),
  [],
);

/** The Twitch application the device sign-in and Helix calls use (else the Gatekeeper's config gives one). */
const TwitchSettings = v.object({
  clientId: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be a Twitch client id (letters, digits, - and _)'),
    ),
  ),
});

const perAction = v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1_000_000)), 0);
/** Points a viewer earns: per diamond given, like, chat message, follow and share. */
const PointsSettings = v.object({
  perDiamond: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1_000_000)), 1),
  perLike: perAction,
  perChat: perAction,
  perFollow: perAction,
  perShare: perAction,
});

/** The event journal: events older than this many days are removed. */
const JournalSettings = v.object({
  retentionDays: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(3650)), 180),
});

/** The longest built-in command trigger and answer (an answer is cut to each platform's own limit when sent). */
export const MAX_COMMAND_TRIGGER = 50;
export const MAX_COMMAND_TEXT = 500;
/** The longest cooldown of a built-in command: a day, in ms. */
export const MAX_COMMAND_COOLDOWN_MS = 86_400_000;

const commandCooldown = (fallback: number) =>
  v.optional(
    v.pipe(
      v.number('must be a number'),
      v.safeInteger('must be a whole number of milliseconds'),
      v.minValue(0, 'must be 0 or more'),
      v.maxValue(MAX_COMMAND_COOLDOWN_MS, 'must be at most a day'),
    ),
    fallback,
  );

/**
 * A built-in chat command: a chat message whose first word is `trigger` (any case) is answered in the
 * chat it came from with `text`, a template with the rule placeholders plus `{points}` and `{top}`;
 * `cooldownMs` between two answers, `userCooldownMs` between two answers to one viewer.
 */
const ChatCommand = (trigger: string, text: string) =>
  v.object({
    enabled: v.optional(v.boolean(), true),
    trigger: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1, 'must not be empty'),
        v.maxLength(MAX_COMMAND_TRIGGER, `must be at most ${MAX_COMMAND_TRIGGER} characters`),
        v.regex(/^\S*$/, 'must be one word, without spaces'),
      ),
      trigger,
    ),
    text: v.optional(
      v.pipe(
        v.string(),
        v.check((t) => t.trim() !== '', 'must not be empty'),
        v.maxLength(MAX_COMMAND_TEXT, `must be at most ${MAX_COMMAND_TEXT} characters`),
      ),
      text,
    ),
    cooldownMs: commandCooldown(10_000),
    userCooldownMs: commandCooldown(30_000),
  });

/** `commands`: the built-in chat commands `points` and `top`, each with its own trigger. */
const CommandsSettings = v.pipe(
  v.object({
    points: v.optional(ChatCommand('!points', '{user.nickname} has {points} points'), {}),
    top: v.optional(ChatCommand('!top', 'Top: {top}'), {}),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const { points, top } = dataset.value;
    if (points.trigger.toLowerCase() !== top.trigger.toLowerCase()) return;
    addIssue({
      message: "must differ from the points command's trigger",
      path: [
        { type: 'object', origin: 'value', input: dataset.value, key: 'top', value: top },
        { type: 'object', origin: 'value', input: top, key: 'trigger', value: top.trigger },
      ],
    });
  }),
);
export type CommandsSettings = v.InferOutput<typeof CommandsSettings>;
export type ChatCommandSettings = CommandsSettings['points'];

/** TikFinity's own port: the games and widgets built for its event feed connect there by default. */
export const TIKFINITY_FEED_PORT = 21213;

/**
 * `tikfinityFeed`: the event feed in TikFinity's shape (docs/widgets.md "TikFinity event feed"), a
 * second socket on the loopback interface that games and widgets made for TikFinity connect to.
 */
const TikfinityFeedSettings = v.object({
  enabled: v.optional(v.boolean('must be true or false'), false),
  port: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.safeInteger('must be a whole number'),
      v.minValue(1, 'must be a port from 1 to 65535'),
      v.maxValue(65535, 'must be a port from 1 to 65535'),
    ),
    TIKFINITY_FEED_PORT,
  ),
});
export type TikfinityFeedSettings = v.InferOutput<typeof TikfinityFeedSettings>;

const OBS_URL = v.optional(wsUrl, 'ws://127.0.0.1:4455');

/**
 * Marks a field of the stored settings as a secret: the one place that says so. Every secret is kept
 * out of `GET /api/settings` (shown as `{"set": …}`), kept when a `PUT` leaves it out, and stripped from
 * a backup made without secrets; SECRET_SETTINGS lists them from the schema, so one added later is too.
 */
export function secret<S extends v.GenericSchema<unknown, string>>(schema: S) {
  return v.pipe(schema, v.metadata({ secret: true }));
}

const obsPassword = secret(v.pipe(v.string(), v.maxLength(500)));
const common = {
  streamerbot: v.optional(v.object({ url: v.optional(httpUrl, 'http://127.0.0.1:7474') }), {}),
  tts: v.optional(TtsSettings, {}),
  points: v.optional(PointsSettings, {}),
  journal: v.optional(JournalSettings, {}),
  sources: Sources,
  twitch: v.optional(TwitchSettings, {}),
  commands: v.optional(CommandsSettings, {}),
  tikfinityFeed: v.optional(TikfinityFeedSettings, {}),
};
const youtubeKey = secret(
  v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,200}$/, 'must be a YouTube Data API key')),
);

/** settings.json as stored: the secrets in clear (the file is the user's alone, mode 0600). */
export const StoredSettings = v.object({
  obs: v.optional(v.object({ url: OBS_URL, password: v.optional(obsPassword) }), {}),
  youtube: v.optional(v.object({ apiKey: v.optional(youtubeKey) }), {}),
  ...common,
});
export type StoredSettings = v.InferOutput<typeof StoredSettings>;

/** A schema as valibot builds it, for walking: optional wrappers, pipes, objects. */
export interface SchemaNode {
  type: string;
  wrapped?: SchemaNode;
  pipe?: SchemaNode[];
  entries?: Record<string, SchemaNode>;
  metadata?: Record<string, unknown>;
}

/** The paths of the fields marked `secret(…)` in a schema (objects, optionals and pipes walked). */
export function secretPaths(node: SchemaNode, at: string[] = []): string[][] {
  if (node.wrapped) return secretPaths(node.wrapped, at);
  if (node.pipe) {
    if (node.pipe.some((item) => item.type === 'metadata' && item.metadata?.secret === true)) return [at];
    const [first] = node.pipe;
    return first && first !== node ? secretPaths(first, at) : [];
  }
  if (node.type === 'object' && node.entries)
    return Object.entries(node.entries).flatMap(([key, entry]) => secretPaths(entry, [...at, key]));
  return [];
}

/** Every secret of the settings, as paths (`['obs', 'password']`), read from StoredSettings. */
export const SECRET_SETTINGS: readonly (readonly string[])[] = secretPaths(
  StoredSettings as unknown as SchemaNode,
);

/**
 * Where the daemon sends a secret, or acts for the streamer: moving it counts as changing the secret
 * (decisions-3 §11). OBS gets the stored password at `obs.url`; Streamer.bot's HTTP server has no
 * password of its own, and whatever listens at `streamerbot.url` receives the actions the daemon runs on
 * the streamer's behalf, so its address is guarded the same way.
 */
export const SECRET_DESTINATIONS: readonly { path: readonly string[]; secret?: readonly string[] }[] = [
  { path: ['obs', 'url'], secret: ['obs', 'password'] },
  { path: ['streamerbot', 'url'] },
];

/**
 * Whether saving `next` over `current` would set, change or clear a secret, or send one that stays to
 * another address (`obs.url` while the OBS password is kept, `streamerbot.url`): what only the streamer's
 * own dashboard may do.
 */
export function changesASecret(current: StoredSettings, next: StoredSettings): boolean {
  const differs = (path: readonly string[]) =>
    (settingAt(current, path) ?? '') !== (settingAt(next, path) ?? '');
  if (SECRET_SETTINGS.some(differs)) return true;
  return SECRET_DESTINATIONS.some(
    ({ path, secret }) =>
      differs(path) && (secret === undefined || (settingAt(current, secret) ?? '') !== ''),
  );
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The value at `path`, or undefined. */
export function settingAt(settings: unknown, path: readonly string[]): unknown {
  let node: unknown = settings;
  for (const key of path) node = isRecord(node) ? node[key] : undefined;
  return node;
}

/** A copy of `settings` with `path` set to `value` (removed when undefined); objects on the way are copied. */
export function withSettingAt<T>(settings: T, path: readonly string[], value: unknown): T {
  const [key, ...rest] = path;
  if (key === undefined) return value as T;
  const copy: Json = isRecord(settings) ? { ...settings } : {};
  const next = rest.length === 0 ? value : withSettingAt(copy[key], rest, value);
  if (next === undefined) delete copy[key];
  else copy[key] = next;
  return copy as T;
}

/** The settings without any secret (a backup made without secrets). */
export function withoutSecrets(stored: StoredSettings): StoredSettings {
  return SECRET_SETTINGS.reduce((out, path) => withSettingAt(out, path, undefined), stored);
}

/** `restored` with every secret it does not carry taken from `kept` (a restore keeps the stored ones). */
export function keepMissingSecrets(restored: StoredSettings, kept: StoredSettings): StoredSettings {
  return SECRET_SETTINGS.reduce((out, path) => {
    const mine = settingAt(out, path);
    const theirs = settingAt(kept, path);
    return (mine === undefined || mine === '') && typeof theirs === 'string' && theirs !== ''
      ? withSettingAt(out, path, theirs)
      : out;
  }, restored);
}

/** `GET /api/settings`: a secret is `{"set": true|false}`. */
export const SettingsView = v.object({
  obs: v.optional(v.object({ url: OBS_URL, password: v.object({ set: v.boolean() }) }), {
    password: { set: false },
  }),
  youtube: v.optional(v.object({ apiKey: v.object({ set: v.boolean() }) }), { apiKey: { set: false } }),
  ...common,
});
export type SettingsView = v.InferOutput<typeof SettingsView>;

/**
 * `PUT /api/settings`, the whole document as GET returns it: a secret `{"set": true}` (or left out)
 * keeps the stored one, a string sets it, `null` clears it (so does `{"set": false}`).
 */
export const SettingsInput = v.object({
  obs: v.optional(
    v.object({
      url: OBS_URL,
      password: v.optional(v.union([obsPassword, v.null(), v.object({ set: v.boolean() })])),
    }),
    {},
  ),
  youtube: v.optional(
    v.object({ apiKey: v.optional(v.union([youtubeKey, v.null(), v.object({ set: v.boolean() })])) }),
    {},
  ),
  ...common,
});
export type SettingsInput = v.InferOutput<typeof SettingsInput>;

export const DEFAULT_SETTINGS: StoredSettings = v.parse(StoredSettings, {});

/** What GET answers for stored settings: each secret as `{"set": true|false}`. */
export function settingsView(stored: StoredSettings): SettingsView {
  return SECRET_SETTINGS.reduce<SettingsView>(
    (view, path) => {
      const value = settingAt(stored, path);
      return withSettingAt(view, path, { set: typeof value === 'string' && value !== '' });
    },
    stored as unknown as SettingsView,
  );
}

/**
 * A secret of a PUT: a string sets it (an empty one clears it), `null` or `{"set": false}` clears it,
 * `{"set": true}` keeps the stored one, and so does leaving it out: a partial document never clears a secret.
 */
function keptSecret(input: unknown, stored: unknown): string | undefined {
  const kept = typeof stored === 'string' && stored !== '' ? stored : undefined;
  if (typeof input === 'string') return input || undefined;
  if (input === null) return undefined;
  if (isRecord(input)) return input.set === true ? kept : undefined;
  return kept;
}

/** The settings to store for a PUT, given the ones in force (for the secrets it keeps). */
export function applySettingsInput(input: SettingsInput, stored: StoredSettings): StoredSettings {
  return SECRET_SETTINGS.reduce<StoredSettings>(
    (out, path) => withSettingAt(out, path, keptSecret(settingAt(input, path), settingAt(stored, path))),
    input as unknown as StoredSettings,
  );
}
