// Every platform an event can come from, in one table: the name a streamer knows it by, its mark on the page,
// the unit its value is counted in, and whether and how much the daemon may write in its chat. The overlay
// page, the dashboard, the status lines and the daemon's chat sending all read it; the mark's glyph and
// colours are drawn by the page's platform-mark.css, one rule per platform that has a mark.

/** A live platform the daemon reads events from. */
export const SOURCE_PLATFORMS = ['tiktok', 'twitch', 'youtube', 'kick'] as const;
export type SourcePlatform = (typeof SOURCE_PLATFORMS)[number];

/** A provider whose webhooks or socket bring money (the `platform` of a tip), decisions-4 §15. */
export const MONEY_PROVIDERS = [
  'throne',
  'kofi',
  'fourthwall',
  'bmac',
  'patreon',
  'streamelements',
  'streamlabs',
] as const;
export type MoneyProvider = (typeof MONEY_PROVIDERS)[number];

/** The platforms the daemon can write in, in the order an action for every platform sends. */
export const CHAT_PLATFORMS = ['twitch', 'kick', 'youtube'] as const;
export type ChatPlatform = (typeof CHAT_PLATFORMS)[number];

/** Whatever an event's `platform` may be: a live platform, a money provider, or `api` (posted by a tool). */
export type PlatformId = SourcePlatform | MoneyProvider | 'api';

/**
 * What a platform's value is counted in (decisions-4 §16's `unit`): a count of the platform's own
 * unit, or the minor units of the currency the event names (ISO 4217).
 */
export type ValueUnit =
  | { readonly code: 'diamonds' | 'bits' | 'kicks'; readonly one: string; readonly many: string }
  | { readonly code: 'currency' };

/** How the daemon writes in a platform's chat (decisions-3 §12). */
export interface ChatLimits {
  /** Longest message the platform takes, in Unicode code points. */
  readonly maxLength: number;
  /** At most `count` messages within `perMs`. */
  readonly send: { readonly count: number; readonly perMs: number };
}

export interface PlatformFacts {
  /** As a streamer names it: "TikTok", "Buy Me a Coffee". */
  readonly name: string;
  /** As the status lines name the service ("TikTok LIVE"). */
  readonly service: string;
  /** The glyph the mark before a viewer's name shows (platform-mark.css draws it); null: no mark. */
  readonly mark: string | null;
  readonly unit: ValueUnit;
  /** Null: the daemon cannot write in its chat. */
  readonly chat: ChatLimits | null;
}

const DIAMONDS = { code: 'diamonds', one: 'diamond', many: 'diamonds' } as const;
const CURRENCY = { code: 'currency' } as const;
const TWITCH_KICK_SEND = { count: 20, perMs: 30_000 } as const;

/** A money provider: its value is money, and it has no chat to write in. */
const provider = <N extends string, M extends string>(name: N, mark: M) =>
  ({ name, service: name, mark, unit: CURRENCY, chat: null }) as const;

export const PLATFORM_TABLE = {
  tiktok: { name: 'TikTok', service: 'TikTok LIVE', mark: '\u266a', unit: DIAMONDS, chat: null },
  twitch: {
    name: 'Twitch',
    service: 'Twitch',
    mark: 'T',
    unit: { code: 'bits', one: 'bit', many: 'bits' },
    chat: { maxLength: 500, send: TWITCH_KICK_SEND },
  },
  youtube: {
    name: 'YouTube',
    service: 'YouTube',
    // U+FE0E: the text form of ▶, not an emoji.
    mark: '\u25b6\ufe0e',
    unit: CURRENCY,
    chat: { maxLength: 200, send: { count: 1, perMs: 2_000 } },
  },
  kick: {
    name: 'Kick',
    service: 'Kick',
    mark: 'K',
    unit: { code: 'kicks', one: 'Kick', many: 'Kicks' },
    chat: { maxLength: 500, send: TWITCH_KICK_SEND },
  },
  // An event posted to POST /api/events without a platform: no mark, and its `diamondCount` is diamonds.
  api: { name: 'API', service: 'API', mark: null, unit: DIAMONDS, chat: null },
  throne: provider('Throne', '\u265b'),
  kofi: provider('Ko-fi', '\u2665\ufe0e'),
  fourthwall: provider('Fourthwall', '4'),
  bmac: provider('Buy Me a Coffee', '\u2615\ufe0e'),
  patreon: provider('Patreon', 'P'),
  streamelements: provider('StreamElements', 'SE'),
  streamlabs: provider('Streamlabs', 'SL'),
} as const satisfies { readonly [P in PlatformId]: PlatformFacts };

/** Each platform's name as a streamer knows it. */
export const PLATFORM_NAMES: { readonly [P in PlatformId]: string } = Object.fromEntries(
  Object.entries(PLATFORM_TABLE).map(([id, facts]) => [id, facts.name]),
) as { readonly [P in PlatformId]: string };

/** The facts of `id`, or undefined for a name the table does not hold (data from elsewhere). */
export function platformFacts(id: string): PlatformFacts | undefined {
  return Object.hasOwn(PLATFORM_TABLE, id) ? PLATFORM_TABLE[id as PlatformId] : undefined;
}

/** "a", "a and b", "a, b and c". */
function listText(items: readonly string[], last: 'and' | 'or'): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${last} ${items.at(-1)}`;
}

/** The platforms the daemon writes in, by name: "Twitch, Kick or YouTube". */
export const chatPlatformsText = (): string =>
  listText(
    CHAT_PLATFORMS.map((p) => PLATFORM_NAMES[p]),
    'or',
  );

/**
 * The chat limits in words: "Cut to 500 characters on Twitch and Kick, 200 on YouTube. TikTok does not
 * allow sending chat."
 */
export function chatLimitsText(): string {
  const byLength = new Map<number, string[]>();
  for (const p of CHAT_PLATFORMS) {
    const { maxLength } = PLATFORM_TABLE[p].chat;
    byLength.set(maxLength, [...(byLength.get(maxLength) ?? []), PLATFORM_NAMES[p]]);
  }
  const cuts = [...byLength].map(([length, names], i) =>
    i === 0 ? `${length} characters on ${listText(names, 'and')}` : `${length} on ${listText(names, 'and')}`,
  );
  const silent = SOURCE_PLATFORMS.filter((p) => PLATFORM_TABLE[p].chat === null).map(
    (p) => PLATFORM_NAMES[p],
  );
  const none =
    silent.length === 0
      ? ''
      : ` ${listText(silent, 'and')} ${silent.length === 1 ? 'does' : 'do'} not allow sending chat.`;
  return `Cut to ${cuts.join(', ')}.${none}`;
}
