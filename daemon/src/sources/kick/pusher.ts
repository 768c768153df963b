// A small client of the Pusher protocol (version 7), enough to read Kick's public chat channels
// anonymously: it connects, subscribes, answers and sends pings, notices a silent socket, and
// reconnects with growing waits and jitter. Every timer runs on the daemon's Timers (a fake clock in tests).
import WebSocket from 'ws';
import { backoffDelay, formatWait } from '../../../../shared/timers.js';
import { errorMessage } from '../../errors.js';
import type { TimerHandle, Timers } from '../../timers.js';

/** The protocol version and client this speaks, as Kick's own page announces itself. */
export const PUSHER_PROTOCOL = 7;
export const PUSHER_CLIENT_VERSION = '8.6.0';
/** A larger frame is refused by the socket (Kick's are a few kilobytes). */
const MAX_FRAME_BYTES = 1024 * 1024;

export type PusherState = 'connecting' | 'connected' | 'reconnecting' | 'error';

/** What is wrong with a frame, by kind: the caller logs each kind at most once a minute. */
export type PusherProblem = { kind: 'not-json' | 'not-a-frame' | 'server-error'; line: string };

export interface PusherSocketOptions {
  /** `ws[s]://host[:port]/app/<app key>`, without a query (checked by `pusherSocketUrl`). */
  url: string;
  /** Public channels to subscribe to; the first is the one that makes the socket "connected". */
  channels: readonly string[];
  timers: Timers;
  /** Nothing heard for this long: a `pusher:ping` is sent (60 s). */
  pingMs?: number;
  /** Nothing heard for this long: the socket is given up and opened again (180 s). */
  staleMs?: number;
  /** The first wait before reconnecting (1 s), doubling up to retryMaxMs (60 s), with jitter. */
  retryMs?: number;
  retryMaxMs?: number;
  random?: () => number;
  onEvent(channel: string, event: string, data: unknown): void;
  onState(state: PusherState, detail?: string): void;
  onProblem(problem: PusherProblem): void;
}

/**
 * The address the socket opens: the configured one with the protocol query added. Throws with a message
 * in words when the address is not `ws[s]://host[:port]/app/<app key>`.
 */
export function pusherSocketUrl(base: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(`Kick's chat socket address is not a URL: "${base}"`);
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:')
    throw new Error(`Kick's chat socket address must be ws:// or wss://, got "${base}"`);
  if (!/^\/app\/[A-Za-z0-9_-]{1,100}$/.test(url.pathname))
    throw new Error(`Kick's chat socket address must end in /app/<app key>, got "${base}"`);
  url.search = new URLSearchParams({
    protocol: String(PUSHER_PROTOCOL),
    client: 'js',
    version: PUSHER_CLIENT_VERSION,
    flash: 'false',
  }).toString();
  return url.href;
}

interface Frame {
  event: string;
  channel?: string;
  data?: unknown;
}

function readFrame(text: string): Frame | PusherProblem {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'not-json', line: 'a frame that is not JSON' };
  }
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    typeof (parsed as { event?: unknown }).event !== 'string' ||
    ((parsed as { channel?: unknown }).channel !== undefined &&
      typeof (parsed as { channel?: unknown }).channel !== 'string')
  )
    return { kind: 'not-a-frame', line: 'a frame without an event name' };
  return parsed as Frame;
}

