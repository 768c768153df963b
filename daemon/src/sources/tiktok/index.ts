// TikTok LIVE as one of the daemon's sources: the TikTokSource of source.ts behind the
// EventSource interface, its own detailed state (`tiktok` in /status) mapped to the shared words.

import type { EventSource, SourceContext, SourceReport } from '../source.js';
import { tiktokConnections } from './connection.js';
import {
  type ConnectionFactory,
  type SourceStatus,
  TikTokSource,
  type TikTokSourceOptions,
} from './source.js';

export interface TikTokOptions {
  /** The library adapter by default; a fake in tests. */
  createConnection?: ConnectionFactory;
  /** The sign server's API key (`--tiktok-sign-key`, `$OVERLAY_TIKTOK_SIGN_KEY`). */
  signApiKey?: string;
  /** Passed through to TikTokSource (backoff, timers, jitter). */
  source?: Pick<TikTokSourceOptions, 'backoff' | 'timers' | 'random' | 'giftStreakTimeoutMs'>;
}

/** TikTok's own states in the words every source uses. */
export function tiktokReport(status: SourceStatus): SourceReport {
  const rateLimited = status.lastError !== undefined && /sign server|rate/i.test(status.lastError);
  const state: SourceReport['state'] =
    status.state === 'disconnected'
      ? 'off'
      : status.state === 'reconnecting' && rateLimited
        ? 'backoff'
        : status.state;
  const since = status.state === 'connected' ? status.connectedSince : status.lastErrorAt;
  return {
    platform: 'tiktok',
    channel: status.username.toLowerCase(),
    state,
    ...(status.state !== 'connected' && status.lastError ? { detail: status.lastError } : {}),
    ...(since ? { since } : {}),
  };
}

export class TikTokEventSource implements EventSource {
  readonly platform = 'tiktok';
  readonly channel: string;
  readonly #source: TikTokSource;
  #lastState: SourceStatus['state'] | undefined;

  constructor(
    username: string,
    ctx: Pick<SourceContext, 'emit' | 'log' | 'streamEnded'>,
    options: TikTokOptions = {},
  ) {
    this.#source = new TikTokSource({
      ...options.source,
      username,
      createConnection:
        options.createConnection ??
        tiktokConnections(options.signApiKey ? { signApiKey: options.signApiKey } : {}),
      // The source validates what it emits, so its events go straight into the seam.
      onEvent: (event) => ctx.emit(event),
      onStatus: (status) => {
        // One line per state change: a streamer sees at a glance whether events can arrive.
        if (status.state === this.#lastState) return;
        this.#lastState = status.state;
        ctx.log(`[tiktok] @${status.username} is now ${status.state}`);
        // The stream ended: so does its session in the journal.
        if (status.state === 'offline') ctx.streamEnded();
      },
      log: (line) => ctx.log(line),
    });
    this.channel = this.#source.username.toLowerCase();
  }

  /** `tiktok` in /status: the detailed state (attempts, retry, gaps). */
  status(): SourceStatus {
    return this.#source.status();
  }

  report(): SourceReport {
    return tiktokReport(this.#source.status());
  }

  start(): void {
    this.#source.start();
  }

  stop(): Promise<void> {
    return this.#source.stop();
  }
}
