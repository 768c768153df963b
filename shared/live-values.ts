// Live widget values (goal progress, counter values, the top-gifters list): stream events and `reset` own
// them, never a saved layout. The daemon keeps them when it applies a save; the dashboard's editor
// takes them into the layout it holds, so what it shows follows the stream.
import type { Widget } from './protocol/index.js';

/** The widget with the live value of `live` when both are the same kind of widget that keeps one. */
function withLiveValue(widget: Widget, live: Widget): Widget {
  if (widget.type === 'goal' && live.type === 'goal')
    return widget.current === live.current ? widget : { ...widget, current: live.current };
  if (widget.type === 'counter' && live.type === 'counter')
    return widget.value === live.value ? widget : { ...widget, value: live.value };
  if (widget.type === 'top-gifters' && live.type === 'top-gifters')
    return JSON.stringify(widget.entries) === JSON.stringify(live.entries)
      ? widget
      : { ...widget, entries: live.entries };
  return widget;
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
