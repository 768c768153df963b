// The TikTok LIVE event source: keeps one connection up, reconnects with backoff, emits normalised events.
import type { SourceStatus, StreamEvent, StreamUser } from '../../../shared/protocol/index.js';
import { backoffDelay } from '../../../shared/timers.js';
import { errorMessage } from '../errors.js';
import { systemTimers, type TimerHandle, type Timers } from '../timers.js';
import { firstCount, own } from './fields.js';
import { GiftStreaks } from './gift-streaks.js';
import { RecentIds } from './recent-ids.js';
import {
  LikeCounter,
  messageId,
  normaliseChat,
  normaliseFollow,
  normaliseGift,
  normaliseShare,
  normaliseSubscribe,
  normaliseViewer,
} from './tiktok-normalise.js';

/**
 * What the source needs of a connection: tiktok-live-connector's `TikTokLiveConnection` through
 * the adapter in tiktok-connection.ts, or a plain EventEmitter in tests.
 */
export interface LiveConnection {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  connect(): Promise<unknown>;
  disconnect(): Promise<unknown> | undefined;
  removeAllListeners(): unknown;
}
export type ConnectionFactory = (username: string) => LiveConnection;

export type SourceState = SourceStatus['state'];
export type { SourceStatus };

/** Why a connect failed, as far as retrying is concerned. */
type FailureKind = 'rate-limited' | 'offline' | 'other';

/** Thrown by a connection adapter that knows precisely why it failed. */
export class LiveSourceError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** A server-given wait (Retry-After), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'LiveSourceError';
  }
}

