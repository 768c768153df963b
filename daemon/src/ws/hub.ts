// The WebSocket side of the daemon: init handshake, one overlay per connection, broadcasts (interface §§3, 6; decisions §3).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import {
  encodeServerMessage,
  type Overlay,
  type OverlayCommandInput,
  parseClientMessage,
  type ServerMessage,
  type StreamEvent,
} from '../../../shared/protocol/index.js';
import type { PageTokens } from './page-tokens.js';
import { type ReplayEntry, ReplayLog, type ReplayStore } from './replay.js';
import { WriteTurns } from './write-turns.js';

/** Close codes of RFC 6455 §7.4.1 that the daemon uses. */
const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  policyViolation: 1008,
  tooBig: 1009,
} as const;

const MAX_MESSAGE_BYTES = 512 * 1024;
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** ws.send options for a message passed as UTF-8 bytes: still a text frame (interface §6: JSON text). */
const SEND_TEXT = { binary: false } as const;

/** The per-IP connection slots that HTTP requests share (decisions §3: 10 per address). */
interface ConnectionSlots {
  /** Takes one of the address's slots; false when none is free. */
  take(ip: string): boolean;
  /** Gives back a slot taken with `take`. */
  give(ip: string): void;
}

interface HubOptions {
  tokens: PageTokens;
  slots: ConnectionSlots;
  /** The overlay in force for an id, read at init time. */
  getOverlay: (id: string) => Overlay | undefined;
  /** How long a connection may stay without a valid `init` (decisions §3: 5 s). */
  initTimeoutMs?: number;
  /** Heartbeat period; a client that missed the previous pong is terminated. */
  pingIntervalMs?: number;
  /** A client with more than this queued is dropped rather than allowed to grow memory. */
  maxBufferedBytes?: number;
  /**
   * Connections per client address that have not sent `init` yet: a budget of their
   * own, the oldest closed (1008) to admit a new one, so idle sockets cannot lock OBS out.
   */
  maxWaitingPerIp?: number;
  /**
   * Numbers for messages, shared with the event journal so they never repeat, even
   * across restarts. Without it the hub counts from 1.
   */
  sequence?: { next(): number; peek(): number };
  /** Where kept messages outlive a restart (the journal), so a page resumes across one. */
  replayStore?: ReplayStore;
  log?: (line: string) => void;
}

/**
 * What the hub keeps per connection, beside the socket: one small object. The listeners are shared by
 * every connection (they find this state through `this`), so a thousand idle overlays cost a thousand
 * of these and no closures.
 */
interface ClientState {
  overlayId: string | undefined;
  /** The budget key: the client address (an IPv6 one through the tunnel by /64). */
  ip: string;
  alive: boolean;
  /** Counted in the address's waiting budget (no `init` yet). */
  waiting: boolean;
  /** Holds one of the address's slots (subscribed), given back on close. */
  holdsSlot: boolean;
  initTimer: NodeJS.Timeout | undefined;
  /** The connection's TCP socket, corked while this turn's messages gather (write-turns.ts). */
  socket: Duplex;
  corked: boolean;
}

/** The close reason is at most 123 bytes (RFC 6455 §5.5). */
function shortReason(reason: string): string {
  const bytes = Buffer.from(reason);
  return bytes.length <= 123
    ? reason
    : bytes
        .subarray(0, 120)
        .toString()
        .replace(/\uFFFD$/, '');
}

function ignore(): void {}

/** A kept message as it is sent again. */
function replayedMessage(entry: ReplayEntry) {
  const numbered = { seq: entry.seq, at: entry.at, replayed: true } as const;
  return entry.kind === 'event'
    ? { type: 'stream-event' as const, event: entry.event, ...numbered }
    : {
        type: 'overlay-command' as const,
        command: entry.command.command,
        widgetId: entry.command.widgetId,
        payload: entry.command.payload,
        ...numbered,
      };
}

/** The `init` message of the page protocol. */
export type PageInit = Extract<ServerMessage, { type: 'init' }>;

