// Runs the TikTok LIVE source inside the daemon: events go through ingest, its state shows in GET /status and the log.
import type { RunningDaemon } from '../daemon.js';
import { tiktokConnections } from './tiktok-connection.js';
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
  /** The sign server's API key (`--tiktok-sign-key`, `$OVERLAY_TIKTOK_SIGN_KEY`). */
  signApiKey?: string;
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

/** One line per change of state; the reason of a failure is the source's own line, just before. */
function describeStatus(status: SourceStatus): string {
  return `[tiktok] @${status.username} is now ${status.state}`;
}

/** Starts the source at once; `GET /status` carries `tiktok: {source, username, state, attempts, lastError?, …}`. */
export function startTikTokService(
  daemon: Pick<RunningDaemon, 'ingest' | 'statusFields'> & Partial<Pick<RunningDaemon, 'journal'>>,
  options: TikTokServiceOptions,
): TikTokService {
  const log = options.log ?? ((line: string) => console.error(line));
  let lastState: SourceStatus['state'] | undefined;
  const source = new TikTokSource({
    ...options.source,
    username: options.username,
    createConnection:
      options.createConnection ??
      tiktokConnections(options.signApiKey ? { signApiKey: options.signApiKey } : {}),
    // The source validates what it emits, so its events go straight into the seam.
    onEvent: (event) => {
      daemon.ingest(event);
    },
    onStatus: (status) => {
      // One line per state change: a streamer sees at a glance whether events can arrive.
      if (status.state === lastState) return;
      lastState = status.state;
      log(describeStatus(status));
      // The stream ended: so does its session in the journal (decisions-2 §7).
      if (status.state === 'offline') daemon.journal?.endSession();
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
