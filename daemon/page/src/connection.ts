// The page's WebSocket to the daemon: address, `init`, validated messages, recovery by reloading once it answers.
import {
  encodeClientMessage,
  parseServerMessage,
  type ServerMessage,
} from '../../../shared/protocol/index.js';
import { backoffDelay } from '../../../shared/timers.js';
import type { PageGlobals } from './globals.js';

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
  const scheduleReload = () => {
    if (reloading) return;
    reloading = true;
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
    const seq =
      message.type === 'resumed'
        ? message.to
        : message.type === 'stream-event' || message.type === 'overlay-command'
          ? message.seq
          : undefined;
    if (seq !== undefined && (lastSeq === undefined || seq > lastSeq)) {
      lastSeq = seq;
      writeLastSeq(globals.overlayId, seq);
    }
    hooks.onMessage(message);
  });
  socket.addEventListener('close', scheduleReload);
  socket.addEventListener('error', () => socket.close());
}
