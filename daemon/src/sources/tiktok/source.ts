// The TikTok LIVE event source: keeps one connection up, reconnects with backoff, emits normalised events.
import type { SourceStatus, StreamEvent, StreamUser } from '../../../../shared/protocol/index.js';
import { backoffDelay, formatWait } from '../../../../shared/timers.js';
import { DaemonError, type DaemonErrorCode, errorMessage } from '../../errors.js';
import { systemTimers, type TimerHandle, type Timers } from '../../timers.js';
import { RecentIds } from '../recent-ids.js';
import { firstCount, own } from './fields.js';
import { GiftStreaks } from './gift-streaks.js';
import {
  LikeCounter,
  messageId,
  normaliseChat,
  normaliseFollow,
  normaliseGift,
  normaliseShare,
  normaliseSubscribe,
  normaliseViewer,
} from './map.js';

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
/**
 * `recent`: also emit the room's recent messages the platform sends with the connection (a reconnect
 * asks for them, to give back what was missed meanwhile; a first connection does not: they are old).
 */
export type ConnectionFactory = (username: string, options?: { recent?: boolean }) => LiveConnection;

/** Connection losses kept for /status. */
const GAPS_KEPT = 20;

export type TikTokConnectionState = SourceStatus['state'];
export type { SourceStatus };

/** Why a connect failed, as far as retrying and telling the streamer are concerned. */
type FailureKind = 'rate-limited' | 'offline' | 'not-found' | 'network' | 'other';

/** Error codes of a machine that cannot reach the internet (or TikTok). */
const NETWORK_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'ECONNABORTED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The error and every error it wraps (`cause`, the library's composite `config.requestErrs`), at most 20. */
function errorChain(error: unknown): unknown[] {
  const out: unknown[] = [];
  const queue = [error];
  while (queue.length > 0 && out.length < 20) {
    const next = queue.shift();
    if (next === undefined || next === null || out.includes(next)) continue;
    out.push(next);
    queue.push(own(next, 'cause'));
    const wrapped = own(own(next, 'config'), 'requestErrs') ?? own(next, 'errors');
    if (Array.isArray(wrapped)) queue.push(...wrapped);
  }
  return out;
}

function isNetworkFailure(error: unknown): boolean {
  const chain = errorChain(error);
  return chain.some((e) => {
    const code = own(e, 'code');
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    return /getaddrinfo|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|network is unreachable|fetch failed|socket hang up/i.test(
      errorMessage(e),
    );
  });
}

/** One sentence a streamer understands, for the log and the dashboard. */
function describeFailure(kind: FailureKind, error: unknown, username: string): string {
  switch (kind) {
    case 'network':
      return 'cannot reach TikTok (is this computer online?)';
    case 'not-found':
      return `TikTok has no user @${username} (check the spelling of --tiktok)`;
    case 'offline':
      return `@${username} is not live right now`;
    case 'rate-limited':
      return 'the sign server that TikTok connections go through refused for now (its free daily limit; a sign key lifts it: --tiktok-sign-key)';
    case 'other': {
      const first = errorMessage(error).split('\n')[0]?.trim() ?? '';
      return `could not connect to TikTok${first ? `: ${first.slice(0, 160)}` : ''}`;
    }
  }
}

/** Thrown by a connection adapter that knows precisely why it failed. */
export class LiveSourceError extends DaemonError {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** A server-given wait (Retry-After), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(FAILURE_CODES[kind], message);
    this.name = 'LiveSourceError';
  }
}

