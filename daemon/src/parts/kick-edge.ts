// The Kick events part: Kick's official events through the Gatekeeper (sources/kick/edge-events.ts) while
// the daemon has a licence and the member linked Kick, where they stand kept in the journal.
import type { KickFeedEvent } from '../../../shared/protocol/kick.js';
import type { Ingest } from '../ingest/ingest.js';
import type { Journal } from '../journal/journal.js';
import { KickEdgeFeed, type KickEdgeLicence, seqStoreOn } from '../sources/kick/edge-events.js';
import { RecentIds } from '../sources/recent-ids.js';
import { systemTimers, type Timers } from '../timers.js';

export interface KickEdgeOptions {
  /** The licence in force (any tier): its JWT opens the events socket. */
  licence: KickEdgeLicence;
  /** The Gatekeeper's origin (the one licences are validated with). */
  gatekeeperUrl: string;
  /** Clock for reconnects and status checks (a fake one in tests). */
  timers?: Timers;
  random?: () => number;
}

export interface KickEdgePart {
  /** Undefined when the daemon runs without a licence manager (no Gatekeeper to ask). */
  feed: KickEdgeFeed | undefined;
  /** Starts the feed once the sources run: its events go through `deliver`. */
  start(deliver: (event: KickFeedEvent) => void): void;
  close(): void;
}

/**
 * Straight to the ingest seam, a Kick message id once; a live/offline marker ends the journal's session
 * (a stream that starts opens a fresh one with its first event).
 */
export function deliverToIngest(ingest: Ingest, journal: Journal): (event: KickFeedEvent) => void {
  const seen = new RecentIds();
  return (event) => {
    if (event.type === 'livestream') return journal.endSession();
    const id = (event.data as Record<string, unknown>).messageId;
    if (typeof id === 'string' && seen.seen(id)) return;
    ingest(event);
  };
}

export function startKickEdge(
  options: KickEdgeOptions | undefined,
  ctx: { journal: Journal; log: (line: string) => void },
): KickEdgePart {
  if (!options) return { feed: undefined, start() {}, close() {} };
  let deliver: ((event: KickFeedEvent) => void) | undefined;
  const feed = new KickEdgeFeed({
    gatekeeperUrl: options.gatekeeperUrl,
    licence: options.licence,
    seq: seqStoreOn(ctx.journal),
    deliver: (event) => deliver?.(event),
    timers: options.timers ?? systemTimers(),
    ...(options.random ? { random: options.random } : {}),
    log: ctx.log,
  });
  return {
    feed,
    start(to) {
      deliver = to;
      feed.start();
    },
    close() {
      feed.close();
    },
  };
}
