// The values widgets keep from stream events (goal `current`, counter `value`, top-gifters `entries`) have
// one owner: this store. It applies events and `reset` commands, keeps the values apart from the overlay
// files in live-values.json, and merges them into every layout the overlay store puts in force, so the
// page, the dashboard and GET /api/overlays/:id see them. Events never rewrite an overlay file.
//
// - Events and resets are queued per overlay and applied by an UpdateCoalescer: at most one
//   `overlay-update` per overlay per 100 ms, the last change never lost. The queue holds the operations,
//   not a computed state; they are replayed on the overlay in force at flush time, so a layout saved
//   meanwhile (editor, file) is kept and nothing is counted twice.
// - live-values.json (mode 0600) is written atomically, at most once per second while values move, and
//   at shutdown. A data directory without it (a first start after an update) takes the values the
//   overlay files hold, and writes it at once.
// - A layout taking force (a save, a hand edit, a start) keeps the live values of its widgets, matched by
//   id and kind; a widget new to it starts from the value the layout gives. A hand edit of the overlay
//   file that changes a value sets it. A widget that leaves the layout leaves the store with it.
import { rename } from 'node:fs/promises';
import {
  LiveValuesFile,
  liveValueOf,
  sameLiveValue,
  withLiveWidgetValue,
} from '../../../shared/live-values.js';
import type {
  LiveWidgetValue,
  Overlay,
  OverlayCommandInput,
  StreamEvent,
  Widget,
} from '../../../shared/protocol/index.js';
import { journalRanked, widgetReactsTo } from '../../../shared/widget-reactions.js';
import { errorMessage } from '../errors.js';
import type { Journal, ViewerFigures } from '../journal/journal.js';
import type { LiveValuesLayer, OverlayStore } from '../store/overlay-store.js';
import { readPrivateJson, writePrivateJson } from '../store/private-json-file.js';
import type { TimerHandle, Timers } from '../timers.js';
import { systemTimers } from '../timers.js';
import { applyCommand, applyEvent, mergeWidgets } from './apply-event.js';
import { UpdateCoalescer } from './coalescer.js';

interface LiveValuesStoreOptions {
  /** live-values.json in the data directory. */
  path: string;
  log: (line: string) => void;
  /** Minimum time between two `overlay-update`s of one overlay (default 100 ms). */
  intervalMs?: number;
  /** How long moved values wait before they are written, so a burst costs one write (default 1000 ms). */
  writeDelayMs?: number;
  timers?: Timers;
}

/** What the store works with once the daemon is composed. */
interface LiveValuesContext {
  overlays: Pick<OverlayStore, 'get' | 'list' | 'showLiveValues'>;
  /** Every command sent (API or rule): `reset` zeroes a kept value. */
  commands?: { onCommand(listener: (overlayId: string, command: OverlayCommandInput) => void): () => void };
  /** Rankings of top-gifters widgets with a scope or metric come from the journal. */
  journal?: Pick<Journal, 'leaderboard'>;
}

/** A change queued for an overlay's kept values, replayed in order at flush time. */
type StateOp = { kind: 'event'; event: StreamEvent } | { kind: 'command'; widgetId: string; command: string };

const KEEPS_STATE = new Set<Widget['type']>(['goal', 'counter', 'top-gifters']);

/** Whether an event can change a widget's kept value (whatever that value is by flush time). */
const affects = (widget: Widget, event: StreamEvent): boolean =>
  KEEPS_STATE.has(widget.type) && widgetReactsTo(widget, event);

