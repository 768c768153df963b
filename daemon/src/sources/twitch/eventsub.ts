// A small EventSub WebSocket client (Twitch's EventSub WebSocket reference): one connection, the
// channel's follows, subscriptions, cheers and raids subscribed through Helix at each session_welcome,
// the keepalive watched, session_reconnect followed without losing or doubling an event, revocations
// reported. Written on `ws` rather than @twurple/eventsub-ws, whose EventSubWsListener throws an uncaught
// exception on a malformed message (non-JSON, `metadata: null`) and so would end the daemon: here every
// frame is validated, and one that does not fit is dropped with its reason.

import * as v from 'valibot';
import WebSocket from 'ws';
import { NOT_JSON, parseJsonWith, parseWith, type StreamEvent } from '../../../../shared/protocol/index.js';
import { backoffDelay, formatWait } from '../../../../shared/timers.js';
import { errorMessage } from '../../errors.js';
import { systemTimers, type TimerHandle, type Timers } from '../../timers.js';
import { RecentIds } from '../recent-ids.js';
import { mapNotification } from './eventsub-map.js';
import { type Helix, HelixError } from './helix.js';

export type EventSubState = 'connecting' | 'connected' | 'reconnecting' | 'error';

export interface EventSubOptions {
  /** OVERLAY_TWITCH_EVENTSUB_URL (`wss://eventsub.wss.twitch.tv/ws` by default). */
  url: string;
  /** Creates the subscriptions (Helix with the signed-in user's token). */
  helix: Pick<Helix, 'subscribe'>;
  /** The channel's user id. */
  broadcasterId: string;
  /** The signed-in user's id (a moderator of the channel, or the broadcaster). */
  userId: string;
  onEvent(event: StreamEvent): void;
  /** `connected` with a detail: some types are not received (which, and why). */
  onState(state: EventSubState, detail?: string): void;
  log(line: string): void;
  timers?: Timers;
  /** Uniform in [0, 1): the jitter of reconnects. */
  random?: () => number;
  /** Added to the session's keepalive_timeout_seconds before a silent connection counts as lost (default 5 s). */
  keepaliveMarginMs?: number;
}

/** What is subscribed at each new session (`channel.follow` is version 2). */
export const EVENTSUB_SUBSCRIPTIONS: readonly {
  type: string;
  version: string;
  condition(ids: { broadcasterId: string; userId: string }): Record<string, string>;
}[] = [
  {
    type: 'channel.follow',
    version: '2',
    condition: (ids) => ({ broadcaster_user_id: ids.broadcasterId, moderator_user_id: ids.userId }),
  },
  {
    type: 'channel.subscribe',
    version: '1',
    condition: (ids) => ({ broadcaster_user_id: ids.broadcasterId }),
  },
  {
    type: 'channel.subscription.gift',
    version: '1',
    condition: (ids) => ({ broadcaster_user_id: ids.broadcasterId }),
  },
  {
    type: 'channel.subscription.message',
    version: '1',
    condition: (ids) => ({ broadcaster_user_id: ids.broadcasterId }),
  },
  { type: 'channel.cheer', version: '1', condition: (ids) => ({ broadcaster_user_id: ids.broadcasterId }) },
  { type: 'channel.raid', version: '1', condition: (ids) => ({ to_broadcaster_user_id: ids.broadcasterId }) },
];

/** Twitch's messages are a few kilobytes: anything far larger is not one (ws closes with 1009). */
const MAX_FRAME_BYTES = 1 << 20;
/** The keepalive Twitch uses unless asked otherwise; it also bounds the wait for the welcome. */
const DEFAULT_KEEPALIVE_S = 10;
/** Older notifications are ignored: Twitch's advice against replayed messages. */
const MAX_AGE_MS = 10 * 60_000;
const BACKOFF = { initialMs: 1000, maxMs: 60_000, jitter: 0.25 };
const CONNECT_AGAIN = 'run "overlay-daemon connect twitch" again';