/** Classifies any error: the adapter's own, or by the library's class names and messages. */
export function classifyFailure(error: unknown): { kind: FailureKind; retryAfterMs?: number } {
  if (error instanceof LiveSourceError)
    return { kind: error.kind, ...(error.retryAfterMs ? { retryAfterMs: error.retryAfterMs } : {}) };
  const name = error instanceof Error ? error.constructor.name : '';
  const message = errorMessage(error);
  const retryAfterMs = firstCount(own(error, 'retryAfter'));
  if (
    name === 'SignatureRateLimitError' ||
    own(error, 'reason') === 'Rate Limited' ||
    /rate.?limit|too many requests|\b429\b/i.test(message)
  )
    return { kind: 'rate-limited', ...(retryAfterMs ? { retryAfterMs } : {}) };
  if (name === 'UserOfflineError' || /isn't online|is offline|not (currently )?live/i.test(message))
    return { kind: 'offline' };
  return { kind: 'other' };
}

export interface BackoffOptions {
  /** First retry after an ordinary failure. */
  initialMs: number;
  /** Ceiling of the ordinary exponential backoff. */
  maxMs: number;
  /** First wait after a rate-limit error; doubles on each one in a row. */
  rateLimitMs: number;
  /** Ceiling of the rate-limit backoff. */
  rateLimitMaxMs: number;
  /** How often to look again while the streamer is not live. */
  offlineMs: number;
  /** A connection that stayed up this long resets the backoff. */
  stableMs: number;
  /** A connect that neither succeeds nor fails within this is abandoned. */
  connectTimeoutMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialMs: 1000,
  maxMs: 60_000,
  rateLimitMs: 60_000,
  rateLimitMaxMs: 15 * 60_000,
  offlineMs: 60_000,
  stableMs: 30_000,
  connectTimeoutMs: 30_000,
};

export interface TikTokSourceOptions {
  /** The streamer's TikTok username, with or without `@`. */
  username: string;
  createConnection: ConnectionFactory;
  onEvent: (event: StreamEvent) => void;
  onStatus?: (status: SourceStatus) => void;
  log?: (line: string) => void;
  timers?: Timers;
  /** Uniform in [0, 1): the jitter. */
  random?: () => number;
  backoff?: Partial<BackoffOptions>;
  giftStreakTimeoutMs?: number;
  dedupeCapacity?: number;
}

/** Delay before retry number `attempt` (1-based): exponential, capped, with ±25 % jitter. */
export function retryDelay(
  kind: FailureKind,
  attempt: number,
  backoff: BackoffOptions,
  random: () => number,
  retryAfterMs = 0,
): number {
  // Jitter spreads reconnects of many daemons after a TikTok outage; never below a server's Retry-After.
  const delay =
    kind === 'rate-limited'
      ? backoffDelay(
          attempt,
          { initialMs: backoff.rateLimitMs, maxMs: backoff.rateLimitMaxMs, jitter: 0.25 },
          random,
        )
      : kind === 'offline'
        ? backoffDelay(1, { initialMs: backoff.offlineMs, maxMs: backoff.offlineMs, jitter: 0.25 }, random)
        : backoffDelay(attempt, { initialMs: backoff.initialMs, maxMs: backoff.maxMs, jitter: 0.25 }, random);
  return Math.max(delay, retryAfterMs);
}

export class TikTokSource {
  readonly username: string;
  private state: SourceState = 'disconnected';
  private running = false;
  private connection: LiveConnection | undefined;
  /** Increments with every connection; listeners of an older one are ignored. */
  private generation = 0;
  private attempts = 0;
  private rateLimitStreak = 0;
  private connectedAt: number | undefined;
  private lastError: { message: string; at: number } | undefined;
  private retryTimer: TimerHandle | undefined;
  private retryAt: number | undefined;
  private connectTimer: TimerHandle | undefined;
  private lastViewerCount: number | undefined;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly backoff: BackoffOptions;
  private readonly seen: RecentIds;
  private readonly likes = new LikeCounter();
  private readonly streaks: GiftStreaks;
  private readonly host: StreamUser;

  constructor(private readonly options: TikTokSourceOptions) {
    this.username = options.username.trim().replace(/^@/, '');
    if (!/^[A-Za-z0-9._]{1,64}$/.test(this.username)) throw new RangeError('not a TikTok username');
    this.timers = options.timers ?? systemTimers();
    this.random = options.random ?? Math.random;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.seen = new RecentIds(options.dedupeCapacity ?? 5000);
    this.streaks = new GiftStreaks((event) => this.deliver(event), this.timers, {
      ...(options.giftStreakTimeoutMs ? { timeoutMs: options.giftStreakTimeoutMs } : {}),
    });
    this.host = { uniqueId: this.username, nickname: this.username };
  }

  status(): SourceStatus {
    const now = this.timers.now();
    return {
      source: 'tiktok',
      username: this.username,
      state: this.state,
      attempts: this.attempts,
      ...(this.lastError
        ? { lastError: this.lastError.message, lastErrorAt: this.isoAt(this.lastError.at, now) }
        : {}),
      ...(this.state === 'connected' && this.connectedAt !== undefined
        ? { connectedSince: this.isoAt(this.connectedAt, now) }
        : {}),
      ...(this.retryAt !== undefined ? { retryInMs: Math.max(0, this.retryAt - now) } : {}),
    };
  }

  /** Starts connecting; a no-op when already started. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempts = 0;
    this.rateLimitStreak = 0;
    this.connect();
  }

  /** Disconnects for good and emits any gift streak still in progress. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.clearRetry();
    const connection = this.detach();
    this.setState('disconnected');
    this.streaks.flushAll();
    await this.safeDisconnect(connection);
  }

  private connect(): void {
    this.clearRetry();
    const generation = ++this.generation;
    let connection: LiveConnection;
    try {
      connection = this.options.createConnection(this.username);
    } catch (error) {
      this.fail(error, 'could not create the connection');
      return;
    }
    this.connection = connection;
    // A retry keeps saying `reconnecting` (or `offline`) until it succeeds.
    if (this.state === 'disconnected') this.setState('connecting');
    this.listen(connection, generation);
    this.connectTimer = this.timers.setTimeout(() => {
      if (generation !== this.generation) return;
      this.fail(new Error(`no answer within ${this.backoff.connectTimeoutMs} ms`), 'connect timed out');
    }, this.backoff.connectTimeoutMs);
    connection.connect().then(
      () => {
        if (generation !== this.generation || !this.running) return;
        this.clearConnectTimer();
        this.connectedAt = this.timers.now();
        this.rateLimitStreak = 0;
        this.likes.reset();
        this.lastViewerCount = undefined;
        this.setState('connected');
        this.log(`connected to @${this.username}`);
      },
      (error: unknown) => {
        if (generation !== this.generation || !this.running) return;
        this.fail(error, 'connect failed');
      },
    );
  }

  private listen(connection: LiveConnection, generation: number): void {
    const current = () => generation === this.generation && this.running;
    const on = (name: string, handle: (payload: unknown) => void) =>
      connection.on(name, (payload: unknown) => {
        if (!current()) return;
        try {
          const id = messageId(payload);
          if (id !== undefined && this.seen.seen(id)) return;
          handle(payload);
        } catch (error) {
          // A payload this code does not understand must not take the source down.
          this.recordError(error, `could not read a ${name} message`);
        }
      });
    on('gift', (p) => {
      const gift = normaliseGift(p);
      if (gift) this.streaks.push(gift);
    });
    on('like', (p) => this.deliver(this.likes.next(p)));
    on('chat', (p) => this.deliver(normaliseChat(p)));
    on('follow', (p) => this.deliver(normaliseFollow(p)));
    on('share', (p) => this.deliver(normaliseShare(p)));
    on('subNotify', (p) => this.deliver(normaliseSubscribe(p)));
    on('roomUser', (p) => {
      const event = normaliseViewer(p, this.host);
      // The count is repeated every few seconds; only a change is news.
      if (!event || event.data.viewerCount === this.lastViewerCount) return;
      this.lastViewerCount = event.data.viewerCount;
      this.deliver(event);
    });
    connection.on('streamEnd', () => {
      if (!current()) return;
      this.lostConnection('offline', 'the live stream ended');
    });
    connection.on('disconnected', (info: unknown) => {
      if (!current() || this.state !== 'connected') return;
      const code = firstCount(own(info, 'code'));
      const reason = own(info, 'reason');
      const detail = [code, typeof reason === 'string' && reason ? reason : undefined]
        .filter(Boolean)
        .join(' ');
      this.lostConnection('other', `disconnected${detail ? ` (${detail})` : ''}`);
    });
    connection.on('error', (info: unknown) => {
      if (!current()) return;
      // Connect failures arrive here too, then as the rejected promise; the rejection decides.
      const exception = own(info, 'exception');
      const what = own(info, 'info');
      this.recordError(exception ?? info, typeof what === 'string' ? what : 'connection error');
    });
  }

  private lostConnection(kind: FailureKind, message: string): void {
    const stable =
      this.connectedAt !== undefined && this.timers.now() - this.connectedAt >= this.backoff.stableMs;
    if (stable) this.attempts = 0;
    this.lastError = { message, at: this.timers.now() };
    this.scheduleRetry(kind, 0, message);
  }

  private fail(error: unknown, context: string): void {
    this.recordError(error, context);
    const { kind, retryAfterMs } = classifyFailure(error);
    this.scheduleRetry(kind, retryAfterMs ?? 0, this.lastError?.message ?? context);
  }

  private scheduleRetry(kind: FailureKind, retryAfterMs: number, why: string): void {
    const connection = this.detach();
    void this.safeDisconnect(connection);
    if (!this.running) return;
    this.attempts++;
    if (kind === 'rate-limited') this.rateLimitStreak++;
    else this.rateLimitStreak = 0;
    const delay = retryDelay(
      kind,
      kind === 'rate-limited' ? this.rateLimitStreak : this.attempts,
      this.backoff,
      this.random,
      retryAfterMs,
    );
    this.retryAt = this.timers.now() + delay;
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = undefined;
      this.retryAt = undefined;
      if (this.running) this.connect();
    }, delay);
    this.setState(kind === 'offline' ? 'offline' : 'reconnecting');
    this.log(
      `${why}; ${kind === 'offline' ? 'looking again' : 'reconnecting'} in ${(delay / 1000).toFixed(1)} s`,
    );
  }

  /** Stops listening to the current connection and forgets it. */
  private detach(): LiveConnection | undefined {
    this.generation++;
    this.clearConnectTimer();
    this.connectedAt = undefined;
    const connection = this.connection;
    this.connection = undefined;
    return connection;
  }

  private async safeDisconnect(connection: LiveConnection | undefined): Promise<void> {
    if (!connection) return;
    try {
      await connection.disconnect();
    } catch {
      // Already closed: nothing to release.
    }
    connection.removeAllListeners();
  }

  private deliver(event: StreamEvent | undefined): void {
    if (!event) return;
    try {
      this.options.onEvent(event);
    } catch (error) {
      this.recordError(error, 'event handler failed');
    }
  }

  private recordError(error: unknown, context: string): void {
    const detail = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
    const message = detail ? `${context}: ${detail}` : context;
    this.lastError = { message: message.slice(0, 500), at: this.timers.now() };
    this.log(message);
    this.notify();
  }

  private clearRetry(): void {
    if (this.retryTimer) this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryAt = undefined;
  }

  private clearConnectTimer(): void {
    if (this.connectTimer) this.timers.clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
  }

  private setState(state: SourceState): void {
    if (this.state === state) return;
    this.state = state;
    this.notify();
  }

  private notify(): void {
    this.options.onStatus?.(this.status());
  }

  private log(line: string): void {
    this.options.log?.(`tiktok @${this.username}: ${line}`);
  }

  /** Converts a time on the injected clock to wall-clock ISO text. */
  private isoAt(at: number, now: number): string {
    return new Date(Date.now() - (now - at)).toISOString();
  }
}
