// Where an event shows up: on each overlay, the widgets that react to it by themselves and the fired rules
// that send it a command. An overlay with neither shows nothing, and the dashboard says why.
import type { Overlay, StreamEvent, Widget } from '../../../shared/protocol/index.js';
import { isOverlayAction, type RuleList } from '../../../shared/rules.js';
import { widgetReactsTo } from '../../../shared/widget-reactions.js';
import { widgetLabel } from './widget-defaults.js';

export interface Reach {
  overlay: Overlay;
  /** Widgets that change by themselves (an alert that announces the type, a goal that counts it…). */
  widgets: string[];
  /** Fired rules with an action for this overlay. */
  rules: string[];
}

const KEEPS_VALUE = new Set<Widget['type']>(['goal', 'counter', 'top-gifters']);

/** Where a test event shows up (one sent from the dashboard). */
export function reachOf(
  event: StreamEvent,
  overlay: Overlay,
  rules: RuleList,
  firedRules: readonly string[],
): Reach {
  const fired = new Set(firedRules);
  return {
    overlay,
    // The dashboard sends test events: they move no kept value (goal, counter, top gifters).
    widgets: overlay.widgets
      .filter((w) => !KEEPS_VALUE.has(w.type) && widgetReactsTo(w, event))
      .map(widgetLabel),
    rules: rules
      .filter(
        (r) => fired.has(r.id) && r.actions.some((a) => isOverlayAction(a) && a.overlayId === overlay.id),
      )
      .map((r) => r.name || r.id),
  };
}

/** Why nothing on the overlay showed the event, in a streamer's words. */
export function whyNothingShows(event: StreamEvent, overlay: Overlay): string {
  const alerts = overlay.widgets.filter((w) => w.type === 'alert');
  const fix =
    alerts.length > 0
      ? `tick “${event.type}” under “Announce these events” of its alert widget, or make a rule that sends it a show-alert`
      : 'add an alert widget, or make a rule that sends one of its widgets a command';
  return `Nothing on “${overlay.name}” shows ${event.type} events: no widget announces them and no rule targets this overlay. To change that, ${fix}.`;
}
