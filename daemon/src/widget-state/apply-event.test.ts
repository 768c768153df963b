import { describe, expect, it } from 'vitest';
import { parseWith, type StreamEvent, Widget } from '../../../shared/protocol/index.js';
import { applyCommand, applyEvent, mergeWidgets } from './apply-event.js';

function widget(input: Record<string, unknown>): Widget {
  const parsed = parseWith(Widget, { x: 0, y: 0, ...input });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const user = (uniqueId: string) => ({ uniqueId, nickname: uniqueId.toUpperCase() });
const gift = (who: string, repeatCount: number, diamondCount?: number): StreamEvent => ({
  type: 'gift',
  platform: 'api',
  user: user(who),
  data: { giftName: 'Rose', repeatCount, ...(diamondCount === undefined ? {} : { diamondCount }) },
});
const like = (likeCount: number): StreamEvent => ({
  type: 'like',
  platform: 'api',
  user: user('l'),
  data: { likeCount },
});
const simple = (type: 'follow' | 'share' | 'subscribe'): StreamEvent => ({
  type,
  platform: 'api',
  user: user('s'),
  data: {},
});
const chat: StreamEvent = { type: 'chat', platform: 'api', user: user('c'), data: { comment: 'hi' } };

const goal = (source: string, current = 0) =>
  widget({ id: `goal-${source}`, type: 'goal', source, target: 1000, current });
const counter = (source: string | undefined, value = 0) =>
  widget({ id: `counter-${source}`, type: 'counter', ...(source ? { source } : {}), value });

describe('applyEvent: goals and counters', () => {
  it('advances each goal by its own source', () => {
    const widgets = ['likes', 'gifts', 'diamonds', 'follows', 'shares', 'subscribes'].map((s) => goal(s, 10));
    const current = (events: StreamEvent[]) => {
      let state = widgets;
      for (const e of events) state = mergeWidgets(state, applyEvent(state, e) ?? []);
      return Object.fromEntries(state.map((w) => [w.id, w.type === 'goal' ? w.current : -1]));
    };
    expect(
      current([
        like(25),
        gift('a', 3, 5),
        simple('follow'),
        simple('share'),
        simple('subscribe'),
        simple('follow'),
      ]),
    ).toEqual({
      'goal-likes': 35,
      'goal-gifts': 13,
      'goal-diamonds': 25,
      'goal-follows': 12,
      'goal-shares': 11,
      'goal-subscribes': 11,
    });
  });

  it('counts counters by source and leaves source-less counters alone', () => {
    const widgets = [counter('likes', 1), counter(undefined, 7)];
    expect(applyEvent(widgets, like(4))).toEqual([{ ...widgets[0], value: 5 }]);
    expect(applyEvent(widgets, chat)).toBeUndefined();
  });

  it('returns nothing when no widget changed, and never mutates its input', () => {
    const widgets = [goal('diamonds'), widget({ id: 't', type: 'text', content: 'x' })];
    const before = structuredClone(widgets);
    expect(applyEvent(widgets, gift('a', 5))).toBeUndefined(); // no diamondCount: 0 diamonds
    expect(applyEvent(widgets, chat)).toBeUndefined();
    applyEvent(widgets, gift('a', 5, 1));
    expect(widgets).toEqual(before);
  });
});

describe('applyEvent: top gifters', () => {
  const board = (entries: unknown[] = [], maxEntries = 3) =>
    widget({ id: 'top', type: 'top-gifters', maxEntries, entries });
  const entriesAfter = (start: Widget, events: StreamEvent[]) => {
    let state = [start];
    for (const e of events) state = mergeWidgets(state, applyEvent(state, e) ?? []);
    const top = state[0]!;
    return top.type === 'top-gifters' ? top.entries.map((e) => `${e.uniqueId}:${e.diamonds}`) : [];
  };

  it('adds up diamonds per gifter, sorted, capped at maxEntries', () => {
    expect(
      entriesAfter(board(), [
        gift('a', 1, 10),
        gift('b', 5, 5),
        gift('c', 1, 1),
        gift('a', 2, 10),
        gift('d', 1, 2),
      ]),
    ).toEqual(['a:30', 'b:25', 'd:2']);
  });

  it('keeps the first to reach a score ahead on a tie, and updates nicknames', () => {
    const start = board([{ uniqueId: 'x', nickname: 'old', diamonds: 10 }]);
    expect(entriesAfter(start, [gift('y', 10, 1)])).toEqual(['x:10', 'y:10']);
    const changed = applyEvent([start], gift('x', 1, 1));
    expect(changed?.[0]).toMatchObject({ entries: [{ uniqueId: 'x', nickname: 'X', diamonds: 11 }] });
  });

  it('reports no change for a gift too small to enter a full board', () => {
    const full = board(
      [
        { uniqueId: 'a', nickname: 'A', diamonds: 100 },
        { uniqueId: 'b', nickname: 'B', diamonds: 50 },
      ],
      2,
    );
    expect(applyEvent([full], gift('z', 1, 1))).toBeUndefined();
    expect(applyEvent([full], like(10))).toBeUndefined();
  });
});

describe('applyCommand: reset', () => {
  it('zeroes goals, counters and top gifters', () => {
    expect(applyCommand(goal('likes', 50), 'reset')).toMatchObject({ current: 0 });
    expect(applyCommand(counter('likes', 9), 'reset')).toMatchObject({ value: 0 });
    const top = widget({
      id: 'top',
      type: 'top-gifters',
      entries: [{ uniqueId: 'a', nickname: 'A', diamonds: 1 }],
    });
    expect(applyCommand(top, 'reset')).toMatchObject({ entries: [] });
  });

  it('ignores other commands, other kinds, and widgets already at zero', () => {
    expect(applyCommand(goal('likes', 50), 'show-alert')).toBeUndefined();
    expect(applyCommand(goal('likes', 0), 'reset')).toBeUndefined();
    expect(applyCommand(widget({ id: 't', type: 'text', content: 'x' }), 'reset')).toBeUndefined();
  });
});
