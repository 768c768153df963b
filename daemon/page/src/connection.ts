// The page's WebSocket to the daemon: address, `init`, validated messages, recovery by reloading once it answers.
// A viewer page of a public overlay instead listens to the relay: receive-only, reconnecting in place.
import {
  encodeClientMessage,
  parseServerMessage,
  type ServerMessage,
} from '../../../shared/protocol/index.js';
import { RELAY_CLOSE, VIEWER_PING, type ViewerMessage } from '../../../shared/protocol/relay.js';
import { backoffDelay, hostTimers, type TimerHandle, type Timers } from '../../../shared/timers.js';
import type { PageGlobals, RelayGlobals } from './globals.js';

/** `ws://host` on http, `wss://host` on https (the tunnel serves the page over https; interface §6). */
export function socketUrl(location: { protocol: string; host: string }): string {
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}`;
}

/** Reload backoff: 1 s, 2 s, 4 s … capped at 30 s. `attempt` counts from 0. */
export function reloadDelay(attempt: number): number {
  return backoffDelay(attempt + 1, { initialMs: 1000, maxMs: 30_000 });
}

/** Between two looks at whether the daemon answers again: 1 s, 2 s, 4 s, then every 5 s. */
export function probeDelay(failures: number): number {
  return backoffDelay(failures, { initialMs: 1000, maxMs: 5000 });
}

/** How long one look may take: a daemon that accepts but does not answer counts as down. */
const PROBE_TIMEOUT_MS = 4000;

/**
 * Whether the daemon answers: `GET /status`, its cheapest route, never cached. A reload while it is down
 * lands on the browser's error page, where no script of ours runs and OBS never retries; so the page
 * reloads only once this says yes. An error page from a tunnel's edge (502, 530) is no answer either.
 */
export async function daemonAnswers(fetcher: typeof fetch = fetch): Promise<boolean> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), PROBE_TIMEOUT_MS);
  try {
    const res = await fetcher('/status', { cache: 'no-store', signal: abort.signal });
    if (!res.ok) return false;
    const body: unknown = await res.json();
    return typeof body === 'object' && body !== null && 'running' in body && body.running === true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const ATTEMPT_KEY = 'overlay-reload-attempt';

/** Reload attempts survive the reload itself in sessionStorage (absent storage: start from 0). */
function readAttempt(): number {
  try {
    const n = Number(sessionStorage.getItem(ATTEMPT_KEY) ?? '0');
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  } catch {
    return 0;
  }
}

function writeAttempt(n: number): void {
  try {
    if (n === 0) sessionStorage.removeItem(ATTEMPT_KEY);
    else sessionStorage.setItem(ATTEMPT_KEY, String(n));
  } catch {
    // Storage may be disabled; the backoff then restarts at 1 s.
  }
}

/** The last `seq` this page saw, per overlay, kept across reloads (resume after a reload). */
const seqKey = (overlayId: string) => `overlay-seq:${overlayId}`;

export function readLastSeq(overlayId: string): number | undefined {
  try {
    const value = sessionStorage.getItem(seqKey(overlayId));
    const n = Number(value);
    return value !== null && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

function writeLastSeq(overlayId: string, seq: number): void {
  try {
    sessionStorage.setItem(seqKey(overlayId), String(seq));
  } catch {
    // Storage may be disabled: the page then starts afresh after a reload.
  }
}

/**
 * The last `seq` seen once `message` is applied (a `resumed` covers up to its `to`), kept in
 * sessionStorage too so that a reload resumes from it.
 */
function advanceSeq(
  overlayId: string,
  lastSeq: number | undefined,
  message: ServerMessage,
  save: (overlayId: string, seq: number) => void = writeLastSeq,
): number | undefined {
  const seq =
    message.type === 'resumed'
      ? message.to
      : message.type === 'stream-event' || message.type === 'overlay-command'
        ? message.seq
        : undefined;
  if (seq === undefined || (lastSeq !== undefined && seq <= lastSeq)) return lastSeq;
  save(overlayId, seq);
  return seq;
}

/** How often, at most, the daemon page writes its last seq while messages flow. */
const SEQ_WRITE_MS = 1000;

/**
 * Keeps the daemon page's last seq for its next load. A sessionStorage write on every message cost the
 * page more than the rest of handling it (in a busy browser source, more than half a millisecond an
 * event), so the seq is written at most once a second, and at once when the page goes away (pagehide:
 * a reload by the page itself, OBS's refresh, a navigation), which is when the next load reads it.
 */
function seqKeeper(): { save(overlayId: string, seq: number): void; flush(): void } {
  let pending: { overlayId: string; seq: number } | undefined;
  let timer: number | undefined;
  const flush = () => {
    if (timer !== undefined) window.clearTimeout(timer);
    timer = undefined;
    if (pending) writeLastSeq(pending.overlayId, pending.seq);
    pending = undefined;
  };
  window.addEventListener('pagehide', flush);
  return {
    save(overlayId, seq) {
      pending = { overlayId, seq };
      timer ??= window.setTimeout(flush, SEQ_WRITE_MS);
    },
    flush,
  };
}

interface ConnectionHooks {
  onMessage(message: ServerMessage): void;
  onState(state: 'open' | 'closed'): void;
  /** The daemon did not answer before a reload (`failures` in a row); the page keeps its picture and looks again. */
  onUnreachable?(failures: number): void;
}

/**
 * Connects and subscribes. Page tokens are single-use (interface §5.2), so a lost connection
 * cannot simply reconnect: the page reloads to get a fresh token, backing off between tries, and
 * only once the daemon answers again (until then it keeps retrying from here, its picture kept).
 */
export function connect(globals: PageGlobals, hooks: ConnectionHooks): void {
  let reloading = false;
  const seq = seqKeeper();
  const scheduleReload = () => {
    if (reloading) return;
    reloading = true;
    seq.flush();
    hooks.onState('closed');
    const attempt = readAttempt();
    writeAttempt(attempt + 1);
    let failures = 0;
    const reloadWhenAnswering = async () => {
      if (await daemonAnswers()) return window.location.reload();
      failures++;
      hooks.onUnreachable?.(failures);
      window.setTimeout(() => void reloadWhenAnswering(), probeDelay(failures));
    };
    window.setTimeout(() => void reloadWhenAnswering(), reloadDelay(attempt));
  };

  let socket: WebSocket;
  try {
    socket = new WebSocket(socketUrl(window.location));
  } catch {
    scheduleReload();
    return;
  }
  let lastSeq = readLastSeq(globals.overlayId);
  socket.addEventListener('open', () => {
    socket.send(
      encodeClientMessage({
        action: 'init',
        overlayId: globals.overlayId,
        token: globals.token,
        // Every reconnect is a reload: the page asks for what it missed since the last message it saw.
        ...(lastSeq !== undefined ? { resumeFrom: lastSeq } : {}),
      }),
    );
  });
  socket.addEventListener('message', (event: MessageEvent<unknown>) => {
    if (typeof event.data !== 'string') return;
    const parsed = parseServerMessage(event.data);
    // A message that does not validate is ignored, never half-applied.
    if (!parsed.ok) return;
    const message = parsed.value;
    if (message.type === 'init') {
      writeAttempt(0);
      hooks.onState('open');
    }
    lastSeq = advanceSeq(globals.overlayId, lastSeq, message, seq.save);
    hooks.onMessage(message);
  });
  socket.addEventListener('close', scheduleReload);
  socket.addEventListener('error', () => socket.close());
}

// ---- Viewer mode: a public overlay's page on the Gatekeeper, fed by the relay ----

/** A viewer pings this often; the relay answers `pong` without waking up. */
export const VIEWER_PING_MS = 30_000;
/** Heard nothing (no message, no pong) for this long: the socket is dead without having closed. */
export const VIEWER_SILENCE_MS = 2 * VIEWER_PING_MS + 5000;

/** The relay socket on the page's own origin: `wss://` on https, `ws://` on http. */
export function viewerSocketUrl(location: { protocol: string; host: string }, relay: string): string {
  return socketUrl(location) + relay;
}

