// `overlay-daemon status` in words: is it running, the licence, remote access and each live source.
import type {
  DaemonStatus,
  LicenceStatus,
  ObsStatus,
  SourceReportState,
} from '../../../shared/protocol/index.js';
import type { RelayStatus } from '../../../shared/protocol/relay.js';
import { formatWait } from '../../../shared/timers.js';

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

const PLATFORM_NAME = { tiktok: 'TikTok LIVE', twitch: 'Twitch', youtube: 'YouTube', kick: 'Kick' } as const;

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

const day = (iso: string) => new Date(iso).toLocaleString();

export function describeDaemonStatus(status: DaemonStatus, baseUrl: string): string {
  const lines = [`overlay-daemon is running at ${baseUrl}`];
  const { obs, licence, tunnel, tiktok, sources, relay } = status;
  if (obs) {
    const why = obs.state === 'off' ? (obs.detail ?? OBS_STATE.off) : OBS_STATE[obs.state];
    const error =
      obs.state !== 'connected' && obs.state !== 'off' && obs.lastError ? ` (${obs.lastError})` : '';
    lines.push(`  OBS:           ${why}${error}`);
  }
  if (licence) {
    const until = licence.valid_until ? `, until ${day(licence.valid_until)}` : '';
    lines.push(`  licence:       ${licence.tier} tier, ${LICENCE_STATE[licence.state]}${until}`);
  }
  if (tunnel) {
    lines.push(
      tunnel.public_url
        ? `  remote access: ${tunnel.public_url} (connector ${tunnel.connector})`
        : `  remote access: off${tunnel.reason ? ` (${tunnel.reason})` : ''}`,
    );
  }
  if (tiktok) {
    const who = `@${tiktok.username}`;
    let line: string;
    if (tiktok.state === 'connected')
      line = `${who} connected${tiktok.connectedSince ? ` since ${day(tiktok.connectedSince)}` : ''}`;
    else if (tiktok.state === 'disconnected') line = `${who} stopped`;
    else {
      const why = tiktok.lastError ? `: ${tiktok.lastError}` : '';
      const next = tiktok.retryInMs !== undefined ? `; next attempt in ${formatWait(tiktok.retryInMs)}` : '';
      line = `${who} not connected${why}${next}`;
    }
    lines.push(`  TikTok LIVE:   ${line}`);
  }
  // Every source, TikTok's included, in one line each: the platform, the channel, its state in words.
  for (const source of sources ?? []) {
    if (source.platform === 'tiktok' && tiktok) continue;
    const name = PLATFORM_NAME[source.platform];
    const channel = source.platform === 'twitch' ? `#${source.channel}` : source.channel;
    const detail = source.detail ? ` (${source.detail})` : '';
    lines.push(`  ${`${name}:`.padEnd(14)} ${channel} ${SOURCE_STATE[source.state]}${detail}`);
  }
  // Each public overlay: where viewers watch it, its state in words, and how many watch.
  for (const entry of relay ?? []) {
    const where = entry.viewerUrl ?? `overlay ${entry.overlayId}`;
    const viewers =
      entry.state === 'connected' ? `, ${entry.viewers} viewer${entry.viewers === 1 ? '' : 's'}` : '';
    const detail = entry.detail ? ` (${entry.detail})` : '';
    lines.push(`  public:        ${where} ${RELAY_STATE[entry.state]}${viewers}${detail}`);
  }
  lines.push('  (--json for the full answer of GET /status)');
  return `${lines.join('\n')}\n`;
}
