// Runs the TikTok LIVE source inside the daemon: events go through ingest, its state shows in GET /status and the log.
import type { RunningDaemon } from '../daemon.js';
import { tiktokConnection } from './tiktok-connection.js';
import {
  type ConnectionFactory,
  type SourceStatus,
  TikTokSource,
  type TikTokSourceOptions,
} from './tiktok-source.js';

interface TikTokServiceOptions {
  /** The streamer's TikTok username, with or without `@`. */
  username: string;
  /** The library adapter by default; a fake in tests. */
  createConnection?: ConnectionFactory;
  log?: (line: string) => void;
  /** Passed through to TikTokSource (backoff, timers, jitter). */
  source?: Pick<TikTokSourceOptions, 'backoff' | 'timers' | 'random' | 'giftStreakTimeoutMs'>;
}

export interface TikTokService {
  status(): SourceStatus;
  /** Disconnects for good (emitting a gift streak still in progress) and leaves `tiktok` in /status as disconnected. */
  stop(): Promise<void>;
}

/** Names that TikTokSource accepts: what `--tiktok` is checked against before anything starts. */
export function isTikTokUsername(name: string): boolean {
  return /^@?[A-Za-z0-9._]{1,64}$/.test(name.trim());
}

function describeStatus(status: SourceStatus): string {
  const parts = [`[tiktok] @${status.username} is now ${status.state}`];
  if (status.retryInMs !== undefined) parts.push(`next attempt in ${Math.round(status.retryInMs / 1000)} s`);
  if (status.state !== 'connected' && status.lastError) parts.push(`last error: ${status.lastError}`);
  return parts.join('; ');
}

/** Starts the source at once; `GET /status` carries `tiktok: {source, username, state, attempts, lastError?, …}`. */
export function startTikTokService(
  daemon: Pick<RunningDaemon, 'ingest' | 'statusFields'>,
  options: TikTokServiceOptions,
): TikTokService {
  const log = options.log ?? ((line: string) => console.error(line));
  let lastState: SourceStatus['state'] | undefined;
  const source = new TikTokSource({
    ...options.source,
    username: options.username,
    createConnection: options.createConnection ?? tiktokConnection,
    // The source validates what it emits, so its events go straight into the seam.
    onEvent: (event) => {
      daemon.ingest(event);
    },
    onStatus: (status) => {
      // One line per state change: a streamer sees at a glance whether events can arrive.
      if (status.state === lastState) return;
      lastState = status.state;
      log(describeStatus(status));
    },
    log,
  });
  daemon.statusFields.set('tiktok', () => source.status());
  source.start();
  return {
    status: () => source.status(),
    stop: () => source.stop(),
  };
}