/** Each kind of failure as one of the daemon's error codes. */
const FAILURE_CODES: Record<FailureKind, DaemonErrorCode> = {
  'rate-limited': 'rate_limited',
  offline: 'offline',
  'not-found': 'not_found',
  network: 'unreachable',
  other: 'upstream_error',
};

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
  if (/user (not found|does ?n.t exist)|no such user|couldn.t find (the )?user/i.test(message))
    return { kind: 'not-found' };
  if (isNetworkFailure(error)) return { kind: 'network' };
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
      : kind === 'offline' || kind === 'not-found'
        ? backoffDelay(1, { initialMs: backoff.offlineMs, maxMs: backoff.offlineMs, jitter: 0.25 }, random)
        : backoffDelay(attempt, { initialMs: backoff.initialMs, maxMs: backoff.maxMs, jitter: 0.25 }, random);
  return Math.max(delay, retryAfterMs);
}

export class TikTokSource {
  readonly username: string;
  private state: TikTokConnectionState = 'disconnected';
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
  /** When the connection was lost (on the injected clock), until a reconnect gives back what it can. */
  private lostAt: number | undefined;
  /** The reconnect under way emits the room's recent messages: those are marked `recovered`. */
  private recovering = false;
  private recoveredCount = 0;
  private readonly gaps: { at: string; durationMs: number; recovered: number }[] = [];
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
      ...(this.gaps.length ? { gaps: this.gaps.map((g) => ({ ...g })) } : {}),
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
      this.recovering = this.lostAt !== undefined;
      this.recoveredCount = 0;
      connection = this.recovering
        ? this.options.createConnection(this.username, { recent: true })
        : this.options.createConnection(this.username);
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
        if (this.lostAt !== undefined) {
          // The gap is closed: how long it was, and how much of it came back.
          this.gaps.push({
            at: this.isoAt(this.lostAt, this.connectedAt),
            durationMs: this.connectedAt - this.lostAt,
            recovered: this.recoveredCount,
          });
          if (this.gaps.length > GAPS_KEPT) this.gaps.shift();
          this.log(
            `back after ${formatWait(this.connectedAt - this.lostAt)}; ${this.recoveredCount} missed message${this.recoveredCount === 1 ? '' : 's'} recovered`,
          );
          this.lostAt = undefined;
        }
        this.recovering = false;
        this.rateLimitStreak = 0;
        this.likes.reset();
        this.lastViewerCount = undefined;
        this.setState('connected');
        this.log(`connected: events from @${this.username}'s LIVE arrive now`);
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
      this.lostConnection('other', `lost the connection to TikTok${detail ? ` (${detail})` : ''}`);
    });
    connection.on('error', (info: unknown) => {
      if (!current()) return;
      // Connect failures arrive here too (several per attempt), then as the rejected promise, which
      // says it once; only an error on a live connection is news of its own.
      if (this.state !== 'connected') return;
      const exception = own(info, 'exception');
      const what = own(info, 'info');
      this.recordError(exception ?? info, typeof what === 'string' ? what : 'connection error');
    });
  }

  private lostConnection(kind: FailureKind, message: string): void {
    // A live stream that ended is no gap: the next connection starts a new stream.
    if (kind !== 'offline') this.lostAt ??= this.timers.now();
    else this.lostAt = undefined;
    const stable =
      this.connectedAt !== undefined && this.timers.now() - this.connectedAt >= this.backoff.stableMs;
    if (stable) this.attempts = 0;
    this.lastError = { message, at: this.timers.now() };
    this.scheduleRetry(kind, 0, message);
  }

  private fail(error: unknown, _context: string): void {
    const { kind, retryAfterMs } = classifyFailure(error);
    const reason = describeFailure(kind, error, this.username);
    this.lastError = { message: reason, at: this.timers.now() };
    this.scheduleRetry(kind, retryAfterMs ?? 0, reason);
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
    // One line per attempt: what it means, and when the next try is.
    this.log(`${why}; trying again in ${formatWait(delay)}`);
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
    if (this.recovering) {
      // From the room's recent messages of a reconnect, not seen before (ids are de-duplicated).
      this.recoveredCount++;
      event = { ...event, data: { ...event.data, recovered: true } } as StreamEvent;
    }
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

  private setState(state: TikTokConnectionState): void {
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