/** Twitch's close codes (EventSub WebSocket reference, "Close message"). */
const CLOSE_REASONS: Record<number, string> = {
  1006: 'connection lost',
  1009: 'a message was too large',
  4000: 'Twitch had an internal error',
  4001: 'the client sent a message, which is not allowed',
  4002: 'no answer to a ping',
  4003: 'connection unused: nothing subscribed in time',
  4004: 'the reconnect took too long',
  4005: 'network timeout',
  4006: 'network error',
  4007: 'invalid reconnect URL',
};

// The messages, one schema for each `metadata.message_type` (the discriminant), checked in two steps
// so that a reason names the field at fault.
const nonEmpty = v.pipe(v.string(), v.minLength(1));
const MESSAGE_TYPES = [
  'session_welcome',
  'session_keepalive',
  'notification',
  'session_reconnect',
  'revocation',
] as const;
const Envelope = v.object({
  metadata: v.object({
    message_id: nonEmpty,
    message_type: v.picklist(MESSAGE_TYPES, `must be one of ${MESSAGE_TYPES.join(', ')}`),
    // RFC 3339 with nanoseconds: `2023-07-19T14:56:51.634234626Z`.
    message_timestamp: v.pipe(
      v.string(),
      v.check((text) => Number.isFinite(Date.parse(text)), 'must be an RFC 3339 time'),
    ),
  }),
  payload: v.unknown(),
});
const Subscription = v.object({ id: v.string(), type: nonEmpty, version: v.string(), status: v.string() });
const PAYLOADS = {
  session_welcome: v.object({
    session: v.object({
      id: nonEmpty,
      keepalive_timeout_seconds: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(600)),
    }),
  }),
  session_keepalive: v.object({}),
  notification: v.object({ subscription: Subscription, event: v.looseObject({}) }),
  session_reconnect: v.object({ session: v.object({ reconnect_url: v.pipe(v.string(), v.url()) }) }),
  revocation: v.object({ subscription: Subscription }),
} satisfies Record<(typeof MESSAGE_TYPES)[number], v.GenericSchema>;

type Payloads = { [K in keyof typeof PAYLOADS]: v.InferOutput<(typeof PAYLOADS)[K]> };
/** A validated message, discriminated by `type`. */
export type EventSubMessage = {
  [K in keyof Payloads]: { type: K; id: string; timestamp: number; payload: Payloads[K] };
}[keyof Payloads];

/** One frame's text → a validated message, or why it is not one (naming the field at fault). Never throws. */
export function parseEventSubFrame(
  text: string,
): { ok: true; message: EventSubMessage } | { ok: false; error: string } {
  const envelope = parseJsonWith(Envelope, text);
  if (!envelope.ok) return { ok: false, error: envelope.error === NOT_JSON ? 'not JSON' : envelope.error };
  const { metadata, payload } = envelope.value;
  const parsed = parseWith(PAYLOADS[metadata.message_type], payload);
  if (!parsed.ok) return { ok: false, error: `${metadata.message_type}: payload.${parsed.error}` };
  return {
    ok: true,
    message: {
      type: metadata.message_type,
      id: metadata.message_id,
      timestamp: Date.parse(metadata.message_timestamp),
      payload: parsed.value,
    } as EventSubMessage,
  };
}

/** Twitch may send a plain ws:// address only from a loopback fake, like the configured one. */
function allowedReconnectUrl(text: string): boolean {
  const url = new URL(text);
  return url.protocol === 'wss:' || (url.protocol === 'ws:' && /^127\.\d+\.\d+\.\d+$/.test(url.hostname));
}

interface Connection {
  ws: WebSocket;
  /** Set by its session_welcome. */
  sessionId?: string;
  /** Silence longer than this means the connection is lost. */
  silenceMs: number;
  timer?: TimerHandle;
  /** Closed on purpose: its close is not a loss. */
  retired: boolean;
  /** The last error seen on it, for the log. */
  lastError?: string;
}

interface Problem {
  reason: string;
  /** Only a new sign-in mends it. */
  signIn: boolean;
}

