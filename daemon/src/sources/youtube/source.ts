// YouTube Live as one of the daemon's sources: finds the channel's live broadcast,
// reads its chat through the Data API at the interval YouTube asks for, and keeps within the daily
// quota. A handle is turned into a channel id once; `search` (100 of the day's 10,000 units) is asked
// when the source starts and then with growing waits while the channel is not live; `videos` (1 unit)
// gives the chat and, once a minute, the viewer count; each chat page costs 5 units.
import { localTime } from '../../../../shared/local-time.js';
import { backoffDelay, formatWait } from '../../../../shared/timers.js';
import { errorMessage } from '../../errors.js';
import { pollInterval, type TimerHandle } from '../../timers.js';
import { missingCredential } from '../credentials.js';
import { RecentIds } from '../recent-ids.js';
import { type EventSource, type SourceContext, type SourceReport, SourceStateTracker } from '../source.js';
import { YouTubeApi, YouTubeApiError } from './api.js';
import { mapLiveChatMessage } from './map.js';

export interface YouTubeSourceOptions {
  /** First wait before looking again for a live broadcast (1 min); doubles up to lookAgainMaxMs. */
  lookAgainMs?: number;
  /** Ceiling of those waits (30 min: at most 48 searches, 4,800 units, a day). */
  lookAgainMaxMs?: number;
  /** How long an exhausted quota waits (default: until midnight Pacific time, when Google resets it). */
  quotaBackoffMs?: number;
  /** How often the viewer count is read (1 min). */
  viewerIntervalMs?: number;
  /** The floor of YouTube's polling interval (1 s), in case it says 0. */
  minPollMs?: number;
  /** Retries after a network or server error: 1 s doubling to 60 s. */
  retryMs?: number;
  retryMaxMs?: number;
}

/** Milliseconds from `now` to the next midnight in America/Los_Angeles, when the quota resets. */
export function untilQuotaReset(now: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Los_Angeles',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    hourCycle: 'h23',
  }).formatToParts(new Date(now));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const elapsed = ((get('hour') * 60 + get('minute')) * 60 + get('second')) * 1000;
  // A few minutes past midnight: the reset is not always to the second.
  return Math.max(60_000, 24 * 3_600_000 - elapsed + 5 * 60_000);
}

export class YouTubeSource implements EventSource {
  readonly platform = 'youtube';
  readonly #state: SourceStateTracker;
  readonly #seen = new RecentIds(10_000);
  readonly #options: Required<Omit<YouTubeSourceOptions, 'quotaBackoffMs'>> & { quotaBackoffMs?: number };
  #running = false;
  #generation = 0;
  #timer: TimerHandle | undefined;
  #abort: AbortController | undefined;
  #channelId: string | undefined;
  /** The live chat being read, and where in it. */
  #chat:
    | { videoId: string; liveChatId: string; pageToken: string | undefined; backlogRead: boolean }
    | undefined;
  #lookAgainAttempt = 0;
  #retryAttempt = 0;
  #lastViewers: number | undefined;
  #viewersReadAt = 0;

  constructor(
    readonly channel: string,
    private readonly ctx: SourceContext,
    options: YouTubeSourceOptions = {},
  ) {
    this.#state = new SourceStateTracker('youtube', channel, ctx.timers, ctx.log);
    this.#options = {
      lookAgainMs: 60_000,
      lookAgainMaxMs: 30 * 60_000,
      viewerIntervalMs: 60_000,
      minPollMs: 1000,
      retryMs: 1000,
      retryMaxMs: 60_000,
      ...options,
    };
    if (channel.startsWith('UC')) this.#channelId = channel;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#state.set('connecting');
    this.#schedule(0, () => this.#step());
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#generation++;
    if (this.#timer) this.ctx.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#abort?.abort();
    this.#abort = undefined;
    this.#state.set('off');
  }

  report(): SourceReport {
    return this.#state.report();
  }

