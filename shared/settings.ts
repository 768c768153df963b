// settings.json and GET/PUT /api/settings (decisions-2 §6): OBS, Streamer.bot, speech, and sections later
// capabilities fill in. Secrets are stored in the file (mode 0600) and never returned: the API says
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

/** Sections of later capabilities (event sources): kept as given until then. */
const Reserved = v.optional(v.record(v.string(), v.unknown()), {});

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
  sources: Reserved,
};

/** settings.json as stored: the OBS password in clear (the file is the user's alone). */
export const StoredSettings = v.object({
  obs: v.optional(v.object({ url: OBS_URL, password: v.optional(secret) }), {}),
  ...common,
});
export type StoredSettings = v.InferOutput<typeof StoredSettings>;

/** `GET /api/settings`: a secret is `{"set": true|false}`. */
export const SettingsView = v.object({
  obs: v.optional(v.object({ url: OBS_URL, password: v.object({ set: v.boolean() }) }), {
    password: { set: false },
  }),
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
  ...common,
});
export type SettingsInput = v.InferOutput<typeof SettingsInput>;

export const DEFAULT_SETTINGS: StoredSettings = v.parse(StoredSettings, {});

/** What GET answers for stored settings. */
export function settingsView(stored: StoredSettings): SettingsView {
  const { password, ...obs } = stored.obs;
  return { ...stored, obs: { ...obs, password: { set: password !== undefined && password !== '' } } };
}

/** The settings to store for a PUT, given the ones in force (for secrets sent as `{"set": true}`). */
export function applySettingsInput(input: SettingsInput, stored: StoredSettings): StoredSettings {
  const { password, ...obs } = input.obs;
  const kept =
    typeof password === 'string'
      ? password
      : password && typeof password === 'object' && password.set
        ? stored.obs.password
        : undefined;
  return { ...input, obs: { ...obs, ...(kept ? { password: kept } : {}) } };
}