/**
 * Wait before reconnect number `attempt` (1-based): anywhere from 1 s up to a ceiling that doubles from
 * 2 s and stops at 30 s (1–2 s, 1–4 s, 1–8 s, 1–16 s, then 1–30 s), uniformly ("full jitter"): thousands of
 * viewers dropped at once, or refused by a full relay, do not all come back in the same second.
 */
export function viewerRetryDelay(attempt: number, random: () => number = Math.random): number {
  const ceiling = backoffDelay(attempt, { initialMs: 2000, maxMs: 30_000 });
  return Math.round(1000 + random() * (ceiling - 1000));
}

/** What the viewer connection needs from the browser (tests give fakes). */
export interface ViewerSocket {
  send(data: string): void;
  close(): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'close', listener: (event: { code: number }) => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}
export interface ViewerDeps {
  /** Opens a WebSocket; may throw (a malformed URL, a page being unloaded). */
  openSocket(url: string): ViewerSocket;
  timers: Timers;
  random(): number;
  location: { protocol: string; host: string };
}

const browserViewerDeps = (): ViewerDeps => ({
  openSocket: (url) => new WebSocket(url),
  timers: hostTimers({
    now: () => performance.now(),
    setTimeout: (callback, ms) => window.setTimeout(callback, ms),
    clearTimeout: (handle: number) => window.clearTimeout(handle),
  }),
  random: Math.random,
  location: window.location,
});

