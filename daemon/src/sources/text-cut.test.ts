// Every platform's viewer text is cut by whole characters: an emoji at the limit is never split in two.
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../shared/protocol/index.js';
import { KICK_EVENTS, mapKickEvent } from './kick/map.js';
import { mapChatMessage } from './twitch/chat-map.js';
import { mapNotification } from './twitch/eventsub-map.js';
import { mapLiveChatMessage } from './youtube/map.js';

/** 499 letters, then an emoji whose second half would be the 501st unit. */
const LONG = `${'a'.repeat(499)}😀 and more`;
const NAME = `${'n'.repeat(99)}😀`;

function commentOf(result: { event: StreamEvent } | object): string | undefined {
  if (!('event' in result)) throw new Error(`no event: ${JSON.stringify(result)}`);
  const data = result.event.data as { comment?: string };
  return data.comment;
}
const wellFormed = (text: string | undefined) => text !== undefined && !/[\ud800-\udfff]$/.test(text);

describe('viewer text cut at an emoji', () => {
  it('Twitch chat (IRC)', () => {
    const tags = new Map([
      ['id', 'm1'],
      ['display-name', NAME],
    ]);
    const result = mapChatMessage(tags, 'viewer', LONG);
    expect(commentOf(result)).toBe('a'.repeat(499));
    expect('event' in result && result.event.user.nickname).toBe('n'.repeat(99));
  });

  it('Twitch EventSub (a cheer and a resub message)', () => {
    const cheer = mapNotification('channel.cheer', {
      is_anonymous: false,
      user_id: '1',
      user_login: 'viewer',
      user_name: NAME,
      broadcaster_user_id: '2',
      broadcaster_user_login: 'streamer',
      broadcaster_user_name: 'Streamer',
      message: LONG,
      bits: 100,
    });
    expect(commentOf(cheer)).toBe('a'.repeat(499));
    expect('event' in cheer && cheer.event.user.nickname).toBe('n'.repeat(99));
    const resub = mapNotification('channel.subscription.message', {
      user_id: '1',
      user_login: 'viewer',
      user_name: 'Viewer',
      broadcaster_user_id: '2',
      broadcaster_user_login: 'streamer',
      broadcaster_user_name: 'Streamer',
      tier: '1000',
      message: { text: LONG, emotes: [] },
      cumulative_months: 3,
      streak_months: null,
      duration_months: 1,
    });
    expect(commentOf(resub)).toBe('a'.repeat(499));
  });

  it('YouTube live chat', () => {
    const result = mapLiveChatMessage({
      id: 'yt1',
      snippet: { type: 'textMessageEvent', textMessageDetails: { messageText: LONG } },
      authorDetails: { channelId: 'UC123', displayName: NAME },
    });
    expect(commentOf(result)).toBe('a'.repeat(499));
    expect('event' in result && result.event.user.nickname).toBe('n'.repeat(99));
  });

  it("Kick's chat socket (Pusher)", () => {
    const result = mapKickEvent(KICK_EVENTS.chat, {
      id: '0b3c5a1e-0000-4000-8000-00000000000a',
      chatroom_id: 1,
      content: LONG,
      type: 'message',
      created_at: '2026-11-25T20:00:00Z',
      sender: { id: 5, username: 'Viewer', slug: 'viewer', identity: { color: '#fff', badges: [] } },
    });
    expect(commentOf(result)).toBe('a'.repeat(499));
    expect(wellFormed(commentOf(result))).toBe(true);
  });
});