/** Pusher sends `data` as a JSON string; it is parsed once here (left as the string when it is not JSON). */
function decodeData(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** A socket that stayed open this long was a good one: a close asking to come back may be answered at once again. */
const STABLE_MS = 60_000;

/** Close codes 4000–4099: the server says not to come back as we are (wrong key, wrong protocol). */
function isFatal(code: number): boolean {
  return code >= 4000 && code < 4100;
}

export class PusherSocket {
  readonly #options: Required<Omit<PusherSocketOptions, 'random'>> & Pick<PusherSocketOptions, 'random'>;
  readonly #address: string;
  #socket: WebSocket | undefined;
  #running = false;
  #attempt = 0;
  #retryTimer: TimerHandle | undefined;
  #pingTimer: TimerHandle | undefined;
  #staleTimer: TimerHandle | undefined;
  /** Whether the first channel was subscribed since the socket opened. */
  #subscribed = false;
  /** Why the last socket was given up, said when it closes. */
  #why: string | undefined;
  /** The server's last `pusher:error`, said when it closes the socket after it. */
  #serverError: { code?: number; message: string } | undefined;
  /** When the socket in use opened (undefined before it did). */
  #openedAt: number | undefined;
  /** Closes in a row that asked to come back now (4200–4299) without a socket that stayed up between. */
  #comeBackNow = 0;

  constructor(options: PusherSocketOptions) {
    this.#options = { pingMs: 60_000, staleMs: 180_000, retryMs: 1000, retryMaxMs: 60_000, ...options };
    this.#address = pusherSocketUrl(options.url);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#open();
  }

  /** Closes for good; nothing of it runs afterwards. */
  stop(): void {
    this.#running = false;
    this.#clear();
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket) {
      socket.removeAllListeners();
      socket.on('error', () => {});
      try {
        socket.close(1000);
      } catch {
        socket.terminate();
      }
    }
  }

  #clear(): void {
    const { timers } = this.#options;
    for (const timer of [this.#retryTimer, this.#pingTimer, this.#staleTimer])
      if (timer) timers.clearTimeout(timer);
    this.#retryTimer = this.#pingTimer = this.#staleTimer = undefined;
  }

  #open(): void {
    if (!this.#running) return;
    this.#subscribed = false;
    this.#why = undefined;
    this.#serverError = undefined;
    // A reconnect keeps the state that said why and when (`reconnecting`, `error`).
    if (this.#attempt === 0) this.#options.onState('connecting');
    const socket = new WebSocket(this.#address, { maxPayload: MAX_FRAME_BYTES, handshakeTimeout: 15_000 });
    this.#socket = socket;
    this.#openedAt = undefined;
    this.#heard();
    socket.on('open', () => {
      if (this.#socket === socket) this.#openedAt = this.#options.timers.now();
    });
    socket.on('message', (raw, isBinary) => {
      if (this.#socket !== socket) return;
      this.#heard();
      if (isBinary) {
        this.#options.onProblem({ kind: 'not-json', line: 'a binary frame' });
        return;
      }
      this.#frame(socket, raw.toString());
    });
    socket.on('error', (err) => {
      if (this.#socket !== socket) return;
      this.#why ??= errorMessage(err);
    });
    socket.on('close', (code, reason) => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      this.#closed(code, reason.toString());
    });
  }

  #frame(socket: WebSocket, text: string): void {
    const frame = readFrame(text);
    if ('kind' in frame) {
      this.#options.onProblem(frame);
      return;
    }
    switch (frame.event) {
      case 'pusher:connection_established':
        for (const channel of this.#options.channels)
          this.#send(socket, { event: 'pusher:subscribe', data: { auth: '', channel } });
        return;
      case 'pusher_internal:subscription_succeeded':
        if (frame.channel === this.#options.channels[0] && !this.#subscribed) {
          this.#subscribed = true;
          this.#attempt = 0;
          this.#options.onState('connected');
        }
        return;
      case 'pusher:ping':
        this.#send(socket, { event: 'pusher:pong', data: {} });
        return;
      case 'pusher:pong':
        return;
      case 'pusher:error': {
        const data = decodeData(frame.data) as { code?: unknown; message?: unknown } | null;
        const code = typeof data?.code === 'number' ? data.code : undefined;
        const message = typeof data?.message === 'string' ? data.message.slice(0, 200) : 'no reason given';
        this.#serverError = { code, message };
        this.#options.onProblem({
          kind: 'server-error',
          line: `Kick's chat socket said: ${message}${code ? ` (${code})` : ''}`,
        });
        return;
      }
      default:
        // Other pusher_internal:/pusher: frames (member lists, cache misses) are none of ours.
        if (frame.event.startsWith('pusher:') || frame.event.startsWith('pusher_internal:')) return;
        if (!frame.channel || !this.#options.channels.includes(frame.channel)) return;
        this.#options.onEvent(frame.channel, frame.event, decodeData(frame.data));
    }
  }

  #send(socket: WebSocket, frame: object): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify(frame));
  }

  /** Something came: the ping waits another pingMs, the socket counts as alive another staleMs. */
  #heard(): void {
    const { timers, pingMs, staleMs } = this.#options;
    if (this.#pingTimer) timers.clearTimeout(this.#pingTimer);
    if (this.#staleTimer) timers.clearTimeout(this.#staleTimer);
    const ping = () => {
      const socket = this.#socket;
      if (!socket) return;
      this.#send(socket, { event: 'pusher:ping', data: {} });
      this.#pingTimer = timers.setTimeout(ping, pingMs);
    };
    this.#pingTimer = timers.setTimeout(ping, pingMs);
    this.#staleTimer = timers.setTimeout(() => {
      const socket = this.#socket;
      if (!socket) return;
      this.#why = `nothing heard from Kick's chat socket for ${formatWait(staleMs)}`;
      socket.terminate();
    }, staleMs);
  }

  #closed(code: number, reason: string): void {
    const { timers } = this.#options;
    if (this.#pingTimer) timers.clearTimeout(this.#pingTimer);
    if (this.#staleTimer) timers.clearTimeout(this.#staleTimer);
    this.#pingTimer = this.#staleTimer = undefined;
    if (!this.#running) return;
    if (this.#openedAt !== undefined && timers.now() - this.#openedAt >= STABLE_MS) this.#comeBackNow = 0;
    const serverCode = code >= 4000 && code < 5000 ? code : this.#serverError?.code;
    const said = this.#serverError?.message ?? (reason ? reason.slice(0, 200) : undefined);
    const what = this.#subscribed ? 'chat connection lost' : "cannot reach Kick's chat socket";
    const why = this.#why ?? (said ? `it said: ${said}` : undefined);
    const wait = backoffDelay(
      ++this.#attempt,
      {
        initialMs: this.#options.retryMs,
        maxMs: this.#options.retryMaxMs,
        jitter: 0.25,
      },
      this.#options.random,
    );
    if (serverCode !== undefined && isFatal(serverCode)) {
      // Wrong key or protocol: coming back at once would be refused again; looked at again slowly.
      const slow = Math.max(wait, 5 * 60_000);
      this.#options.onState(
        'error',
        `Kick's chat socket refused the connection${said ? `: ${said}` : ''} (${serverCode}); check OVERLAY_KICK_PUSHER_URL; trying again in ${formatWait(slow)}`,
      );
      this.#retryTimer = timers.setTimeout(() => this.#open(), slow);
      return;
    }
    // 4200–4299: the server asks for an immediate reconnect. Granted the first time; a server that keeps
    // asking (or a proxy that closes every socket so) is met with the usual growing waits, not a loop.
    let delay = wait;
    if (serverCode !== undefined && serverCode >= 4200 && serverCode < 4300) {
      this.#comeBackNow += 1;
      delay =
        this.#comeBackNow === 1
          ? 0
          : backoffDelay(
              this.#comeBackNow - 1,
              { initialMs: this.#options.retryMs, maxMs: this.#options.retryMaxMs, jitter: 0.25 },
              this.#options.random,
            );
    }
    this.#options.onState(
      'reconnecting',
      `${what}${why ? `: ${why}` : ''}; trying again in ${formatWait(delay)}`,
    );
    this.#retryTimer = timers.setTimeout(() => {
      this.#retryTimer = undefined;
      this.#open();
    }, delay);
  }
}
