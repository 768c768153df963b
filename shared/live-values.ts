// Live widget values (goal progress, counter values, the top-gifters list): stream events and `reset` own
// them, never a saved layout. The daemon keeps them apart from the overlay files (live-values.json) and
// merges them into every layout it puts in force; the dashboard's editor takes them into the layout it
// holds, so what it shows follows the stream.
import * as v from 'valibot';
import { LiveWidgetValue, Uuid, type Widget, WidgetId } from './protocol/index.js';

/**
 * live-values.json in the data directory: by overlay id, then by widget id, the value each widget keeps
 * from stream events. The overlay files hold the layouts; events never rewrite them.
 */
export const LiveValuesFile = v.object({
  overlays: v.record(
    Uuid,
    v.pipe(
      v.record(WidgetId, LiveWidgetValue),
      v.check((r) => Object.keys(r).length <= 200, 'at most 200 widgets per overlay'),
    ),
  ),
});
export type LiveValuesFile = v.InferOutput<typeof LiveValuesFile>;

/** The value `widget` keeps from events; undefined for a kind that keeps none. */
export function liveValueOf(widget: Widget): LiveWidgetValue | undefined {
  if (widget.type === 'goal') return { type: 'goal', current: widget.current };
  if (widget.type === 'counter') return { type: 'counter', value: widget.value };
  if (widget.type === 'top-gifters') return { type: 'top-gifters', entries: widget.entries };
  return undefined;
}

/** `widget` showing `value` when both are of one kind; `widget` itself when nothing differs. */
export function withLiveWidgetValue(widget: Widget, value: LiveWidgetValue): Widget {
  if (widget.type === 'goal' && value.type === 'goal')
    return widget.current === value.current ? widget : { ...widget, current: value.current };
  if (widget.type === 'counter' && value.type === 'counter')
    return widget.value === value.value ? widget : { ...widget, value: value.value };
  if (widget.type === 'top-gifters' && value.type === 'top-gifters')
    return JSON.stringify(widget.entries) === JSON.stringify(value.entries)
      ? widget
      : { ...widget, entries: value.entries };
  return widget;
}

/** Whether two live values are the same (kind and value). */
export function sameLiveValue(a: LiveWidgetValue | undefined, b: LiveWidgetValue | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b));
}

/** The widget with the live value of `live` when both are the same kind of widget that keeps one. */
function withLiveValue(widget: Widget, live: Widget): Widget {
  const value = liveValueOf(live);
  return value ? withLiveWidgetValue(widget, value) : widget;
}

/**
 * `widgets` (a layout being saved or edited) with the live values of the widgets in force, matched by
 * id and kind. A widget new to the layout keeps its own starting value. Returns `widgets` itself when
 * nothing differs, so a caller can tell a real change by identity.
 */
export function keepLiveValues(widgets: Widget[], inForce: readonly Widget[]): Widget[] {
  const live = new Map(inForce.map((w) => [w.id, w]));
  let changed = false;
  const next = widgets.map((widget) => {
    const current = live.get(widget.id);
    const kept = current ? withLiveValue(widget, current) : widget;
    if (kept !== widget) changed = true;
    return kept;
  });
  return changed ? next : widgets;
}
