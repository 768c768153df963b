// The first start's content: a demo overlay with one widget of each live kind, and the rule that feeds it.
import { randomUUID } from 'node:crypto';
import type { Overlay } from '../../../shared/protocol/index.js';
import type { RuleList } from '../../../shared/rules.js';

/** The first start's overlay: one widget of each live kind, so a streamer sees the system at work at once. */
export function demoOverlay(): Overlay {
  return {
    id: randomUUID(),
    name: 'Demo overlay',
    public: false,
    width: 1920,
    height: 1080,
    widgets: [
      {
        id: 'welcome',
        type: 'text',
        x: 80,
        y: 80,
        content: 'Welcome to the stream!',
        fontFamily: 'system-ui, sans-serif',
        fontSize: 64,
        color: '#ffffff',
      },
      {
        // No `events`: it shows what the demo rule sends, so a gift is announced once.
        id: 'alerts',
        type: 'alert',
        x: 460,
        y: 380,
        width: 1000,
        height: 200,
        duration: 5000,
        color: '#ffffff',
        fontSize: 56,
      },
      {
        id: 'like-goal',
        type: 'goal',
        x: 80,
        y: 940,
        width: 720,
        title: 'Like goal',
        source: 'likes',
        target: 1000,
        current: 0,
        color: '#ff3b6b',
      },
      {
        id: 'chat',
        type: 'chat',
        x: 1420,
        y: 560,
        width: 440,
        maxMessages: 8,
        color: '#ffffff',
        fontSize: 26,
      },
      {
        id: 'top-gifters',
        type: 'top-gifters',
        x: 1420,
        y: 80,
        width: 440,
        maxEntries: 5,
        entries: [],
        color: '#ffd166',
      },
    ],
  };
}

/** The rules that go with the demo overlay: every gift becomes an alert on it. */
export function demoRules(overlayId: string): RuleList {
  return [
    {
      id: 'demo-gift-alert',
      name: 'Thank every gift',
      enabled: true,
      trigger: 'gift',
      conditions: {},
      cooldownMs: 0,
      actions: [
        {
          overlayId,
          widgetId: 'alerts',
          command: 'show-alert',
          payload: { text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: 5000 },
        },
      ],
    },
  ];
}
