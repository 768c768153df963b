// What a new rule and a new action start as, and the payload each command starts with.
import type { Overlay, StreamEventType } from '../../../../shared/protocol/index.js';
import type { ActionKind, OverlayRuleAction, Rule, RuleAction } from '../../../../shared/rules.js';

/** The event in one line, a gift in its platform's unit: "Bob cheered 100 bits", "Erin sent 3 × Rose". */
const DEFAULT_ALERT_TEXT = '{summary}';

/** The payload a command starts with when it is chosen (a custom command starts empty). */
export function startingPayload(command: string): Record<string, unknown> {
  if (command === 'show-alert') return { text: DEFAULT_ALERT_TEXT, duration: 5000 };
  if (command === 'set-text') return { text: '{user.nickname}' };
  return {};
}

/** The widget an action on `overlay` targets by default: its first alert, else its first widget. */
export function defaultWidgetId(overlay: Overlay | undefined): string {
  return (overlay?.widgets.find((w) => w.type === 'alert') ?? overlay?.widgets[0])?.id ?? '';
}

export function newAction(overlays: Overlay[]): OverlayRuleAction {
  const overlay = overlays[0];
  return {
    overlayId: overlay?.id ?? '',
    widgetId: defaultWidgetId(overlay),
    command: 'show-alert',
    payload: startingPayload('show-alert'),
  };
}

/** What a Speak action starts by saying: words the rule's trigger fills in. */
const STARTING_SPEECH: Record<StreamEventType, string> = {
  gift: 'Thank you {user.nickname} for {data.repeatCount} {data.giftName}',
  chat: '{user.nickname} says {data.comment}',
  like: 'Thank you for the likes, {user.nickname}',
  follow: 'Welcome, {user.nickname}',
  share: 'Thank you for sharing, {user.nickname}',
  subscribe: 'Thank you for subscribing, {user.nickname}',
  viewer: '{data.viewerCount} watching',
};

/** What a Chat action starts by saying: words the rule's trigger fills in. */
const STARTING_CHAT: Record<StreamEventType, string> = {
  gift: 'Thank you {user.nickname} for {data.repeatCount} × {data.giftName}!',
  chat: '@{user.nickname} hello!',
  like: 'Thank you for the likes, {user.nickname}!',
  follow: 'Welcome, {user.nickname}!',
  share: 'Thank you for sharing, {user.nickname}!',
  subscribe: 'Thank you for subscribing, {user.nickname}!',
  viewer: '{data.viewerCount} watching, thank you all!',
};

/** What an action of each kind starts as when it is chosen. */
export function startingAction(
  kind: ActionKind,
  overlays: Overlay[],
  trigger: StreamEventType = 'chat',
): RuleAction {
  switch (kind) {
    case 'overlay':
      return newAction(overlays);
    case 'speak':
      return { kind, overlayId: overlays[0]?.id ?? '', text: STARTING_SPEECH[trigger] };
    case 'obs':
      return { kind, request: 'SetCurrentProgramScene', params: { sceneName: '' } };
    case 'webhook':
      return { kind, url: '', body: { user: '{user.nickname}', type: '{type}' } };
    case 'streamerbot':
      return { kind, action: '', args: { user: '{user.nickname}' } };
    case 'chat':
      return { kind, text: STARTING_CHAT[trigger], platform: 'same' };
  }
}

const randomId = () => `rule-${Math.random().toString(36).slice(2, 8)}`;

export function newRule(overlays: Overlay[], taken: Set<string>): Rule {
  let id = randomId();
  while (taken.has(id)) id = randomId();
  return {
    id,
    name: 'New rule',
    enabled: true,
    trigger: 'gift',
    conditions: {},
    cooldownMs: 0,
    actions: [newAction(overlays)],
  };
}
