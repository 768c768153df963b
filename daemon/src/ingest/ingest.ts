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
//   and its mark (`test`: from the test panel or the `event` command; `caughtUp`: it happened a while ago).
import type { StreamEvent, TestChatAnswer } from '../../../shared/protocol/index.js';
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

/**
 * What a step may report synchronously about an event: the ids of the rules it fired; for a test event,
 * the chat commands' answers it did not send.
 */
export interface HandlerReport {
  firedRules?: string[];
  chatAnswers?: TestChatAnswer[];
}

/**
 * An event is caught up when it reaches the daemon this long after it happened (the Kick feed's backlog
 * after a night off, a replayed socket): journaled at its own time and counted (points, totals, goals,
 * leaderboards), listed in the dashboard as "while you were away", but it fires no rule.
 */
export const CAUGHT_UP_AFTER_MS = 5 * 60 * 1000;

/** What a step is told about how the event came. */
export interface EventMark {
  /** Sent from the test panel or the `event` command. */
  test: boolean;
  /** It happened more than `CAUGHT_UP_AFTER_MS` before it arrived: no rule, no chat answer. */
  caughtUp: boolean;
}

/** One step of event handling. A step that fails is logged; the others still run. */
export type EventHandler = (
  event: StreamEvent,
  ctx: IngestContext,
  mark: EventMark,
) => void | HandlerReport | Promise<void>;

/**
 * The answer of `POST /api/events` beyond `accepted`: every rule the event fired, in rule order, and a
 * test event's chat command answers (not sent).
 */
export interface IngestReport {
  firedRules: string[];
  chatAnswers?: TestChatAnswer[];
}

/**
 * `requireJournal`: refuse the event (throw JournalWriteError) when the journal cannot take it. `test`: a
 * test event (the test panel, the `event` command): journaled with its mark, counted in no total. `at`:
 * when the event happened (milliseconds since the epoch), where its source says so; one older than
 * `CAUGHT_UP_AFTER_MS` is caught up.
 */
export interface IngestOptions {
  requireJournal?: boolean;
  test?: boolean;
  at?: number;
}
export type Ingest = (event: StreamEvent, options?: IngestOptions) => IngestReport;

/** The journal could not write the event: it was not accepted (POST /api/events answers 503). */
export class JournalWriteError extends DaemonError {
  constructor(message: string) {
    super('write_failed', message);
  }
}

export function createIngest(
  ctx: IngestContext,
  extraHandlers: EventHandler[] = [],
  now: () => number = Date.now,
): Ingest {
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
    const arrivedAt = now();
    const at = options?.at;
    /** A caught-up event's own time; undefined for a live one. */
    const late = at !== undefined && arrivedAt - at > CAUGHT_UP_AFTER_MS ? at : undefined;
    const caughtUp = late !== undefined;
    // interface §6.2: every stream event reaches every subscribed client as `stream-event`. A caught-up one
    // goes with its own time, marked as sent after the fact: the pages list it and raise no alert for it.
    if (late !== undefined) ctx.hub.broadcastEvent(event, seq, late, json, { late: true });
    else ctx.hub.broadcastEvent(event, seq, arrivedAt, json);
    if (ctx.journal && seq !== undefined) {
      try {
        const when = late !== undefined ? { at: late } : undefined;
        ctx.journal.append(event, event.platform, json, options?.test === true, seq, when);
      } catch (err) {
        journalFailed(err, options?.requireJournal);
      }
    }
    const firedRules: string[] = [];
    const chatAnswers: TestChatAnswer[] = [];
    const mark: EventMark = { test: options?.test === true, caughtUp };
    for (const handler of extraHandlers) {
      try {
        const result = handler(event, ctx, mark);
        if (result instanceof Promise) result.catch(fail);
        else {
          if (result?.firedRules) firedRules.push(...result.firedRules);
          if (result?.chatAnswers) chatAnswers.push(...result.chatAnswers);
        }
      } catch (err) {
        fail(err);
      }
    }
    return chatAnswers.length > 0 ? { firedRules, chatAnswers } : { firedRules };
  };
}
