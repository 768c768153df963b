// What the Sources view says of a channel: one spelling per source, the channel as its platform shows it,
// since when a state holds, and the problems of what is typed before anything is sent.
import { PLATFORM_NAMES } from '../../../../shared/platforms.js';
import {
  channelProblem,
  normaliseChannel,
  SettingsInput,
  type SourceEntry,
  type SourcePlatform,
} from '../../../../shared/settings.js';
import { fieldIssues } from '../field-issues.js';
import { optionalNumberFromText } from '../fields.js';

export type Note = { kind: 'ok' | 'error'; text: string };
export type Channel = { platform: SourcePlatform; channel: string; chatroomId?: number };

/** Two spellings of one channel (`@Name` and `name` on TikTok) are the same source. */
export const sameSource = (a: Channel, b: Channel) =>
  a.platform === b.platform &&
  normaliseChannel(a.platform, a.channel) === normaliseChannel(b.platform, b.channel);

/** A channel as its platform shows it: TikTok names with their @. */
export const channelText = (s: Channel) => (s.platform === 'tiktok' ? `@${s.channel}` : s.channel);

/** "Twitch somechannel": a source in a sentence, spelt as the daemon stores it. */
export const sourceName = (s: Channel) =>
  `${PLATFORM_NAMES[s.platform]} ${channelText({ ...s, channel: normaliseChannel(s.platform, s.channel) })}`;

export const TIME = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
const DAY_AND_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** "since 14:02" today, with the date on another day. */
export function sinceText(iso: string | undefined): string | undefined {
  if (!iso) return undefined;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return undefined;
  const today = at.toDateString() === new Date().toDateString();
  return `since ${(today ? TIME : DAY_AND_TIME).format(at)}`;
}

/** What to type for each platform. */
export const CHANNEL_HINTS: Record<SourcePlatform, { placeholder: string; hint: string }> = {
  tiktok: { placeholder: '@username', hint: 'The TikTok username, with or without its @.' },
  twitch: { placeholder: 'channelname', hint: 'The channel name, as in twitch.tv/channelname.' },
  youtube: {
    placeholder: '@handle or UC…',
    hint: 'The channel’s handle (@name) or its channel id (UC followed by 22 characters).',
  },
  kick: {
    placeholder: 'channelname',
    hint: 'The channel name, as in kick.com/channelname. Chat is read over Kick’s own chat socket.',
  },
};

/** The message beside the channel field before anything is sent: empty, misspelt, or listed already. */
export function channelIssue(entry: Channel, existing: readonly SourceEntry[]): string | undefined {
  const channel = entry.channel.trim();
  if (channel === '') return 'must not be empty';
  const problem = channelProblem(entry.platform, channel);
  if (problem) return problem;
  if (existing.some((e) => sameSource(e, { ...entry, channel })))
    return `${sourceName({ ...entry, channel })} is already in the list`;
  return undefined;
}

/** A Kick chatroom id as typed: its problem in the settings' own words, or none (empty is none). */
export function chatroomIdIssue(text: string): string | undefined {
  const chatroomId = optionalNumberFromText(text);
  if (chatroomId === undefined) return undefined;
  return fieldIssues(SettingsInput, { sources: [{ platform: 'kick', channel: 'kick', chatroomId }] }).get(
    'sources.0.chatroomId',
  );
}

export const CHATROOM_ID_HINT =
  'Only when Kick’s site refuses to give it: open kick.com/api/v2/channels/<channel> in a browser and copy the number after "chatroom": {"id":.';