/** Everything a viewer may send: its `init` first, then pings. */
const encodeViewerMessage = (message: ViewerMessage): string =>
  message.action === 'ping' ? VIEWER_PING : JSON.stringify(message);

/**
 * Receive-only connection to the relay. Sends `init` (with `resumeFrom`, the last `seq` seen, after the
 * first connect or a reload) and then nothing but a ping every 30 s. Never reloads: a closed or refused
 * socket (a full relay answers 503, which a browser reports as a failed connect) is dialled again after
 * `viewerRetryDelay`, and the page resumes from the last `seq` it saw. A close with 4403 (the overlay is
 * no longer published) ends it, as does `stop` (tests).
 */
export function connectViewer(
  globals: RelayGlobals,
  hooks: Pick<ConnectionHooks, 'onMessage' | 'onState'> & {
    /** A reconnect is due in `delayMs` (`failures` in a row so far). */
    onRetry?(failures: number, delayMs: number): void;
    /** The relay closed with 4403: the overlay is no longer published. The page stops for good. */
    onUnpublished?(): void;
  },
  deps: ViewerDeps = browserViewerDeps(),
): { stop(): void } {
  const { timers } = deps;
  let lastSeq = readLastSeq(globals.overlayId);
  /** Failed connects (or connections lost before an `init`) in a row. */
  let failures = 0;
  let stopped = false;
  let socket: ViewerSocket | undefined;
  let retry: TimerHandle | undefined;
  let ping: TimerHandle | undefined;

  const dial = () => {
    retry = undefined;
    if (stopped) return;
    let current: ViewerSocket;
    try {
      current = deps.openSocket(viewerSocketUrl(deps.location, globals.relay));
    } catch {
      return lost();
    }
    socket = current;
    let ended = false;
    let heardAt = timers.now();
    const end = () => {
      if (ended) return;
      ended = true;
      if (ping) timers.clearTimeout(ping);
      ping = undefined;
      if (socket === current) socket = undefined;
      lost();
    };
    const pingLater = () => {
      ping = timers.setTimeout(() => {
        // Nothing came back, not even the pongs: a connection that died without a close (Wi-Fi, sleep).
        if (timers.now() - heardAt >= VIEWER_SILENCE_MS) {
          current.close();
          return end();
        }
        current.send(encodeViewerMessage({ action: 'ping' }));
        pingLater();
      }, VIEWER_PING_MS);
    };
    current.addEventListener('open', () => {
      heardAt = timers.now();
      current.send(
        encodeViewerMessage({
          action: 'init',
          overlayId: globals.overlayId,
          ...(lastSeq !== undefined ? { resumeFrom: lastSeq } : {}),
        }),
      );
      pingLater();
    });
    current.addEventListener('message', (event) => {
      heardAt = timers.now();
      if (typeof event.data !== 'string') return;
      const parsed = parseServerMessage(event.data);
      // `pong` (not a page message) and anything that does not validate are ignored, never half-applied.
      if (!parsed.ok) return;
      const message = parsed.value;
      if (message.type === 'init') {
        failures = 0;
        hooks.onState('open');
      }
      lastSeq = advanceSeq(globals.overlayId, lastSeq, message);
      hooks.onMessage(message);
    });
    current.addEventListener('close', (event) => {
      // Unpublished (or the streamer is no longer Premium): the relay says so once, and the viewer page
      // stops rather than knock again every few seconds, by the thousand, at an address that answers 404.
      if (event.code === RELAY_CLOSE.notPublished && !ended) {
        ended = true;
        stopped = true;
        if (ping) timers.clearTimeout(ping);
        ping = undefined;
        socket = undefined;
        hooks.onState('closed');
        hooks.onUnpublished?.();
        return;
      }
      end();
    });
    current.addEventListener('error', () => {
      current.close();
      end();
    });
  };

  const lost = () => {
    if (stopped || retry) return;
    hooks.onState('closed');
    failures++;
    const delay = viewerRetryDelay(failures, deps.random);
    retry = timers.setTimeout(dial, delay);
    hooks.onRetry?.(failures, delay);
  };

  dial();
  return {
    stop() {
      stopped = true;
      if (retry) timers.clearTimeout(retry);
      if (ping) timers.clearTimeout(ping);
      socket?.close();
    },
  };
}
