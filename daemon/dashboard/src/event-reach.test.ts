import { describe, expect, it } from 'vitest';
import { type Overlay, parseWith, type StreamEvent } from '../../../shared/protocol/index.js';
import { RuleList } from '../../../shared/rules.js';
import { reachOf, whyNothingShows } from './event-reach.js';
import { defaultWidget } from './widget-defaults.js';

const OVERLAY = '6f1c7c7e-3b5e-4c1a-9d8e-2f4b5a6c7d8e';
const OTHER = '0b1c7c7e-3b5e-4c1a-9d8e-2f4b5a6c7d8e';

const gift: StreamEvent = {
  type: 'gift',
  platform: 'api',
  user: { uniqueId: 'rosa', nickname: 'Rosa' },
  data: { giftName: 'Rose', repeatCount: 1, diamondCount: 1 },
};
const chat: StreamEvent = {
  type: 'chat',
  platform: 'api',
  user: { uniqueId: 'c', nickname: 'C' },
  data: { comment: 'hi' },
};

const at = { x: 0, y: 0 };
const overlay = (widgets: Overlay['widgets']): Overlay => ({
  id: OVERLAY,
  name: 'Main',
  public: false,
  width: 1920,
  height: 1080,
  widgets,
});

function rules(input: unknown[]) {
  const parsed = parseWith(RuleList, input);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}
const command = (overlayId: string) => ({ overlayId, widgetId: 'alerts', command: 'show-alert' });

describe('where an event shows up', () => {
  const alert = { ...defaultWidget('alert', 'alerts', at, undefined)!, name: 'Gift alert' };
  const chatBox = defaultWidget('chat', 'chat-1', at, undefined)!;
  const goal = defaultWidget('goal', 'goal-1', at, undefined)!; // counts likes

  it('leaves out the widgets that keep a value: a test event moves none', () => {
    const gifts = { ...defaultWidget('goal', 'goal-2', at, undefined)!, source: 'diamonds' as const };
    const top = defaultWidget('top-gifters', 'top-1', at, undefined)!;
    expect(reachOf(gift, overlay([alert, gifts, top]), [], []).widgets).toEqual(['Gift alert (alert)']);
  });

  it('lists the widgets that react to it by themselves, by their names', () => {
    const reach = reachOf(gift, overlay([alert, chatBox, goal]), [], []);
    expect(reach.widgets).toEqual(['Gift alert (alert)']);
    expect(reachOf(chat, overlay([alert, chatBox, goal]), [], []).widgets).toEqual(['chat · chat-1']);
  });

  it('lists only the fired rules with an action for this overlay', () => {
    const list = rules([
      { id: 'r1', name: 'Big gift', trigger: 'gift', actions: [command(OVERLAY)] },
      { id: 'r2', trigger: 'gift', actions: [command(OVERLAY)] },
      { id: 'r3', name: 'Elsewhere', trigger: 'gift', actions: [command(OTHER)] },
      { id: 'r4', name: 'Not fired', trigger: 'gift', actions: [command(OVERLAY)] },
      {
        id: 'r5',
        name: 'Webhook only',
        trigger: 'gift',
        actions: [{ kind: 'webhook', url: 'http://127.0.0.1:9/x' }],
      },
    ]);
    const reach = reachOf(gift, overlay([]), list, ['r1', 'r2', 'r3', 'r5']);
    expect(reach.rules).toEqual(['Big gift', 'r2']);
    expect(reach.widgets).toEqual([]);
  });

  it('says why nothing shows, with the fix that fits the overlay', () => {
    expect(whyNothingShows(gift, overlay([alert]))).toBe(
      'Nothing on “Main” shows gift events: no widget announces them and no rule targets this overlay. To change that, tick “gift” under “Announce these events” of its alert widget, or make a rule that sends it a show-alert.',
    );
    expect(whyNothingShows(chat, overlay([goal]))).toMatch(
      /^Nothing on “Main” shows chat events: .* To change that, add an alert widget, or make a rule that sends one of its widgets a command\.$/,
    );
  });
});