export class EventSubClient {
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #marginMs: number;
  readonly #seen = new RecentIds(2000);
  readonly #subscribed = new Set<string>();
  /** EventSub types not received, and why. */
  readonly #problems = new Map<string, Problem>();
  #running = false;
  /** The connection in use (before its welcome too). */
  #live: Connection | undefined;
  /** The one opened for a session_reconnect: its welcome makes it the live one. */
  #next: Connection | undefined;
  /** Connections being closed. */
  readonly #closing = new Set<Connection>();
  /** Changes with each fresh session (not with a reconnect, which carries the subscriptions over). */
  #session = 0;
  #attempt = 0;
  #retryTimer: TimerHandle | undefined;

  constructor(private readonly options: EventSubOptions) {
    this.#timers = options.timers ?? systemTimers();
    this.#random = options.random ?? Math.random;
    this.#marginMs = options.keepaliveMarginMs ?? 5000;
  }

  /** Connects (and keeps reconnecting); never throws. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#attempt = 0;
    this.options.onState('connecting');
    this.#connectFresh();
  }

  /** Closes every connection; resolves once they are closed. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#retryTimer) this.#timers.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const open = [this.#live, this.#next, ...this.#closing].filter((c): c is Connection => c !== undefined);
    this.#live = undefined;
    this.#next = undefined;
    this.#subscribed.clear();
    await Promise.all([...open.map((c) => this.#close(c, 'stopping')), ...this.#subscribing]);
  }

  /** The types whose subscription succeeded in the current session (`channel.cheer`, …). */
  subscribed(): ReadonlySet<string> {
    return this.#subscribed;
  }

