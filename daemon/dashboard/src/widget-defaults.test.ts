import { describe, expect, it } from 'vitest';
import { parseWith, Widget, type Widget as WidgetValue } from '../../../shared/protocol/index.js';
import {
  defaultWidget,
  newWidgetId,
  newWidgetName,
  placeWidget,
  WIDGET_KINDS,
  widgetLabel,
} from './widget-defaults.js';

const at = { x: 10, y: 20 };

describe('a new widget of each kind', () => {
  it('passes the Widget schema the daemon checks saves with, for every kind the editor offers', () => {
    for (const { type } of WIDGET_KINDS) {
      const widget = defaultWidget(type, `${type}-1`, at, 'logo.png');
      expect(widget, type).toBeDefined();
      const parsed = parseWith(Widget, widget);
      expect(parsed.ok ? 'valid' : parsed.error, type).toBe('valid');
      expect(widget).toMatchObject({ id: `${type}-1`, type, x: 10, y: 20 });
    }
  });

  it('an image needs a media file: none without one', () => {
    expect(defaultWidget('image', 'i', at, undefined)).toBeUndefined();
    expect(defaultWidget('image', 'i', at, 'cat.gif')).toMatchObject({ src: 'cat.gif' });
  });

  it('an alert announces gifts, follows, shares and subscriptions out of the box, not chat or likes', () => {
    const alert = defaultWidget('alert', 'a', at, undefined);
    expect(alert?.type === 'alert' ? alert.events : undefined).toEqual([
      'gift',
      'follow',
      'share',
      'subscribe',
    ]);
  });
});

describe('names and ids', () => {
  const named = (name: string): WidgetValue => ({ ...defaultWidget('alert', name, at, undefined)!, name });

  it('names a new widget by its kind, numbered past the names already taken', () => {
    expect(newWidgetName('alert', [])).toBe('Alert');
    expect(newWidgetName('alert', [named('Alert')])).toBe('Alert 2');
    expect(newWidgetName('alert', [named('Alert'), named('Alert 2'), named('Alert 4')])).toBe('Alert 3');
    expect(newWidgetName('top-gifters', [named('Alert')])).toBe('Top gifters');
  });

  it('shows a widget by the name a person gave it, else by its kind and id', () => {
    expect(widgetLabel({ type: 'goal', id: 'goal-1', name: '  Like goal ' })).toBe('Like goal (goal)');
    expect(widgetLabel({ type: 'goal', id: 'goal-1', name: '   ' })).toBe('goal · goal-1');
    expect(widgetLabel({ type: 'goal', id: 'goal-1' })).toBe('goal · goal-1');
  });

  it('makes an id of the kind that no widget of the overlay has', () => {
    const taken = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const id = newWidgetId('counter', taken);
      expect(id).toMatch(/^counter-[a-z0-9]+$/);
      expect(taken.has(id)).toBe(false);
      taken.add(id);
    }
  });
});

describe('where a new widget goes', () => {
  const canvas = (widgets: WidgetValue[]) => ({ width: 1920, height: 1080, widgets });
  const box = (w: WidgetValue, p: { x: number; y: number }) => ({
    x: p.x,
    y: p.y,
    width: w.width ?? 400,
    height: w.height ?? 80,
  });
  const overlap = (a: ReturnType<typeof box>, b: ReturnType<typeof box>) =>
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

  it('inside the canvas and over no widget already there', () => {
    const placed: WidgetValue[] = [];
    for (let i = 0; i < 6; i++) {
      const w = defaultWidget('goal', `g${i}`, { x: 0, y: 0 }, undefined)!;
      const p = placeWidget(w, canvas(placed));
      const b = box(w, p);
      expect(b.x).toBeGreaterThanOrEqual(0);
      expect(b.y).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width).toBeLessThanOrEqual(1920);
      expect(b.y + b.height).toBeLessThanOrEqual(1080);
      for (const other of placed) expect(overlap(b, box(other, other))).toBe(false);
      placed.push({ ...w, ...p });
    }
  });

  it('when nothing is free, still inside the canvas', () => {
    const full = defaultWidget('image', 'bg', { x: 0, y: 0 }, 'bg.png')!;
    const cover = { ...full, width: 1920, height: 1080 };
    const w = defaultWidget('chat', 'c', { x: 0, y: 0 }, undefined)!;
    const p = placeWidget(w, canvas([cover]));
    expect(p.x).toBeGreaterThanOrEqual(0);
    expect(p.y).toBeGreaterThanOrEqual(0);
    expect(p.x + (w.width ?? 0)).toBeLessThanOrEqual(1920);
    expect(p.y + (w.height ?? 0)).toBeLessThanOrEqual(1080);
  });
});
