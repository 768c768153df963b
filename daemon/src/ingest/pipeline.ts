// What the daemon does with each stream event after broadcasting it: run the rules, then keep widget state.
//
// - Rules: the list in force (`rules.current()`) is compiled by a RuleEngine when it changes (the
//   store hands out a new array on every change), never per event. Each fired action goes out as
//   `overlay-command` through `hub.sendCommand`. Rules run after the `stream-event` broadcast
//   (ingest.ts puts that step first), so they never hold up event delivery.
// - Widget state (docs/events-and-rules.md §3): goal `current`, counter `value` and top-gifters
//   `entries` follow the events. Changes are queued per overlay and written through
//   `overlays.update` (persisted + `overlay-update`) by an UpdateCoalescer: at most one write and
//   one broadcast per overlay per 100 ms, the last change never lost, everything flushed on close.
//   The queue holds the operations, not a computed state, and they are replayed on the overlay in
//   force at flush time, so an edit saved meanwhile (editor, file) is kept and nothing is counted twice.
// - `reset` (API or rule) zeroes the kept state too: the pipeline listens to every command the hub sends.
import type { OverlayCommandInput, StreamEvent, Widget } from '../../../shared/protocol/index.js';
import type { RuleList } from '../../../shared/rules.js';
import { journalRanked, widgetReactsTo } from '../../../shared/widget-reactions.js';
import { ActionRunner } from '../actions/runner.js';
import { errorMessage } from '../errors.js';
import { RuleEngine } from '../rules/engine.js';
import type { Timers } from '../timers.js';
import { applyCommand, applyEvent, mergeWidgets } from '../widget-state/apply-event.js';
import { UpdateCoalescer } from '../widget-state/coalescer.js';
import type { EventHandler, IngestContext } from './ingest.js';

interface EventPipelineOptions {
  /** Runs the actions of fired rules; by default one that only sends overlay commands through the hub. */
  actions?: ActionRunner;
  /** Minimum time between two state writes/broadcasts of one overlay (default 100 ms). */
  intervalMs?: number;
  timers?: Timers;
}

interface EventPipeline {
  /** The steps to hand to createIngest after the broadcast: rules first, then widget state. */
  handlers: EventHandler[];
  /** Writes every queued state change now and stops listening (shutdown). */
  close(): void;
}

/** A change queued for an overlay's kept state, replayed in order at flush time. */
type StateOp = { kind: 'event'; event: StreamEvent } | { kind: 'command'; widgetId: string; command: string };

const KEEPS_STATE = new Set<Widget['type']>(['goal', 'counter', 'top-gifters']);

/** Whether an event can change a widget's kept state (whatever that state is by flush time). */
const affects = (widget: Widget, event: StreamEvent): boolean =>
  KEEPS_STATE.has(widget.type) && widgetReactsTo(widget, event);

export function createEventPipeline(ctx: IngestContext, options: EventPipelineOptions = {}): EventPipeline {
  const { hub, overlays, rules, log } = ctx;

  // --- rules -------------------------------------------------------------------------------
  const runner =
    options.actions ??
    new ActionRunner({ sendCommand: (overlayId, command) => hub.sendCommand(overlayId, command), log });
  const engine = new RuleEngine();
  let compiledFrom: RuleList | undefined;
  const runRules: EventHandler = (event) => {
    const list = rules.current();
    if (list !== compiledFrom) {
      compiledFrom = list;
      for (const failure of engine.load(list))
        log(`[rules] rule "${failure.ruleName}" cannot be used: ${failure.message}`);
    }
    const { actions, errors } = engine.evaluate(event);
    for (const error of errors)
      log(`[rules] rule "${error.ruleName}" failed on a ${event.type} event: ${error.message}`);
    const firedRules: string[] = [];
    for (const action of actions)
      if (firedRules[firedRules.length - 1] !== action.ruleId) firedRules.push(action.ruleId);
    // Overlay commands nothing waits for go out now; the rest runs without holding up this event.
    runner.run(actions);
    return { firedRules };
  };

  // --- widget state ------------------------------------------------------------------------
  const queued = new Map<string, StateOp[]>();

  const flush = (overlayId: string) => {
    const ops = queued.get(overlayId);
    queued.delete(overlayId);
    const overlay = overlays.get(overlayId);
    if (!ops || !overlay) return;
    let widgets = overlay.widgets;
    let changed = false;
    for (const op of ops) {
      let next: Widget[] | undefined;
      if (op.kind === 'event') next = applyEvent(widgets, op.event);
      else {
        const widget = widgets.find((w) => w.id === op.widgetId);
        const reset = widget && applyCommand(widget, op.command);
        next = reset ? [reset] : undefined;
      }
      if (next) {
        widgets = mergeWidgets(widgets, next);
        changed = true;
      }
    }
    // Rankings from the journal: read once per flush, after the events it already holds.
    if (ctx.journal && ops.some((op) => op.kind === 'event')) {
      const journal = ctx.journal;
      const ranked = widgets.map((w) => {
        if (w.type !== 'top-gifters' || !journalRanked(w)) return w;
        const metric = w.metric ?? 'diamonds';
        const entries = journal.leaderboard(w.scope ?? 'session', metric, w.maxEntries).map((v) => ({
          uniqueId: v.uniqueId,
          nickname: v.nickname,
          diamonds: v.diamonds,
          ...(metric === 'diamonds' ? {} : { value: v[metric] }),
        }));
        if (JSON.stringify(entries) === JSON.stringify(w.entries)) return w;
        changed = true;
        return { ...w, entries };
      });
      widgets = ranked;
    }
    if (!changed) return;
    overlays.update({ ...overlay, widgets }).then(
      (result) => {
        if (!result.ok) log(`[state] widget state of overlay ${overlayId} not saved: ${result.message}`);
      },
      (error: unknown) =>
        log(`[state] saving widget state of overlay ${overlayId} failed: ${errorMessage(error)}`),
    );
  };

  const coalescer = new UpdateCoalescer(flush, {
    ...(options.intervalMs !== undefined ? { intervalMs: options.intervalMs } : {}),
    ...(options.timers ? { timers: options.timers } : {}),
    onError: (error, overlayId) =>
      log(`[state] updating widget state of overlay ${overlayId} failed: ${errorMessage(error)}`),
  });

  const enqueue = (overlayId: string, op: StateOp) => {
    let ops = queued.get(overlayId);
    if (!ops) {
      ops = [];
      queued.set(overlayId, ops);
    }
    ops.push(op);
    coalescer.mark(overlayId);
  };

  const keepState: EventHandler = (event) => {
    for (const overlay of overlays.list())
      if (overlay.widgets.some((w) => affects(w, event))) enqueue(overlay.id, { kind: 'event', event });
  };

  const stopCommands = hub.onCommand((overlayId, command: OverlayCommandInput) => {
    if (command.command !== 'reset') return;
    const widget = overlays.get(overlayId)?.widgets.find((w) => w.id === command.widgetId);
    if (widget && KEEPS_STATE.has(widget.type))
      enqueue(overlayId, { kind: 'command', widgetId: command.widgetId, command: command.command });
  });
  const stopOverlays = overlays.subscribe((change) => {
    if (change.type !== 'removed') return;
    queued.delete(change.overlayId);
    coalescer.forget(change.overlayId);
  });

  return {
    handlers: [runRules, keepState],
    close() {
      stopCommands();
      stopOverlays();
      coalescer.flushAll();
    },
  };
}
