// settings.json and GET/PUT /api/settings (decisions-2 §6, §7, §8): OBS, Streamer.bot, speech, points,
// the journal, event sources and the platforms' keys. Secrets are stored in the file (mode 0600) and never returned: the API says
// only whether one is set.
import * as v from 'valibot';

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

/** A live platform the daemon reads events from (decisions-2 §8). */
export const SOURCE_PLATFORMS = ['tiktok', 'twitch', 'youtube'] as const;
export type SourcePlatform = (typeof SOURCE_PLATFORMS)[number];
export const MAX_SOURCES = 20;

/**
 * A channel as each platform names it: a TikTok username, a Twitch login (4–25 letters, digits, _),
 * a YouTube handle `@name` or channel id `UC…` (24 characters).
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
  }
}

/** The canonical spelling of a channel: what two entries are compared by. */
export function normaliseChannel(platform: SourcePlatform, channel: string): string {
  const trimmed = channel.trim();
  if (platform === 'tiktok') return trimmed.replace(/^@/, '').toLowerCase();
  if (platform === 'twitch') return trimmed.toLowerCase();
  return trimmed.startsWith('@') ? trimmed.toLowerCase() : trimmed;
}

export const SourceEntry = v.pipe(
  v.object({
    platform: v.picklist(SOURCE_PLATFORMS, `must be one of ${SOURCE_PLATFORMS.join(', ')}`),
    channel: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(100)),
    enabled: v.optional(v.boolean(), true),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
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
/** Points a viewer earns (decisions-2 §7): per diamond given, like, chat message, follow and share. */
const PointsSettings = v.object({
  perDiamond: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1_000_000)), 1),
  perLike: perAction,
  perChat: perAction,
  perFollow: perAction,
  perShare: perAction,
});

/** The event journal (decisions-2 §7): events older than this many days are removed. */
const JournalSettings = v.object({
  retentionDays: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(3650)), 180),
});

const OBS_URL = v.optional(wsUrl, 'ws://127.0.0.1:4455');
const secret = v.pipe(v.string(), v.maxLength(500));
const common = {
  streamerbot: v.optional(v.object({ url: v.optional(httpUrl, 'http://127.0.0.1:7474') }), {}),
  tts: v.optional(TtsSettings, {}),
  points: v.optional(PointsSettings, {}),
  journal: v.optional(JournalSettings, {}),
  sources: Sources,
  twitch: v.optional(TwitchSettings, {}),
};
const youtubeKey = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,200}$/, 'must be a YouTube Data API key'));

/** settings.json as stored: the OBS password in clear (the file is the user's alone). */
export const StoredSettings = v.object({
  obs: v.optional(v.object({ url: OBS_URL, password: v.optional(secret) }), {}),
  youtube: v.optional(v.object({ apiKey: v.optional(youtubeKey) }), {}),
  ...common,
});
export type StoredSettings = v.InferOutput<typeof StoredSettings>;

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
 * `PUT /api/settings`, the whole document as GET returns it: a secret `{"set": true}` keeps the stored
 * one, a string sets it, `null` clears it (so does `{"set": false}`).
 */
export const SettingsInput = v.object({
  obs: v.optional(
    v.object({
      url: OBS_URL,
      password: v.optional(v.union([secret, v.null(), v.object({ set: v.boolean() })])),
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

/** What GET answers for stored settings. */
export function settingsView(stored: StoredSettings): SettingsView {
  const { password, ...obs } = stored.obs;
  return {
    ...stored,
    obs: { ...obs, password: { set: password !== undefined && password !== '' } },
    youtube: { apiKey: { set: stored.youtube.apiKey !== undefined && stored.youtube.apiKey !== '' } },
  };
}

/** A secret of a PUT: a string sets it, `{"set": true}` keeps the stored one, `null` or `{"set": false}` clears it. */
function keptSecret(
  input: string | null | { set: boolean } | undefined,
  stored: string | undefined,
): string | undefined {
  if (typeof input === 'string') return input || undefined;
  return input && typeof input === 'object' && input.set ? stored : undefined;
}

/** The settings to store for a PUT, given the ones in force (for secrets sent as `{"set": true}`). */
export function applySettingsInput(input: SettingsInput, stored: StoredSettings): StoredSettings {
  const { password, ...obs } = input.obs;
  const kept = keptSecret(password, stored.obs.password);
  const apiKey = keptSecret(input.youtube.apiKey, stored.youtube.apiKey);
  return {
    ...input,
    obs: { ...obs, ...(kept ? { password: kept } : {}) },
    youtube: apiKey ? { apiKey } : {},
  };
}
