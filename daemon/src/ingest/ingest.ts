// The one seam through which stream events enter the daemon (decisions §3: POST /api/events, the TikTok source, the CLI).
//
// How to plug in:
// - Callers hand `ingest(event)` an event that is already validated (a `StreamEvent` from
//   shared/protocol.ts: `parseWith(StreamEvent, x)` or the TikTok normaliser's output). It never throws
//   for a well-formed event and returns once the event has been dispatched (delivery is asynchronous).
// - `IngestContext` gives everything an event may touch:
//     hub.broadcastEvent(event)            → `stream-event` to every subscribed client of every overlay
//     hub.sendCommand(overlayId, command)  → `overlay-command` to the clients of one overlay
//     overlays.get(id) / overlays.update(overlay)
//                                          → read an overlay; replace it (persisted atomically, broadcast
//                                            as `overlay-update`; refused while its file is unreadable)
//     rules.current()                      → the rules in force (rules.json), kept fresh by the daemon
//     log(line)                            → the daemon's log
// - The rules engine and widget state hook in by adding steps to `handlers` below (or by building
//   their own `EventHandler` and passing it in `extraHandlers`); each handler gets the event, the context
//   and its mark (`test`: from the test panel or the `event` command).
import type { StreamEvent } from '../../../shared/protocol/index.js';
import { jsonHasLoneSurrogate, wellFormedJson } from '../../../shared/text.js';
import { DaemonError, errorMessage } from '../errors.js';
import type { Journal } from '../journal/journal.js';
import type { OverlayStore } from '../store/overlay-store.js';
import type { RulesStore } from '../store/rules-store.js';
import type { Hub } from '../ws/hub.js';

export interface IngestContext {
  hub: Hub;
  overlays: OverlayStore;
  rules: RulesStore;
  log: (line: string) => void;
  /** events.db: an event is written there before its 202 and before any rule runs for it. */
  journal?: Journal;
  /** Chat the daemon itself sent, come back from the platform: not an event (decisions-3 §12). */
  isEcho?: (event: StreamEvent) => boolean;
}

/** What a step may report synchronously about an event: the ids of the rules it fired. */
export interface HandlerReport {
  firedRules?: string[];
}

/** What a step is told about how the event came: `test`, sent from the test panel or the `event` command. */
export interface EventMark {
  test: boolean;
}

/** One step of event handling. A step that fails is logged; the others still run. */
export type EventHandler = (
  event: StreamEvent,
  ctx: IngestContext,
  mark: EventMark,
) => void | HandlerReport | Promise<void>;

/** The answer of `POST /api/events` beyond `accepted`: every rule the event fired, in rule order. */
export interface IngestReport {
  firedRules: string[];
}

/**
 * `requireJournal`: refuse the event (throw JournalWriteError) when the journal cannot take it. `test`: a
 * test event (the test panel, the `event` command): journaled with its mark, counted in no total.
 */
export type Ingest = (
  event: StreamEvent,
  options?: { requireJournal?: boolean; test?: boolean },
) => IngestReport;

/** The journal could not write the event: it was not accepted (POST /api/events answers 503). */
export class JournalWriteError extends DaemonError {
  constructor(message: string) {
    super('write_failed', message);
  }
}

export function createIngest(ctx: IngestContext, extraHandlers: EventHandler[] = []): Ingest {
  const fail = (err: unknown) => ctx.log(`[ingest] handling an event failed: ${errorMessage(err)}`);
  const journalFailed = (err: unknown, requireJournal: boolean | undefined) => {
    const message = `the event journal could not be written: ${errorMessage(err)}`;
    // The control API refuses the event (its rules do not run); a live source's event goes on as usual.
    if (requireJournal) throw new JournalWriteError(message);
    ctx.log(`[journal] ${message}`);
  };
  return (event, options) => {
    // The daemon's own chat is dropped here, before anything keeps it (no rules, points or leaderboard).
    if (ctx.isEcho?.(event)) return { firedRules: [] };
    // Sent, then written, in this one call: the pages get the event without waiting for the disk, and the
    // 202 still follows the write (a crash after it loses nothing). The seq is taken first, so the pages
    // and the journal number it alike; a write that fails leaves a gap in the numbers, never a repeat.
    let seq: number | undefined;
    // Serialised once: the journal stores this text and the hub sends it. A lone surrogate in a viewer's
    // text becomes U+FFFD here, so every answer that carries the event is well-formed JSON.
    let json = JSON.stringify(event);
    if (jsonHasLoneSurrogate(json)) {
      event = wellFormedJson(event);
      json = JSON.stringify(event);
    }
    try {
      seq = ctx.journal?.nextSeq();
    } catch (err) {
      journalFailed(err, options?.requireJournal);
    }
    // interface §6.2: every stream event reaches every subscribed client as `stream-event`.
    ctx.hub.broadcastEvent(event, seq, Date.now(), json);
    if (ctx.journal && seq !== undefined) {
      try {
        ctx.journal.append(event, event.platform, json, options?.test === true, seq);
      } catch (err) {
        journalFailed(err, options?.requireJournal);
      }
    }
    const firedRules: string[] = [];
    const mark: EventMark = { test: options?.test === true };
    for (const handler of extraHandlers) {
      try {
        const result = handler(event, ctx, mark);
        if (result instanceof Promise) result.catch(fail);
        else if (result?.firedRules) firedRules.push(...result.firedRules);
      } catch (err) {
        fail(err);
      }
    }
    return { firedRules };
  };
}