  /** The live chat being read now and the channel it belongs to (where chat sending writes), if any. */
  liveChat(): { channelId: string | undefined; liveChatId: string } | undefined {
    if (!this.#running || !this.#chat) return undefined;
    return { channelId: this.#channelId, liveChatId: this.#chat.liveChatId };
  }

  #schedule(ms: number, run: () => Promise<void>): void {
    if (!this.#running) return;
    const generation = this.#generation;
    if (this.#timer) this.ctx.timers.clearTimeout(this.#timer);
    this.#timer = this.ctx.timers.setTimeout(() => {
      this.#timer = undefined;
      if (generation !== this.#generation || !this.#running) return;
      run().catch((err) => this.ctx.log(`[youtube] ${this.channel}: ${errorMessage(err)}`));
    }, ms);
  }

  /** One step: find the channel, then its broadcast, then read its chat; each failure decides the wait. */
  async #step(): Promise<void> {
    const key = this.ctx.youtubeApiKey();
    if (!key) {
      const arrival = this.ctx.configArrival?.() ?? 'arrived';
      const ownOne = 'put your own in the dashboard (Sources → YouTube API key)';
      // Before the Gatekeeper's config arrived, no key is no error yet: it may bring one.
      if (arrival === 'waiting')
        this.#state.set('connecting', missingCredential('YouTube Data API key', arrival, ownOne));
      else if (arrival === 'unreachable')
        this.#state.set(
          'error',
          `needs a YouTube Data API key; ${missingCredential('key', arrival, ownOne)}`,
        );
      else this.#state.set('error', `needs a YouTube Data API key: ${ownOne}`);
      // Looking costs nothing (no request): the key may come with the Gatekeeper's configuration.
      this.#schedule(arrival === 'waiting' ? 1000 : 10_000, () => this.#step());
      return;
    }
    const api = new YouTubeApi({ baseUrl: this.ctx.urls.youtubeApi, apiKey: key });
    const generation = this.#generation;
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    try {
      if (!this.#channelId) {
        const id = await api.channelOfHandle(this.channel, signal);
        if (generation !== this.#generation) return;
        if (!id) {
          this.#state.set('error', `YouTube has no channel ${this.channel} (check the handle)`);
          this.#schedule(5 * 60_000, () => this.#step());
          return;
        }
        this.#channelId = id;
      }
      if (!this.#chat) {
        const videoId = await api.liveVideoOf(this.#channelId, signal);
        if (generation !== this.#generation) return;
        const video = videoId ? await api.video(videoId, signal) : undefined;
        if (generation !== this.#generation) return;
        if (!video?.liveChatId || video.ended) {
          this.#notLive();
          return;
        }
        this.#chat = {
          videoId: video.videoId,
          liveChatId: video.liveChatId,
          pageToken: undefined,
          backlogRead: false,
        };
        this.#lookAgainAttempt = 0;
        this.#viewers(video.viewers);
      }
      await this.#poll(api, signal, generation);
    } catch (err) {
      if (generation !== this.#generation || signal.aborted) return;
      this.#failed(err);
    }
  }

  async #poll(api: YouTubeApi, signal: AbortSignal, generation: number): Promise<void> {
    const chat = this.#chat;
    if (!chat) return;
    const page = await api.messages(chat.liveChatId, chat.pageToken, signal);
    if (generation !== this.#generation) return;
    this.#retryAttempt = 0;
    this.#state.set('connected');
    for (const item of page.items) {
      const result = mapLiveChatMessage(item);
      const id = 'event' in result ? result.id : result.id;
      if (id && this.#seen.seen(id)) continue;
      // The first page is what was said before we looked: remembered, not replayed.
      if (!chat.backlogRead) continue;
      if ('drop' in result) {
        if (!/is not an event/.test(result.drop))
          this.ctx.log(`[youtube] ${this.channel}: message dropped: ${result.drop}`);
        continue;
      }
      this.ctx.emit(result.event);
    }
    chat.backlogRead = true;
    if (page.nextPageToken) chat.pageToken = page.nextPageToken;
    if (page.offlineAt) {
      this.#streamEnded();
      return;
    }
    const now = this.ctx.timers.now();
    if (now - this.#viewersReadAt >= this.#options.viewerIntervalMs) {
      this.#viewersReadAt = now;
      const video = await api.video(chat.videoId, signal).catch(() => undefined);
      if (generation !== this.#generation) return;
      if (video?.ended) {
        this.#streamEnded();
        return;
      }
      this.#viewers(video?.viewers);
    }
    // As YouTube asks, kept from minPollMs to 5 min: a huge interval would overflow the timer.
    const wait = pollInterval(page.pollingIntervalMillis, this.#options.minPollMs);
    this.#schedule(wait, () => this.#step());
  }

  #viewers(viewers: number | undefined): void {
    if (viewers === undefined || viewers === this.#lastViewers) return;
    this.#lastViewers = viewers;
    this.ctx.emit({
      type: 'viewer',
      platform: 'youtube',
      user: { uniqueId: this.#channelId ?? this.channel, nickname: this.channel },
      data: { viewerCount: viewers },
    });
  }

  #notLive(): void {
    const wait = backoffDelay(
      ++this.#lookAgainAttempt,
      { initialMs: this.#options.lookAgainMs, maxMs: this.#options.lookAgainMaxMs, jitter: 0.1 },
      this.ctx.random,
    );
    this.#state.set('offline', `not live; looking again in ${formatWait(wait)}`);
    this.#schedule(wait, () => this.#step());
  }

  #streamEnded(): void {
    this.#chat = undefined;
    this.#lastViewers = undefined;
    this.ctx.streamEnded();
    this.#notLive();
  }

  #failed(err: unknown): void {
    if (!(err instanceof YouTubeApiError)) {
      this.ctx.log(`[youtube] ${this.channel}: ${errorMessage(err)}`);
      this.#retry('reconnecting', errorMessage(err));
      return;
    }
    switch (err.code) {
      case 'quota_exceeded': {
        const wait = this.#options.quotaBackoffMs ?? untilQuotaReset(Date.now());
        this.#state.set(
          'backoff',
          `YouTube API quota used up for today; trying again at ${localTime(Date.now() + wait)} (when Google resets it)`,
        );
        this.#schedule(wait, () => this.#step());
        return;
      }
      case 'chat_ended':
      case 'not_found':
        this.#streamEnded();
        return;
      case 'unauthorized':
      case 'forbidden':
        this.#state.set('error', `the YouTube API key was refused: ${err.message}`);
        this.#schedule(5 * 60_000, () => this.#step());
        return;
      case 'rate_limited':
        this.#retry('backoff', 'YouTube asked to slow down');
        return;
      default:
        this.#retry('reconnecting', err.message);
    }
  }

  #retry(state: 'reconnecting' | 'backoff', why: string): void {
    const wait = backoffDelay(
      ++this.#retryAttempt,
      { initialMs: this.#options.retryMs, maxMs: this.#options.retryMaxMs, jitter: 0.25 },
      this.ctx.random,
    );
    this.#state.set(state, `${why}; trying again in ${formatWait(wait)}`);
    this.#schedule(wait, () => this.#step());
  }
}
