// A new widget of each kind with defaults that pass the Widget schema (shared/protocol/widgets.ts), and
// where it goes on the canvas.
import type { Widget, WidgetType } from '../../../shared/protocol/index.js';

export const WIDGET_KINDS: readonly { type: WidgetType; label: string }[] = [
  { type: 'text', label: 'Text' },
  { type: 'image', label: 'Image' },
  { type: 'alert', label: 'Alert' },
  { type: 'goal', label: 'Goal' },
  { type: 'chat', label: 'Chat' },
  { type: 'counter', label: 'Counter' },
  { type: 'event-list', label: 'Event list' },
  { type: 'top-gifters', label: 'Top gifters' },
];

/** "Alert", then "Alert 2", "Alert 3"…: a name for a new widget that no widget of the overlay has. */
export function newWidgetName(type: WidgetType, widgets: readonly Widget[]): string {
  const label = WIDGET_KINDS.find((k) => k.type === type)?.label ?? type;
  const taken = new Set(widgets.map((w) => w.name));
  if (!taken.has(label)) return label;
  for (let n = 2; ; n++) if (!taken.has(`${label} ${n}`)) return `${label} ${n}`;
}

/** How a widget is named on screen: the name a person gave it, else its kind and id. */
export const widgetLabel = (w: Pick<Widget, 'type' | 'id' | 'name'>): string =>
  w.name?.trim() ? `${w.name.trim()} (${w.type})` : `${w.type} · ${w.id}`;

export function newWidgetId(type: WidgetType, taken: ReadonlySet<string>): string {
  for (;;) {
    const id = `${type}-${Math.random().toString(36).slice(2, 8)}`;
    if (!taken.has(id)) return id;
  }
}

/** `imageSrc` is a media file for image widgets (the schema requires one). */
export function defaultWidget(
  type: WidgetType,
  id: string,
  at: { x: number; y: number },
  imageSrc: string | undefined,
): Widget | undefined {
  const { x, y } = at;
  switch (type) {
    case 'text':
      return {
        id,
        type,
        x,
        y,
        content: 'New text',
        fontFamily: 'system-ui, sans-serif',
        fontSize: 48,
        color: '#ffffff',
      };
    case 'image':
      return imageSrc ? { id, type, x, y, width: 320, height: 320, src: imageSrc } : undefined;
    case 'alert':
      // Announces the events a streamer expects an alert for, out of the box; chat, likes and viewer
      // counts are too frequent to alert on.
      return {
        id,
        type,
        x,
        y,
        width: 800,
        height: 240,
        duration: 5000,
        color: '#ffffff',
        fontSize: 48,
        events: ['gift', 'follow', 'share', 'subscribe'],
      };
    case 'goal':
      return {
        id,
        type,
        x,
        y,
        width: 640,
        height: 90,
        title: 'Like goal',
        source: 'likes',
        target: 1000,
        current: 0,
        color: '#ff3b6b',
      };
    case 'chat':
      return { id, type, x, y, width: 480, height: 400, maxMessages: 10, color: '#ffffff', fontSize: 24 };
    case 'counter':
      return { id, type, x, y, label: 'Likes', source: 'likes', value: 0, color: '#ffffff', fontSize: 48 };
    case 'event-list':
      return { id, type, x, y, width: 420, height: 320, maxEvents: 10, color: '#ffffff' };
    case 'top-gifters':
      return { id, type, x, y, width: 420, height: 320, maxEntries: 5, entries: [], color: '#ffffff' };
  }
}

/** The size a widget takes on the canvas: its own, or an estimate for one that sizes to its content. */
function boxOf(w: Widget): { x: number; y: number; width: number; height: number } {
  const fallback =
    w.type === 'text' || w.type === 'counter' ? { width: 400, height: 80 } : { width: 320, height: 240 };
  return { x: w.x, y: w.y, width: w.width ?? fallback.width, height: w.height ?? fallback.height };
}

const overlaps = (a: ReturnType<typeof boxOf>, b: ReturnType<typeof boxOf>) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/**
 * Where a new widget goes: the first place, left to right and top to bottom, where it fits inside the
 * canvas without covering another widget; when there is none, the canvas's top left corner area, inside it.
 */
export function placeWidget(
  widget: Widget,
  canvas: { width: number; height: number; widgets: readonly Widget[] },
): { x: number; y: number } {
  const { width, height } = boxOf(widget);
  const others = canvas.widgets.map(boxOf);
  const margin = Math.round(Math.min(canvas.width, canvas.height) * 0.04);
  const step = 20;
  for (let y = margin; y + height <= canvas.height - margin; y += step) {
    for (let x = margin; x + width <= canvas.width - margin; x += step) {
      const box = { x, y, width, height };
      if (!others.some((o) => overlaps(box, o))) return { x, y };
    }
  }
  const offset = (canvas.widgets.length % 10) * 24;
  return {
    x: Math.max(0, Math.min(margin + offset, canvas.width - width)),
    y: Math.max(0, Math.min(margin + offset, canvas.height - height)),
  };
}
