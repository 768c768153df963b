// The accessible name of a widget on the editor's canvas: the text it shows first (what a sighted user
// goes by, and what speech-input users say), then its kind and place.
import type { Widget } from '../../../../shared/protocol/index.js';

/** The words the canvas preview shows for a widget (widget-preview.tsx), on one line. */
export function widgetVisibleText(w: Widget): string {
  switch (w.type) {
    case 'text':
      return w.content.trim() || '(empty text)';
    case 'image':
      return w.src;
    case 'alert':
      return `Alert · ${(w.duration / 1000).toFixed(1)} s${w.sound ? ' · sound' : ''}`;
    case 'goal':
      return `${w.title || 'Goal'} · ${w.current}/${w.target} ${w.source}`;
    case 'chat':
      return `Chat · last ${w.maxMessages} messages`;
    case 'counter':
      return `${w.label ? `${w.label}: ` : ''}${w.value}`;
    case 'event-list':
      return `Event list · ${w.maxEvents} ${w.eventTypes?.length ? w.eventTypes.join(', ') : 'all events'}`;
    case 'top-gifters':
      return `Top ${w.maxEntries} gifters`;
  }
}

export function widgetAccessibleName(w: Widget): string {
  const text = widgetVisibleText(w).replace(/\s+/g, ' ');
  const shown = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  return `${shown}, ${w.type} widget at ${Math.round(w.x)}, ${Math.round(w.y)}`;
}
