// What a widget does by itself with a stream event, shared by the daemon (the state it keeps), the overlay
// page (what it shows) and the dashboard (why an overlay showed nothing).
import type { StreamEvent, StreamEventType, Widget, WidgetOf } from './protocol/index.js';

type Source = NonNullable<WidgetOf<'counter'>['source']>;

/** How much one event adds to a goal or counter fed by `source` (0: nothing). */
export function amountFor(source: Source, event: StreamEvent): number {
  switch (source) {
    case 'likes':
      return event.type === 'like' ? event.data.likeCount : 0;
    case 'gifts':
      return event.type === 'gift' ? event.data.repeatCount : 0;
    case 'diamonds':
      return diamondsOf(event);
    case 'follows':
      return event.type === 'follow' ? 1 : 0;
    case 'shares':
      return event.type === 'share' ? 1 : 0;
    case 'subscribes':
      return event.type === 'subscribe' ? 1 : 0;
  }
}

/** Diamonds of a gift event: the gift's value × how many were sent. */
export function diamondsOf(event: StreamEvent): number {
  return event.type === 'gift'
    ? Math.min(Number.MAX_SAFE_INTEGER, (event.data.diamondCount ?? 0) * event.data.repeatCount)
    : 0;
}

/** An alert widget announces the event types it lists, besides the `show-alert` commands it gets. */
export const alertAnnounces = (widget: WidgetOf<'alert'>, type: StreamEventType): boolean =>
  widget.events?.includes(type) ?? false;

/** An event list shows the types it lists, or every type when it lists none. */
export const eventListShows = (widget: WidgetOf<'event-list'>, type: StreamEventType): boolean =>
  !widget.eventTypes || widget.eventTypes.includes(type);

/** Whether the widget changes on screen because of the event, without any rule. */
export function widgetReactsTo(widget: Widget, event: StreamEvent): boolean {
  switch (widget.type) {
    case 'chat':
      return event.type === 'chat';
    case 'event-list':
      return eventListShows(widget, event.type);
    case 'alert':
      return alertAnnounces(widget, event.type);
    case 'goal':
      return amountFor(widget.source, event) > 0;
    case 'counter':
      return widget.source !== undefined && amountFor(widget.source, event) > 0;
    case 'top-gifters':
      if (journalRanked(widget))
        // Ranked from the journal: any event that adds to a viewer's figures may move it.
        return (
          event.type === 'gift' ||
          event.type === 'like' ||
          event.type === 'chat' ||
          event.type === 'follow' ||
          event.type === 'share'
        );
      return diamondsOf(event) > 0;
    default:
      return false;
  }
}

/** A top-gifters widget whose ranking comes from the event journal (it names a scope or a metric). */
export function journalRanked(widget: Widget): boolean {
  return widget.type === 'top-gifters' && (widget.scope !== undefined || widget.metric !== undefined);
}
