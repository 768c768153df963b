// The Kick events part: Kick's official events through the Gatekeeper (sources/kick/edge-events.ts) while
// the daemon has a licence and the member linked Kick, where they stand kept in the journal.
import type { KickFeedEvent } from '../../../shared/protocol/kick.js';
import type { Ingest } from '../ingest/ingest.js';
import type { Journal } from '../journal/journal.js';
import {
  KickEdgeFeed,
  type KickEdgeLicence,
  type KickEdgeState,
  seqStoreOn,
} from '../sources/kick/edge-events.js';
import { KickSource } from '../sources/kick/source.js';
import type { SourceManager } from '../sources/manager.js';
import { RecentIds } from '../sources/recent-ids.js';
import type { SourceReport } from '../sources/source.js';
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
  /**
   * Starts the feed once the sources run: its events go through `deliver`, its state to `onState`;
   * `usesKick` says whether a kick source is set up (the feed's sign-in and link lines are news only then).
   */
  start(
    deliver: (event: KickFeedEvent, at?: number) => void,
    onState?: (state: KickEdgeState) => void,
    usesKick?: () => boolean,
  ): void;
  close(): void;
}

/**
 * Where the feed's events go: through the running kick source's seam (the linked channel's, else the first),
 * which lets a Kick message id through once whichever way it came (its Pusher socket or this feed); with no
 * kick source running, to the ingest seam, a Kick message id once all the same. A live/offline marker ends
 * the journal's session unless another platform is live (a stream that starts opens a fresh session with
 * its first event).
 */
export function deliverThroughKickSource(ctx: {
  sources: Pick<SourceManager, 'running'>;
  ingest: Ingest;
  journal: Pick<Journal, 'endSession'>;
  /** The Kick channel the member linked, once the Gatekeeper said. */
  channel: () => string | undefined;
}): (event: KickFeedEvent, at?: number) => void {
  const seen = new RecentIds(10_000);
  return (event, at) => {
    const running = ctx.sources.running();
    // The feed brings Kick's own subscription webhooks: a kick source started since it connected learns it here.
    tellKickSources(ctx.sources, ctx.channel());
    if (event.type === 'livestream') {
      const othersLive = running.some((s) => s.platform !== 'kick' && s.report().state === 'connected');
      if (!othersLive) ctx.journal.endSession();
      return;
    }
    const id = (event.data as Record<string, unknown>).messageId;
    const messageId = typeof id === 'string' && id !== '' ? id : undefined;
    // A source that is stopping is no way in: its `deliver` would drop the event.
    const kick = running.filter((s): s is KickSource => s instanceof KickSource && s.running);
    const channel = ctx.channel()?.toLowerCase();
    const source = kick.find((s) => s.channel.toLowerCase() === channel) ?? kick[0];
    if (source) {
      source.deliver(event, messageId, at);
      return;
    }
    if (messageId && seen.seen(messageId)) return;
    ctx.ingest(event, at !== undefined ? { at } : undefined);
  };
}

/**
 * While the feed is connected it brings Kick's subscription webhooks of the linked channel: the running kick
 * source of that channel then leaves out its socket's subscription notices, so each subscription counts
 * once; a source of another channel keeps its own (the feed has none of them). `linked`: the channel the
 * connected feed covers, undefined while it is not connected.
 */
export function tellKickSources(sources: Pick<SourceManager, 'running'>, linked: string | undefined): void {
  const channel = linked?.toLowerCase();
  for (const source of sources.running())
    if (source instanceof KickSource)
      source.setFeedCoversSubscriptions(channel !== undefined && source.channel.toLowerCase() === channel);
}

/** A kick source's entry in /status with the feed's state beside the chat's: "chat connected; events: …". */
export function withKickEvents(report: SourceReport, events: string | undefined): SourceReport {
  if (report.platform !== 'kick' || events === undefined) return report;
  const chat = report.detail ?? `chat ${report.state}`;
  return { ...report, detail: `${chat}; ${events}` };
}

export function startKickEdge(
  options: KickEdgeOptions | undefined,
  ctx: { journal: Journal; log: (line: string) => void },
): KickEdgePart {
  if (!options) return { feed: undefined, start() {}, close() {} };
  let deliver: ((event: KickFeedEvent, at?: number) => void) | undefined;
  let onState: ((state: KickEdgeState) => void) | undefined;
  let usesKick: (() => boolean) | undefined;
  const feed = new KickEdgeFeed({
    gatekeeperUrl: options.gatekeeperUrl,
    licence: options.licence,
    seq: seqStoreOn(ctx.journal),
    deliver: (event, at) => deliver?.(event, at),
    onState: (state) => onState?.(state),
    usesKick: () => usesKick?.() === true,
    timers: options.timers ?? systemTimers(),
    ...(options.random ? { random: options.random } : {}),
    log: ctx.log,
  });
  return {
    feed,
    start(to, stateTo, kickInUse) {
      deliver = to;
      onState = stateTo;
      usesKick = kickInUse;
      feed.start();
    },
    close() {
      feed.close();
    },
  };
}