export class LiveValuesStore implements LiveValuesLayer {
  readonly path: string;
  readonly #values = new Map<string, Map<string, LiveWidgetValue>>();
  readonly #queued = new Map<string, StateOp[]>();
  readonly #log: (line: string) => void;
  readonly #timers: Timers;
  readonly #writeDelayMs: number;
  readonly #coalescer: UpdateCoalescer;
  #context: LiveValuesContext | undefined;
  #stopCommands: (() => void) | undefined;
  #closed = false;
  /** Values changed since the last write. */
  #dirty = false;
  #writeTimer: TimerHandle | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(options: LiveValuesStoreOptions) {
    this.path = options.path;
    this.#log = options.log;
    this.#timers = options.timers ?? systemTimers();
    this.#writeDelayMs = options.writeDelayMs ?? 1000;
    this.#coalescer = new UpdateCoalescer((overlayId) => this.#flush(overlayId), {
      ...(options.intervalMs !== undefined ? { intervalMs: options.intervalMs } : {}),
      timers: this.#timers,
      onError: (error, overlayId) =>
        this.#log(`[state] updating widget state of overlay ${overlayId} failed: ${errorMessage(error)}`),
    });
  }

  /**
   * Reads live-values.json. Absent (a first start, or a data directory from before it existed): the
   * overlay files' values are taken as the layouts load, and `settle` writes them. A file that does not
   * read is moved aside, said in the log, and the overlay files' values are taken likewise.
   */
  async load(): Promise<void> {
    const read = await readPrivateJson(this.path, LiveValuesFile);
    if (read.ok && read.record) {
      for (const [overlayId, widgets] of Object.entries(read.record.overlays))
        this.#values.set(overlayId, new Map(Object.entries(widgets)));
      return;
    }
    this.#dirty = true;
    if (read.ok) return;
    const aside = `${this.path}.unreadable`;
    await rename(this.path, aside).catch(() => {});
    this.#log(
      `[state] ${this.path} could not be read (${read.error}); moved to ${aside}, the values in the overlay files are used`,
    );
  }

  /** After the layouts loaded: forgets overlays that are gone and writes what the start changed. */
  async settle(overlayIds: Iterable<string>): Promise<void> {
    const present = new Set(overlayIds);
    for (const overlayId of [...this.#values.keys()])
      if (!present.has(overlayId)) {
        this.#values.delete(overlayId);
        this.#dirty = true;
      }
    await this.flush();
  }

  /** Starts applying events and resets to the overlays in force. */
  attach(context: LiveValuesContext): void {
    this.#context = context;
    this.#stopCommands = context.commands?.onCommand((overlayId, command) => {
      if (command.command !== 'reset') return;
      const widget = context.overlays.get(overlayId)?.widgets.find((w) => w.id === command.widgetId);
      if (widget && KEEPS_STATE.has(widget.type))
        this.#enqueue(overlayId, { kind: 'command', widgetId: command.widgetId, command: command.command });
    });
  }

  /** The step of event handling that moves the kept values (after the rules). */
  readonly handleEvent = (event: StreamEvent): void => {
    const overlays = this.#context?.overlays;
    if (!overlays) return;
    for (const overlay of overlays.list())
      if (overlay.widgets.some((w) => affects(w, event))) this.#enqueue(overlay.id, { kind: 'event', event });
  };

  /** The kept value of one widget, if it keeps one. */
  valueOf(overlayId: string, widgetId: string): LiveWidgetValue | undefined {
    return this.#values.get(overlayId)?.get(widgetId);
  }

  adopt(overlay: Overlay, before?: Overlay): Overlay {
    const kept = this.#values.get(overlay.id);
    const next = new Map<string, LiveWidgetValue>();
    const widgets = overlay.widgets.map((widget) => {
      const own = liveValueOf(widget);
      if (!own) return widget;
      const live = kept?.get(widget.id);
      const previous = before?.widgets.find((w) => w.id === widget.id);
      // The file's previous version said otherwise: a person changed the value by hand.
      const edited =
        previous !== undefined && previous.type === widget.type && !sameLiveValue(liveValueOf(previous), own);
      if (edited || !live || live.type !== own.type) {
        next.set(widget.id, own);
        return widget;
      }
      next.set(widget.id, live);
      return withLiveWidgetValue(widget, live);
    });
    if (!sameValues(kept, next)) {
      if (next.size > 0) this.#values.set(overlay.id, next);
      else this.#values.delete(overlay.id);
      this.#changed();
    }
    return widgets.every((w, i) => w === overlay.widgets[i]) ? overlay : { ...overlay, widgets };
  }

  forget(overlayId: string): void {
    this.#queued.delete(overlayId);
    this.#coalescer.forget(overlayId);
    if (this.#values.delete(overlayId)) this.#changed();
  }

  /** Writes the values now if they changed since the last write; settles once they are on disk. */
  async flush(): Promise<void> {
    if (this.#writeTimer !== undefined) {
      this.#timers.clearTimeout(this.#writeTimer);
      this.#writeTimer = undefined;
    }
    if (this.#dirty) this.#write();
    await this.#writing;
  }

  /** Applies every waiting change (the page is told), stops listening and writes the values. */
  close(): Promise<void> {
    this.#stopCommands?.();
    this.#stopCommands = undefined;
    this.#coalescer.flushAll();
    this.#context = undefined;
    this.#closed = true;
    return this.flush();
  }

  #enqueue(overlayId: string, op: StateOp): void {
    let ops = this.#queued.get(overlayId);
    if (!ops) {
      ops = [];
      this.#queued.set(overlayId, ops);
    }
    ops.push(op);
    this.#coalescer.mark(overlayId);
  }

  #flush(overlayId: string): void {
    const ops = this.#queued.get(overlayId);
    this.#queued.delete(overlayId);
    const context = this.#context;
    const overlay = context?.overlays.get(overlayId);
    if (!ops || !overlay || !context) return;
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
    const journal = context.journal;
    if (journal && ops.some((op) => op.kind === 'event')) {
      widgets = widgets.map((w) => {
        if (w.type !== 'top-gifters' || !journalRanked(w)) return w;
        const metric = w.metric ?? 'diamonds';
        const entries = journal.leaderboard(w.scope ?? 'session', metric, w.maxEntries).map((v) => ({
          uniqueId: v.uniqueId,
          nickname: v.nickname,
          diamonds: v.diamonds,
          // Gift value in the unit of the platform it came from, as the classic board names it.
          ...(metric === 'diamonds' ? unitOf(v) : { value: v[metric] }),
        }));
        if (JSON.stringify(entries) === JSON.stringify(w.entries)) return w;
        changed = true;
        return { ...w, entries };
      });
    }
    if (!changed) return;
    let values = this.#values.get(overlayId);
    if (!values) {
      values = new Map();
      this.#values.set(overlayId, values);
    }
    for (const widget of widgets) {
      const value = liveValueOf(widget);
      if (value && !sameLiveValue(values.get(widget.id), value)) values.set(widget.id, value);
    }
    this.#changed();
    context.overlays.showLiveValues({ ...overlay, widgets });
  }

  #changed(): void {
    this.#dirty = true;
    if (this.#writeTimer !== undefined || this.#closed) return;
    this.#writeTimer = this.#timers.setTimeout(() => {
      this.#writeTimer = undefined;
      this.#write();
    }, this.#writeDelayMs);
  }

  /** Queues one write of the values as they are now; writes never overlap. */
  #write(): void {
    this.#dirty = false;
    const overlays: LiveValuesFile['overlays'] = {};
    for (const [overlayId, widgets] of this.#values) overlays[overlayId] = Object.fromEntries(widgets);
    const record: LiveValuesFile = { overlays };
    this.#writing = this.#writing.then(() =>
      writePrivateJson(this.path, record).catch((err: unknown) => {
        // Kept in memory and written again with the next change (or at shutdown).
        this.#dirty = true;
        this.#log(`[state] could not write ${this.path}: ${errorMessage(err)}`);
      }),
    );
  }
}

/** The unit of a viewer's gift value from the journal, as a board entry carries it (none when unknown). */
function unitOf({ platform, currency }: ViewerFigures): Pick<ViewerFigures, 'platform' | 'currency'> {
  return { ...(platform ? { platform } : {}), ...(currency ? { currency } : {}) };
}

function sameValues(
  a: ReadonlyMap<string, LiveWidgetValue> | undefined,
  b: ReadonlyMap<string, LiveWidgetValue>,
): boolean {
  if ((a?.size ?? 0) !== b.size) return false;
  for (const [id, value] of b) if (!sameLiveValue(a?.get(id), value)) return false;
  return true;
}

/** The overlay `layout` as the store on disk (`file`, live-values.json's content) shows it. */
export function withStoredValues(layout: Overlay, file: LiveValuesFile): Overlay {
  const values = file.overlays[layout.id] ?? {};
  return {
    ...layout,
    widgets: layout.widgets.map((w) => {
      const value = values[w.id];
      return value ? withLiveWidgetValue(w, value) : w;
    }),
  };
}
