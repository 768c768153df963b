// What every live source (TikTok, Twitch, YouTube) is to the daemon: it starts, stops,
// emits validated stream events through one seam, and reports its state in a streamer's words.

import type { SourceReport, SourceReportState, StreamEvent } from '../../../shared/protocol/index.js';
import type { SourcePlatform } from '../../../shared/settings.js';
import type { Timers } from '../timers.js';
import type { ConfigArrival } from './credentials.js';
import type { PlatformUrls } from './platform-urls.js';

export type { SourceReport, SourceReportState };

export interface EventSource {
  readonly platform: SourcePlatform;
  /** As settings.json spells it after normalising (e.g. a lowercase Twitch login). */
  readonly channel: string;
  /** Starts connecting; never throws, never blocks (failures become its state). */
  start(): void;
  /** Disconnects for good; resolves once nothing of it runs any more. */
  stop(): Promise<void>;
  report(): SourceReport;
}

/** What a source is given: where events go, the log, the platforms' addresses and credentials. */
export interface SourceContext {
  /**
   * The ingest seam: the event is journaled, broadcast and handed to the rules. Never throws. `at`: when it
   * happened (milliseconds since the epoch), where the platform says so: one that comes late is caught up.
   */
  emit(event: StreamEvent, options?: { at?: number }): void;
  /** One line to the daemon's log; a source prefixes its own lines with `[twitch]`, `[youtube]`. */
  log(line: string): void;
  urls: PlatformUrls;
  timers: Timers;
  /** The data directory's root (Twitch keeps its sign-in in `twitch.json` there). */
  dataDir: string;
  /** The Twitch client id in force: settings.json's, else the Gatekeeper's config's. */
  twitchClientId(): string | undefined;
  /** The YouTube Data API key in force: settings.json's, else the Gatekeeper's config's. */
  youtubeApiKey(): string | undefined;
  /** Whether the Gatekeeper's config arrived (it may give the credentials); `arrived` when not given. */
  configArrival?(): ConfigArrival;
  /** A stream of this source ended: its journal session ends too. */
  streamEnded(): void;
  /** Uniform in [0, 1): the jitter of reconnects. */
  random?: () => number;
}

/**
 * Keeps a source's state, the time it began and its detail, and logs each change once:
 * `[twitch] #channel: connected`, `[youtube] @name: backoff (quota used up for today)`.
 */
export class SourceStateTracker {
  #state: SourceReportState = 'off';
  #detail: string | undefined;
  #since: number;

  constructor(
    readonly platform: SourcePlatform,
    readonly channel: string,
    private readonly timers: Pick<Timers, 'now'>,
    private readonly log: (line: string) => void,
    /** How the channel is named in the log: `#name` for Twitch, the handle for YouTube. */
    private readonly label = channel,
  ) {
    this.#since = timers.now();
  }

  get state(): SourceReportState {
    return this.#state;
  }

  set(state: SourceReportState, detail?: string): void {
    if (state === this.#state && detail === this.#detail) return;
    if (state !== this.#state) this.#since = this.timers.now();
    this.#state = state;
    this.#detail = detail;
    this.log(`[${this.platform}] ${this.label}: ${state}${detail ? ` (${detail})` : ''}`);
  }

  report(): SourceReport {
    const since = new Date(this.#since);
    return {
      platform: this.platform,
      channel: this.channel,
      state: this.#state,
      ...(this.#detail ? { detail: this.#detail } : {}),
      ...(Number.isFinite(since.getTime()) ? { since: since.toISOString() } : {}),
    };
  }
}
