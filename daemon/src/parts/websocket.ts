// The WebSocket part: page tokens, the per-address connection limit and the hub, which numbers its
// messages with the journal's seq and follows the overlays (an edit is broadcast, a deleted one closed).
import { ConnectionLimiter } from '../http/connection-limit.js';
import type { Journal } from '../journal/journal.js';
import type { OverlayStore } from '../store/overlay-store.js';
import { Hub } from '../ws/hub.js';
import { PageTokens } from '../ws/page-tokens.js';

export interface WebSocketOptions {
  /** Init window of a WebSocket connection (5000 ms). */
  initTimeoutMs?: number;
  /** WebSocket heartbeat period (30 s). */
  pingIntervalMs?: number;
  /** Lifetime of an unused page token (5 minutes). */
  tokenTtlMs?: number;
  /** Clock for token expiry. */
  now?: () => number;
  /** Open connections per client IP (10). */
  maxConnectionsPerIp?: number;
  /** A WebSocket client with more queued than this is dropped (4 MiB). */
  maxBufferedBytes?: number;
  /** false: nothing is replayed from the journal (the benchmark's "journal off" run). */
  journalEvents?: boolean;
}

export interface WebSocketPart {
  hub: Hub;
  tokens: PageTokens;
  limiter: ConnectionLimiter;
  /** Says goodbye (1001) to every client, waiting up to `graceMs` for them; once, however often called. */
  close(graceMs?: number): Promise<void>;
}

export function startWebSocket(
  options: WebSocketOptions,
  ctx: { journal: Journal; overlays: OverlayStore; log: (line: string) => void },
): WebSocketPart {
  const { journal, overlays, log } = ctx;
  const tokens = new PageTokens({
    ...(options.tokenTtlMs !== undefined ? { ttlMs: options.tokenTtlMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const limiter = new ConnectionLimiter(options.maxConnectionsPerIp ?? 10);
  const hub = new Hub({
    sequence: { next: () => journal.nextSeq(), peek: () => journal.peekSeq() },
    ...(options.journalEvents === false ? {} : { replayStore: journal }),
    tokens,
    slots: limiter,
    getOverlay: (id) => overlays.get(id),
    ...(options.initTimeoutMs !== undefined ? { initTimeoutMs: options.initTimeoutMs } : {}),
    ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
    ...(options.maxBufferedBytes !== undefined ? { maxBufferedBytes: options.maxBufferedBytes } : {}),
    log,
  });
  const stopFollowing = overlays.subscribe((change) => {
    if (change.type === 'changed') hub.broadcastOverlay(change.overlay);
    else {
      tokens.revokeOverlay(change.overlayId);
      hub.closeOverlay(change.overlayId);
    }
  });
  let closing: Promise<void> | undefined;
  return {
    hub,
    tokens,
    limiter,
    close(graceMs) {
      stopFollowing();
      closing ??= hub.close(graceMs);
      return closing;
    },
  };
}
