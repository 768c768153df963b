// The event "test this rule" runs a rule's actions for: of its trigger, meeting its conditions, from a
// viewer called "Test viewer", so its templates show what a real event would put there.
import type { StreamEvent } from '../../../shared/protocol/index.js';
import type { Rule } from '../../../shared/rules.js';

export function sampleEvent(rule: Rule): StreamEvent {
  const c = rule.conditions;
  const uniqueId = c.userId?.replace(/^@/, '') || 'test_viewer';
  const user = { uniqueId, nickname: 'Test viewer' };
  const platform = rule.conditions.platform ?? 'api';
  switch (rule.trigger) {
    case 'gift': {
      const repeatCount = Math.max(1, c.minRepeatCount ?? 1, c.minDiamonds ?? 1);
      return {
        type: 'gift',
        platform,
        user,
        data: { giftName: c.giftName ?? 'Rose', repeatCount, diamondCount: 1 },
      };
    }
    case 'like': {
      const likeCount = Math.max(1, c.minLikes ?? 1, c.everyLikes ?? 1);
      return { type: 'like', platform, user, data: { likeCount } };
    }
    case 'chat': {
      const words = [c.command, c.chatIncludes ?? (c.command ? undefined : 'Hello from the test')];
      return { type: 'chat', platform, user, data: { comment: words.filter(Boolean).join(' ') } };
    }
    case 'viewer':
      return { type: 'viewer', platform, user, data: { viewerCount: 100 } };
    default:
      return { type: rule.trigger, platform, user, data: {} };
  }
}