/** The `init` a page of this overlay gets when it opens now (and what the relay publishes as its snapshot). */
export function pageInit(overlay: Overlay): PageInit {
  const { name, width, height } = overlay;
  return { type: 'init', overlay: { name, width, height }, widgets: overlay.widgets };
}

/** A kept message as a page resuming gets it (`replayed: true`), encoded. */
function encodeReplayed(entry: ReplayEntry): string {
  return encodeServerMessage(replayedMessage(entry));
}

function closeUninitialised(ws: WebSocket): void {
  ws.close(CLOSE.policyViolation, 'init not received in time');
}

function rawToText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.from(data).toString('utf8');
}

export class Hub {
  readonly #wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    clientTracking: false,
  });
  readonly #clients = new Map<WebSocket, ClientState>();
  readonly #byOverlay = new Map<string, Set<WebSocket>>();
  /** Connections without `init`, per address, oldest first (a Set keeps insertion order). */
  readonly #waiting = new Map<string, Set<WebSocket>>();
  /**
   * The `init` reply of an overlay, encoded once for every page that opens it (overlays are replaced, never
   * changed in place, so a changed overlay is a new key): a thousand pages of one overlay share one buffer.
   */
  readonly #initReplies = new WeakMap<Overlay, Buffer>();
  readonly #commandListeners = new Set<(overlayId: string, command: OverlayCommandInput) => void>();
  /**
   * Who else reads an overlay's page messages as they are sent (the relay's publishers), per overlay. Empty
   * while no overlay is public: the hot path then checks one size and encodes nothing more.
   */
  readonly #pageObservers = new Map<string, Set<(text: string) => void>>();
  readonly #options: Required<Omit<HubOptions, 'log' | 'sequence' | 'replayStore'>> & {
    log: (line: string) => void;
  };
  readonly #sequence: { next(): number; peek(): number };
  /** The last `seq` handed out. */
  #lastSeq: number;
  readonly #replay: ReplayLog;
  readonly #heartbeat: NodeJS.Timeout;
  #closing = false;
  /** Whether a message leaves at once or with the rest of its turn (write-turns.ts). */
  readonly #turns = new WriteTurns();
  /** The listeners every connection shares; `this` is the connection. */
  readonly #listeners: {
    pong: (this: WebSocket) => void;
    message: (this: WebSocket, data: RawData, isBinary: boolean) => void;
    close: (this: WebSocket) => void;
  };

  constructor(options: HubOptions) {
    this.#options = {
      initTimeoutMs: 5000,
      pingIntervalMs: 30_000,
      maxBufferedBytes: MAX_BUFFERED_BYTES,
      maxWaitingPerIp: 10,
      log: (line) => console.error(line),
      ...options,
    };
    let counter = 0;
    this.#sequence = options.sequence ?? { next: () => ++counter, peek: () => counter + 1 };
    const first = this.#sequence.peek();
    this.#lastSeq = first - 1;
    this.#replay = new ReplayLog(first, options.replayStore);
    this.#heartbeat = setInterval(() => this.#ping(), this.#options.pingIntervalMs);
    this.#heartbeat.unref();
    const clients = this.#clients;
    const hub = this;
    this.#listeners = {
      pong() {
        const state = clients.get(this);
        if (state) state.alive = true;
      },
      message(data, isBinary) {
        const state = clients.get(this);
        if (state) hub.#onMessage(this, state, data, isBinary);
      },
      close() {
        const state = clients.get(this);
        if (state) hub.#forget(this, state);
      },
    };
  }

  /**
   * Completes an upgrade that the HTTP layer has already authorised (Host, Origin). Until it sends
   * `init` the connection counts against the address's waiting budget only; a valid `init` then takes
   * one of the address's slots (the limit of 10 that HTTP requests share).
   */
  handleUpgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    ip: string,
    /** Told of the open socket (a paired device's, to close it when the device is revoked). */
    opened?: (ws: WebSocket) => void,
  ): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.#accept(ws, ip, socket);
      opened?.(ws);
    });
  }

  #accept(ws: WebSocket, ip: string, socket: Duplex): void {
    const state: ClientState = {
      socket,
      corked: false,
      overlayId: undefined,
      ip,
      alive: true,
      waiting: true,
      holdsSlot: false,
      initTimer: setTimeout(closeUninitialised, this.#options.initTimeoutMs, ws),
    };
    this.#clients.set(ws, state);
    let waiting = this.#waiting.get(ip);
    if (!waiting) {
      waiting = new Set();
      this.#waiting.set(ip, waiting);
    }
    if (waiting.size >= this.#options.maxWaitingPerIp) {
      const oldest = waiting.values().next().value;
      if (oldest) {
        this.#stopWaiting(oldest);
        oldest.close(CLOSE.policyViolation, 'too many connections waiting for init from this address');
      }
    }
    waiting.add(ws);
    ws.on('pong', this.#listeners.pong);
    ws.on('message', this.#listeners.message);
    // ws closes with 1009 by itself when a message exceeds maxPayload; errors end in 'close'.
    ws.on('error', ignore);
    ws.on('close', this.#listeners.close);
  }

  #onMessage(ws: WebSocket, state: ClientState, data: RawData, isBinary: boolean): void {
    if (state.overlayId !== undefined) {
      // `init` is the only client message and it is sent once (interface §6.1).
      ws.close(CLOSE.policyViolation, 'unexpected message after init');
      return;
    }
    if (isBinary) {
      ws.close(CLOSE.policyViolation, 'messages are JSON text');
      return;
    }
    const parsed = parseClientMessage(rawToText(data));
    if (!parsed.ok) {
      ws.close(CLOSE.policyViolation, shortReason(`bad init: ${parsed.error}`));
      return;
    }
    const { overlayId, token, resumeFrom } = parsed.value;
    const overlay = this.#options.getOverlay(overlayId);
    if (!this.#options.tokens.consume(token, overlayId) || !overlay) {
      ws.close(CLOSE.policyViolation, 'invalid token for this overlay');
      return;
    }
    this.#stopWaiting(ws);
    if (!this.#options.slots.take(state.ip)) {
      ws.close(CLOSE.policyViolation, 'too many open connections from this address');
      return;
    }
    state.holdsSlot = true;
    clearTimeout(state.initTimer);
    state.initTimer = undefined;
    state.overlayId = overlayId;
    let set = this.#byOverlay.get(overlayId);
    if (!set) {
      set = new Set();
      this.#byOverlay.set(overlayId, set);
    }
    set.add(ws);
    let reply = this.#initReplies.get(overlay);
    if (!reply) {
      reply = Buffer.from(encodeServerMessage(pageInit(overlay)));
      this.#initReplies.set(overlay, reply);
    }
    this.#deliverOne(ws, reply);
    // All in this turn: nothing live can come between the replayed messages and `resumed`.
    if (resumeFrom !== undefined) this.#resume(ws, overlayId, resumeFrom);
  }

  /** What the page missed after `from`, each marked `replayed`, then `resumed`. */
  #resume(ws: WebSocket, overlayId: string, from: number): void {
    const { entries, gap } = this.#replay.since(overlayId, from);
    const gather = this.#turns.gather();
    for (const entry of entries) this.#deliver(ws, encodeReplayed(entry), gather);
    this.#deliver(
      ws,
      encodeServerMessage({
        type: 'resumed',
        from,
        to: Math.max(from, this.#lastSeq),
        replayed: entries.length,
        gap,
      }),
      gather,
    );
  }

  #nextSeq(): number {
    const seq = this.#sequence.next();
    this.#lastSeq = seq;
    return seq;
  }

  /** Takes a connection out of its address's waiting budget (init received, evicted or closed). */
  #stopWaiting(ws: WebSocket): void {
    const state = this.#clients.get(ws);
    if (!state?.waiting) return;
    state.waiting = false;
    const set = this.#waiting.get(state.ip);
    set?.delete(ws);
    if (set?.size === 0) this.#waiting.delete(state.ip);
  }

  #forget(ws: WebSocket, state: ClientState): void {
    clearTimeout(state.initTimer);
    this.#stopWaiting(ws);
    this.#clients.delete(ws);
    if (state.holdsSlot) {
      state.holdsSlot = false;
      this.#options.slots.give(state.ip);
    }
    if (state.overlayId === undefined) return;
    const set = this.#byOverlay.get(state.overlayId);
    set?.delete(ws);
    if (set?.size === 0) this.#byOverlay.delete(state.overlayId);
  }

  /**
   * Sends without letting a reader that has stopped reading grow the daemon's memory. A broadcast
   * passes the message already encoded as UTF-8 (`binary: false` keeps it a text frame), so that ws
   * neither measures nor encodes the string again for every client.
   */
  #deliver(ws: WebSocket, data: string | Buffer, gather: boolean): boolean {
    if (ws.readyState !== ws.OPEN) return false;
    if (ws.bufferedAmount > this.#options.maxBufferedBytes) {
      this.#options.log(`[ws] dropping a client of overlay ${this.#clients.get(ws)?.overlayId}: not reading`);
      ws.terminate();
      return false;
    }
    if (gather) {
      const state = this.#clients.get(ws);
      if (state) this.#turns.hold(state);
    }
    ws.send(data, SEND_TEXT);
    return true;
  }

  /** Sends one message to one client, at once or with its turn (write-turns.ts). */
  #deliverOne(ws: WebSocket, data: string | Buffer): boolean {
    return this.#deliver(ws, data, this.#turns.gather());
  }

  /** Sends one serialised message to every client of an overlay; returns how many got it. */
  #sendToOverlay(overlayId: string, data: Buffer, gather = this.#turns.gather()): number {
    let sent = 0;
    for (const ws of this.#byOverlay.get(overlayId) ?? []) if (this.#deliver(ws, data, gather)) sent++;
    return sent;
  }

  /** `overlay-update`: the full state, to every client of that overlay (interface §6.2). */
  broadcastOverlay(overlay: Overlay): number {
    const { id, name, width, height, widgets } = overlay;
    const text = encodeServerMessage({
      type: 'overlay-update',
      overlayId: id,
      overlay: { name, width, height },
      widgets,
    });
    if (this.#pageObservers.size !== 0) this.#observe(id, text);
    return this.#sendToOverlay(id, Buffer.from(text));
  }

  /** `stream-event`: to every subscribed client of every overlay. */
  /**
   * `late`: a caught-up event (it happened a while before it arrived, at `at`): sent marked `replayed`, so a
   * page lists it and raises no alert for it, as for anything it gets after the fact.
   */
  broadcastEvent(
    event: StreamEvent,
    seq?: number,
    at = Date.now(),
    eventJson?: string,
    options?: { late?: boolean },
  ): number {
    if (seq === undefined) seq = this.#nextSeq();
    else this.#lastSeq = Math.max(this.#lastSeq, seq);
    this.#replay.recordEvent(seq, at, event);
    const late = options?.late === true;
    // Serialised and encoded once for every client of every overlay (from the event's own JSON when
    // the caller has it: the same text as encodeServerMessage would write).
    const text =
      eventJson === undefined
        ? encodeServerMessage({ type: 'stream-event', event, seq, at, ...(late ? { replayed: true } : {}) })
        : `{"type":"stream-event","event":${eventJson},"seq":${seq},"at":${at}${late ? ',"replayed":true' : ''}}`;
    if (this.#pageObservers.size !== 0)
      for (const overlayId of this.#pageObservers.keys()) this.#observe(overlayId, text);
    const data = Buffer.from(text);
    // One decision for every client: the first event of a quiet turn reaches them all at once.
    const gather = this.#turns.gather();
    let sent = 0;
    for (const overlayId of this.#byOverlay.keys()) sent += this.#sendToOverlay(overlayId, data, gather);
    return sent;
  }

  /** `overlay-command`: to the clients of the targeted overlay. */
  sendCommand(overlayId: string, command: OverlayCommandInput): number {
    const seq = this.#nextSeq();
    const at = Date.now();
    // Kept for a page that comes back; encoded only when someone has the overlay open now.
    this.#replay.recordCommand(overlayId, seq, at, command);
    const observed = this.#pageObservers.has(overlayId);
    const text =
      observed || this.#byOverlay.get(overlayId)?.size
        ? encodeServerMessage({
            type: 'overlay-command',
            command: command.command,
            widgetId: command.widgetId,
            payload: command.payload,
            seq,
            at,
          })
        : undefined;
    if (observed && text !== undefined) this.#observe(overlayId, text);
    const sent =
      text !== undefined && this.#byOverlay.get(overlayId)?.size
        ? this.#sendToOverlay(overlayId, Buffer.from(text))
        : 0;
    for (const listener of this.#commandListeners) listener(overlayId, command);
    return sent;
  }

  /** Told of every command sent (API or rule), e.g. so `reset` also resets the state the daemon keeps. */
  onCommand(listener: (overlayId: string, command: OverlayCommandInput) => void): () => void {
    this.#commandListeners.add(listener);
    return () => this.#commandListeners.delete(listener);
  }

  /**
   * Tells `listener` every page message of the overlay as it is sent (`overlay-update`, `stream-event`,
   * `overlay-command`), once each, in order, as the JSON text a page gets, whether or not a page is open.
   */
  onPageMessage(overlayId: string, listener: (text: string) => void): () => void {
    let set = this.#pageObservers.get(overlayId);
    if (!set) {
      set = new Set();
      this.#pageObservers.set(overlayId, set);
    }
    set.add(listener);
    return () => {
      const current = this.#pageObservers.get(overlayId);
      current?.delete(listener);
      if (current?.size === 0) this.#pageObservers.delete(overlayId);
    };
  }

  #observe(overlayId: string, text: string): void {
    for (const listener of this.#pageObservers.get(overlayId) ?? []) {
      try {
        listener(text);
      } catch (err) {
        this.#options.log(`[ws] a reader of overlay ${overlayId}'s messages failed: ${String(err)}`);
      }
    }
  }

  /**
   * What a page of the overlay resuming from `from` would get, each marked `replayed`, encoded, in `seq`
   * order (the relay's catch-up after its `hello.lastSeq`); `gap` when some of it is no longer kept.
   */
  keptSince(overlayId: string, from: number): { texts: string[]; gap: boolean } {
    const { entries, gap } = this.#replay.since(overlayId, from);
    return { texts: entries.map(encodeReplayed), gap };
  }

  /** Closes the connections of an overlay that no longer exists. */
  closeOverlay(overlayId: string, reason = 'overlay deleted'): void {
    this.#replay.forget(overlayId);
    for (const ws of this.#byOverlay.get(overlayId) ?? []) ws.close(CLOSE.normal, reason);
  }

  /** Subscribed connections per overlay id. */
  clientCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [overlayId, set] of this.#byOverlay) counts[overlayId] = set.size;
    return counts;
  }

  get connectionCount(): number {
    return this.#clients.size;
  }

  #ping(): void {
    for (const [ws, state] of this.#clients) {
      if (!state.alive) {
        ws.terminate();
        continue;
      }
      state.alive = false;
      ws.ping();
    }
  }

  /** Shutdown: every client gets 1001, then stragglers are terminated after `graceMs`. */
  async close(graceMs = 1000): Promise<void> {
    this.#closing = true;
    clearInterval(this.#heartbeat);
    const open = [...this.#clients.keys()];
    const closed = open.map((ws) => new Promise<void>((resolve) => ws.once('close', () => resolve())));
    for (const ws of open) ws.close(CLOSE.goingAway, 'server shutting down');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(closed),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
    for (const ws of this.#clients.keys()) ws.terminate();
    this.#wss.close();
  }
}
