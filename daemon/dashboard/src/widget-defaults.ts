// A new widget of each kind with defaults that pass the Widget schema of shared/protocol.ts.
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
      return { id, type, x, y, width: 800, height: 240, duration: 5000, color: '#ffffff', fontSize: 48 };
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
