// Widget state the daemon keeps (goal progress, counters, top gifters): how events and commands change it.

import { giftCurrency } from '../../../shared/money.js';
import type { StreamEvent, Widget, WidgetOf } from '../../../shared/protocol/index.js';
import { amountFor, diamondsOf, journalRanked } from '../../../shared/widget-reactions.js';

type Gifter = WidgetOf<'top-gifters'>['entries'][number];

/** Stays a safe integer however long the stream runs. */
const add = (a: number, b: number) => Math.min(Number.MAX_SAFE_INTEGER, a + b);

/** The top gifters after `uniqueId` gave `diamonds`: sorted by diamonds, at most `max` entries. */
function rankGifters(
  entries: readonly Gifter[],
  gifter: Omit<Gifter, 'diamonds'>,
  diamonds: number,
  max: number,
): Gifter[] {
  const next = entries.map((e) =>
    e.uniqueId === gifter.uniqueId
      ? sameUnit({ ...e, nickname: gifter.nickname, diamonds: add(e.diamonds, diamonds) }, gifter)
      : e,
  );
  // Through sameUnit too: the fields in the order the schema gives them, so the file and the broadcast agree.
  if (!entries.some((e) => e.uniqueId === gifter.uniqueId))
    next.push(sameUnit({ ...gifter, diamonds }, gifter));
  // A tie is ordered as on every board of the daemon: by name, then by id.
  return next.sort((a, b) => b.diamonds - a.diamonds || byNameThenId(a, b)).slice(0, max);
}

/** The tie order of every board (the journal's too): the name, A-Z case aside (as SQLite's NOCASE), then the id. */
function byNameThenId(a: Gifter, b: Gifter): number {
  const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const x = fold(a.nickname);
  const y = fold(b.nickname);
  if (x !== y) return x < y ? -1 : 1;
  return a.uniqueId < b.uniqueId ? -1 : a.uniqueId > b.uniqueId ? 1 : 0;
}

/**
 * An entry keeps the platform and currency its sum is in (the page names the unit by them) only while
 * every gift added shares them: bits and diamonds added up are in no unit (`mixed`).
 */
function sameUnit(entry: Gifter, gift: Omit<Gifter, 'diamonds'>): Gifter {
  const { platform, currency, ...rest } = entry;
  return {
    ...rest,
    ...(platform === undefined ? {} : { platform: platform === gift.platform ? platform : 'mixed' }),
    ...(currency !== undefined && currency === gift.currency ? { currency } : {}),
  };
}

function applyToWidget(widget: Widget, event: StreamEvent): Widget | undefined {
  switch (widget.type) {
    case 'goal': {
      const amount = amountFor(widget.source, event);
      return amount > 0 ? { ...widget, current: add(widget.current, amount) } : undefined;
    }
    case 'counter': {
      const amount = widget.source ? amountFor(widget.source, event) : 0;
      return amount > 0 ? { ...widget, value: add(widget.value, amount) } : undefined;
    }
    case 'top-gifters': {
      // The journal ranks these (ingest/pipeline.ts), not the events one by one.
      if (journalRanked(widget)) return undefined;
      const diamonds = diamondsOf(event);
      if (diamonds <= 0) return undefined;
      const currency = giftCurrency(event.platform, event.data.currency);
      const gifter = {
        uniqueId: event.user.uniqueId,
        nickname: event.user.nickname,
        platform: event.platform,
        ...(currency ? { currency } : {}),
      };
      const entries = rankGifters(widget.entries, gifter, diamonds, widget.maxEntries);
      // A small gift from someone outside the list changes nothing.
      return sameGifters(entries, widget.entries) ? undefined : { ...widget, entries };
    }
    default:
      // Text, image, alert, chat and event-list widgets keep no state in the daemon.
      return undefined;
  }
}

function sameGifters(a: readonly Gifter[], b: readonly Gifter[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (e, i) =>
        e.uniqueId === b[i]!.uniqueId && e.nickname === b[i]!.nickname && e.diamonds === b[i]!.diamonds,
    )
  );
}

/**
 * Applies one stream event to an overlay's widgets. Returns the widgets it changed (new objects;
 * the input is not modified), or undefined when none changed.
 */
export function applyEvent(widgets: readonly Widget[], event: StreamEvent): Widget[] | undefined {
  const changed: Widget[] = [];
  for (const widget of widgets) {
    const next = applyToWidget(widget, event);
    if (next) changed.push(next);
  }
  return changed.length > 0 ? changed : undefined;
}

/**
 * The `reset` command (decisions: goal progress, counter value and top-gifters list back to zero).
 * Returns the changed widget, or undefined for another command, another kind, or nothing to reset.
 */
export function applyCommand(widget: Widget, command: string): Widget | undefined {
  if (command !== 'reset') return undefined;
  switch (widget.type) {
    case 'goal':
      return widget.current === 0 ? undefined : { ...widget, current: 0 };
    case 'counter':
      return widget.value === 0 ? undefined : { ...widget, value: 0 };
    case 'top-gifters':
      return widget.entries.length === 0 ? undefined : { ...widget, entries: [] };
    default:
      return undefined;
  }
}

/** The full widget list with `changed` swapped in by id (order kept). */
export function mergeWidgets(widgets: readonly Widget[], changed: readonly Widget[]): Widget[] {
  const byId = new Map(changed.map((w) => [w.id, w]));
  return widgets.map((w) => byId.get(w.id) ?? w);
}
