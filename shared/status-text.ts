// `GET /status` in words: the lines `overlay-daemon status` prints and the dashboard's Status view shows.
import { localTime } from './local-time.js';
import { PLATFORM_TABLE } from './platforms.js';
import type { DaemonStatus, LicenceStatus, ObsStatus, SourceReportState } from './protocol/index.js';
import type { RelayStatus } from './protocol/relay.js';
import { formatWait } from './timers.js';

const LICENCE_STATE: Record<LicenceStatus['state'], string> = {
  signed_out: 'not signed in',
  valid: 'valid',
  grace: 'in its grace period (the Gatekeeper could not be reached)',
  expired: 'expired: run overlay-daemon login',
  inactive: 'membership no longer active',
  invalid: 'not valid: run overlay-daemon login',
};

/** `off` is not "not set up": OBS is connected once a rule has an OBS action. */
const OBS_STATE: Record<ObsStatus['state'], string> = {
  connected: 'connected',
  connecting: 'connecting',
  disconnected: 'not connected: trying again',
  off: 'not used by any rule',
};

const SOURCE_STATE: Record<SourceReportState, string> = {
  connecting: 'connecting',
  connected: 'connected',
  reconnecting: 'reconnecting',
  backoff: 'waiting before trying again',
  error: 'needs attention',
  offline: 'not live',
  off: 'turned off',
};

const RELAY_STATE: Record<RelayStatus['state'], string> = {
  connecting: 'connecting to the relay',
  connected: 'published',
  backoff: 'not connected: trying again',
  error: 'needs attention',
  off: 'not published',
};

/** The first line: where the daemon answers. */
export const runningLine = (baseUrl: string) => `overlay-daemon is running at ${baseUrl}`;

/** One line of the status: what it is about (`label`), the words, and the part of `/status` it comes from. */
export interface StatusLine {
  part: 'obs' | 'licence' | 'tunnel' | 'tiktok' | 'source' | 'relay' | 'tikfinityFeed';
  label: string;
  text: string;
  /** For a source, `platform:channel`; for a public overlay, its id. */
  key?: string;
}

/** Every part of `/status` present, one line each, in words and local time (`now` decides "today"). */
export function statusLines(status: DaemonStatus, now: Date = new Date()): StatusLine[] {
  const lines: StatusLine[] = [];
  const when = (iso: string) => localTime(iso, now);
  const { obs, licence, tunnel, tiktok, sources, relay, tikfinityFeed } = status;
  if (obs) {
    const why = obs.state === 'off' ? (obs.detail ?? OBS_STATE.off) : OBS_STATE[obs.state];
    const error =
      obs.state !== 'connected' && obs.state !== 'off' && obs.lastError ? ` (${obs.lastError})` : '';
    lines.push({ part: 'obs', label: 'OBS', text: `${why}${error}` });
  }
  if (licence) {
    const until = licence.valid_until ? `, until ${when(licence.valid_until)}` : '';
    lines.push({
      part: 'licence',
      label: 'licence',
      text: `${licence.tier} tier, ${LICENCE_STATE[licence.state]}${until}`,
    });
  }
  if (tunnel) {
    lines.push({
      part: 'tunnel',
      label: 'remote access',
      text: tunnel.public_url
        ? `${tunnel.public_url} (connector ${tunnel.connector})`
        : `off${tunnel.reason ? ` (${tunnel.reason})` : ''}`,
    });
  }
  if (tiktok) {
    const who = `@${tiktok.username}`;
    let text: string;
    if (tiktok.state === 'connected')
      text = `${who} connected${tiktok.connectedSince ? ` since ${when(tiktok.connectedSince)}` : ''}`;
    else if (tiktok.state === 'disconnected') text = `${who} stopped`;
    else {
      const why = tiktok.lastError ? `: ${tiktok.lastError}` : '';
      const next = tiktok.retryInMs !== undefined ? `; next attempt in ${formatWait(tiktok.retryInMs)}` : '';
      text = `${who} not connected${why}${next}`;
    }
    lines.push({ part: 'tiktok', label: PLATFORM_TABLE.tiktok.service, text });
  }
  // Every source, TikTok's included, in one line each: the platform, the channel, its state in words.
  for (const source of sources ?? []) {
    if (source.platform === 'tiktok' && tiktok) continue;
    const channel = source.platform === 'twitch' ? `#${source.channel}` : source.channel;
    const detail = source.detail ? ` (${source.detail})` : '';
    lines.push({
      part: 'source',
      label: PLATFORM_TABLE[source.platform].service,
      text: `${channel} ${SOURCE_STATE[source.state]}${detail}`,
      key: `${source.platform}:${source.channel}`,
    });
  }
  // Each public overlay: where viewers watch it, its state in words, and how many watch.
  for (const entry of relay ?? []) {
    const where = entry.viewerUrl ?? `overlay ${entry.overlayId}`;
    const viewers =
      entry.state === 'connected' ? `, ${entry.viewers} viewer${entry.viewers === 1 ? '' : 's'}` : '';
    const detail = entry.detail ? ` (${entry.detail})` : '';
    lines.push({
      part: 'relay',
      label: 'public',
      text: `${where} ${RELAY_STATE[entry.state]}${viewers}${detail}`,
      key: entry.overlayId,
    });
  }
  // The TikFinity event feed, while it is enabled: where games connect, or why nothing listens.
  if (tikfinityFeed) {
    const { port, clients } = tikfinityFeed;
    lines.push({
      part: 'tikfinityFeed',
      label: 'TikFinity feed',
      text:
        tikfinityFeed.state === 'listening'
          ? `ws://127.0.0.1:${port}/, ${clients} connected`
          : `off: ${tikfinityFeed.detail ?? `port ${port} refused`}`,
    });
  }
  return lines;
}