  #log(line: string): void {
    this.options.log(`[twitch] EventSub: ${line}`);
  }

  #connectFresh(): void {
    this.#session++;
    try {
      this.#live = this.#open(this.options.url);
    } catch (err) {
      this.#retry(`cannot connect to ${this.options.url}: ${errorMessage(err)}`);
    }
  }

  #open(url: string): Connection {
    const ws = new WebSocket(url, { handshakeTimeout: 10_000, maxPayload: MAX_FRAME_BYTES });
    const conn: Connection = { ws, silenceMs: DEFAULT_KEEPALIVE_S * 1000 + this.#marginMs, retired: false };
    this.#watch(conn);
    ws.on('message', (data, isBinary) => this.#onFrame(conn, data, isBinary));
    ws.on('error', (err) => {
      conn.lastError = errorMessage(err);
    });
    ws.on('close', (code, reason) => this.#onClose(conn, code, reason.toString()));
    return conn;
  }

  /** (Re)starts the silence timer: any message, keepalive or not, shows the connection alive. */
  #watch(conn: Connection): void {
    if (conn.timer) this.#timers.clearTimeout(conn.timer);
    conn.timer = this.#timers.setTimeout(() => {
      conn.timer = undefined;
      conn.lastError = `nothing heard for ${formatWait(conn.silenceMs)}`;
      conn.ws.terminate();
    }, conn.silenceMs);
  }

  #unwatch(conn: Connection): void {
    if (conn.timer) this.#timers.clearTimeout(conn.timer);
    conn.timer = undefined;
  }

  /** Closes a connection on purpose; resolves once it is closed (a stubborn one is cut after 2 s). */
  #close(conn: Connection, reason: string): Promise<void> {
    conn.retired = true;
    this.#unwatch(conn);
    if (conn.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    this.#closing.add(conn);
    return new Promise((resolve) => {
      const cut = setTimeout(() => conn.ws.terminate(), 2000).unref();
      conn.ws.once('close', () => {
        clearTimeout(cut);
        this.#closing.delete(conn);
        resolve();
      });
      conn.ws.close(1000, reason);
    });
  }

  #onFrame(conn: Connection, data: WebSocket.RawData, isBinary: boolean): void {
    try {
      this.#handleFrame(conn, data, isBinary);
    } catch (err) {
      // Whatever goes wrong with one message stays with it: the connection and the daemon go on.
      this.#log(`handling a message failed: ${errorMessage(err)}`);
    }
  }

  #handleFrame(conn: Connection, data: WebSocket.RawData, isBinary: boolean): void {
    if (!this.#running) return;
    if (!conn.retired) this.#watch(conn);
    if (isBinary) {
      this.#log('dropped a message: a binary frame');
      return;
    }
    const bytes = Array.isArray(data)
      ? Buffer.concat(data)
      : Buffer.isBuffer(data)
        ? data
        : Buffer.from(new Uint8Array(data));
    const text = bytes.toString('utf8');
    const parsed = parseEventSubFrame(text);
    if (!parsed.ok) {
      this.#log(`dropped a message: ${parsed.error}`);
      return;
    }
    const message = parsed.message;
    // A connection being closed may still deliver what was in flight; nothing else of it counts.
    if (conn.retired && message.type !== 'notification') return;
    switch (message.type) {
      case 'session_welcome':
        this.#onWelcome(conn, message.payload.session);
        return;
      case 'session_keepalive':
        return;
      case 'notification':
        this.#onNotification(message.id, message.timestamp, message.payload);
        return;
      case 'session_reconnect':
        this.#onReconnect(conn, message.payload.session.reconnect_url);
        return;
      case 'revocation':
        this.#onRevocation(message.payload.subscription);
        return;
    }
  }

  #onWelcome(conn: Connection, session: { id: string; keepalive_timeout_seconds: number }): void {
    if (conn.sessionId) {
      this.#log('dropped a message: a second session_welcome on one connection');
      return;
    }
    conn.sessionId = session.id;
    conn.silenceMs = session.keepalive_timeout_seconds * 1000 + this.#marginMs;
    this.#watch(conn);
    if (conn === this.#next) {
      // The new connection is ready: the old one goes, the subscriptions stay (Twitch moved them).
      const old = this.#live;
      this.#live = conn;
      this.#next = undefined;
      if (old) void this.#close(old, 'reconnected');
      this.#log('moved to the connection Twitch asked for; subscriptions carried over');
      return;
    }
    if (conn === this.#live) {
      const subscribing = this.#subscribeAll(session.id)
        .catch((err: unknown) => this.#log(`subscribing failed: ${errorMessage(err)}`))
        .finally(() => this.#subscribing.delete(subscribing));
      this.#subscribing.add(subscribing);
    }
  }

  /** Subscription requests under way: stop() waits for them, so none reaches Twitch after it resolved. */
  readonly #subscribing = new Set<Promise<void>>();

  async #subscribeAll(sessionId: string): Promise<void> {
    const session = this.#session;
    const current = () => this.#running && this.#session === session;
    this.#subscribed.clear();
    this.#problems.clear();
    const ids = { broadcasterId: this.options.broadcasterId, userId: this.options.userId };
    const failures = await Promise.all(
      EVENTSUB_SUBSCRIPTIONS.map(async ({ type, version, condition }) => {
        const result = await this.options.helix
          .subscribe(type, version, condition(ids), sessionId)
          .catch((err: unknown) => ({
            ok: false as const,
            error: new HelixError('unreachable', errorMessage(err)),
          }));
        if (!current()) return undefined;
        if (result.ok) {
          this.#subscribed.add(type);
          return undefined;
        }
        this.#log(`subscribing to ${type} failed: ${result.error.message}`);
        this.#problems.set(type, problemOf(result.error));
        return result.error;
      }),
    );
    if (!current()) return;
    const failed = failures.filter((f): f is HelixError => f !== undefined);
    if (failed.length < EVENTSUB_SUBSCRIPTIONS.length) {
      this.#attempt = 0;
      this.options.onState('connected', this.#detail());
      return;
    }
    // Nothing to listen to (Twitch would close the connection as unused).
    this.#closeAll('nothing subscribed');
    if (failed.every((f) => f.permanent)) {
      this.#log('nothing could be subscribed; not retrying until the sign-in changes');
      this.options.onState('error', this.#detail());
      return;
    }
    this.#retry(`nothing could be subscribed (${failed[0]?.message ?? 'unknown'})`);
  }

  #onNotification(
    id: string,
    timestamp: number,
    payload: { subscription: { type: string }; event: Record<string, unknown> },
  ): void {
    if (Date.now() - timestamp > MAX_AGE_MS) {
      this.#log(`dropped a ${payload.subscription.type} notification sent more than 10 minutes ago`);
      return;
    }
    // Twitch delivers at least once: a message sent again keeps its id.
    if (this.#seen.seen(id)) return;
    const mapped = mapNotification(payload.subscription.type, payload.event);
    if ('drop' in mapped) {
      this.#log(`dropped a notification: ${mapped.drop}`);
      return;
    }
    this.options.onEvent(mapped.event);
  }

  #onReconnect(conn: Connection, reconnectUrl: string): void {
    if (conn !== this.#live || !conn.sessionId) {
      this.#log('dropped a message: session_reconnect on a connection not in use');
      return;
    }
    if (!allowedReconnectUrl(reconnectUrl)) {
      this.#log(`dropped a message: session_reconnect to a plain address off this machine (${reconnectUrl})`);
      return;
    }
    if (this.#next) void this.#close(this.#next, 'superseded');
    // The old connection now only finishes what was in flight: its silence is no longer a loss.
    this.#unwatch(conn);
    try {
      this.#next = this.#open(reconnectUrl);
    } catch (err) {
      this.#log(`cannot open the connection Twitch asked for (${errorMessage(err)}); staying on this one`);
      this.#watch(conn);
    }
  }

  #onRevocation(subscription: { type: string; status: string }): void {
    const { type, status } = subscription;
    this.#subscribed.delete(type);
    this.#problems.set(type, {
      reason: `ended by Twitch: ${status}`,
      signIn: status === 'authorization_revoked',
    });
    this.#log(`Twitch ended the ${type} subscription (${status})`);
    this.options.onState('connected', this.#detail());
  }

  #onClose(conn: Connection, code: number, reason: string): void {
    this.#unwatch(conn);
    if (!this.#running || conn.retired) return;
    const meaning = CLOSE_REASONS[code];
    const why =
      conn.lastError && (code === 1006 || !meaning)
        ? conn.lastError
        : `closed with ${code}${meaning ? ` (${meaning})` : reason ? ` (${reason})` : ''}`;
    if (conn === this.#next) {
      // The reconnect failed: start afresh (the old session's subscriptions end with it).
      this.#closeAll('reconnecting');
      this.#retry(`the connection Twitch asked for failed: ${why}`);
      return;
    }
    if (conn !== this.#live) return;
    this.#live = undefined;
    // Mid-reconnect the new connection takes over once welcomed.
    if (this.#next) {
      this.#log(`the old connection closed before the new one was ready (${why})`);
      return;
    }
    this.#retry(why);
  }

  /** Closes the connection in use and the one opened for a reconnect, if any. */
  #closeAll(reason: string): void {
    for (const conn of [this.#live, this.#next]) if (conn) void this.#close(conn, reason);
    this.#live = undefined;
    this.#next = undefined;
  }

  /** The session is gone, and its subscriptions with it: a fresh connection after a backoff. */
  #retry(why: string): void {
    // A subscription round still under way belongs to the session that is gone.
    this.#session++;
    this.#subscribed.clear();
    this.#problems.clear();
    this.#attempt++;
    const delay = backoffDelay(this.#attempt, BACKOFF, this.#random);
    this.#log(`${why}; reconnecting in ${formatWait(delay)}`);
    this.options.onState('reconnecting', `${why}; retrying in ${formatWait(delay)}`);
    this.#retryTimer = this.#timers.setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#running) this.#connectFresh();
    }, delay);
  }

  /** The types not received and why, grouped by reason: `channel.cheer (the sign-in lacks …)`. */
  #detail(): string | undefined {
    if (this.#problems.size === 0) return undefined;
    const byReason = new Map<string, string[]>();
    for (const [type, { reason }] of this.#problems)
      byReason.set(reason, [...(byReason.get(reason) ?? []), type]);
    const parts = [...byReason].map(([reason, types]) => `${types.join(', ')} (${reason})`);
    const signIn = [...this.#problems.values()].some((p) => p.signIn);
    return `not receiving ${parts.join(', ')}${signIn ? `: ${CONNECT_AGAIN}` : ''}`;
  }
}

function problemOf(error: HelixError): Problem {
  if (error.code === 'missing_scope' && error.scope)
    return { reason: `the sign-in lacks the scope ${error.scope}`, signIn: true };
  return { reason: error.message, signIn: false };
}
