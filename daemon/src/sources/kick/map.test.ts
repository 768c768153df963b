import { describe, expect, it } from 'vitest';
import { mapKickWebhook } from '../../../../shared/protocol/kick.js';
import { kickSamples } from '../../../../test/support/fakes/kick-webhook-signer.js';
import { KICK_EVENTS, mapKickEvent } from './map.js';

const chat = (over: Record<string, unknown> = {}) => ({
  id: '0b3c5a1e-0000-4000-8000-00000000000a',
  chatroom_id: 1,
  content: 'hi',
  type: 'message',
  created_at: '2026-11-25T20:00:00Z',
  sender: { id: 5, username: 'Viewer', slug: 'viewer', identity: { color: '#fff', badges: [] } },
  ...over,
});

describe('mapKickEvent', () => {
  it('a chat message is chat, with Kick message id in data.messageId', () => {
    expect(mapKickEvent(KICK_EVENTS.chat, chat())).toEqual({
      event: {
        type: 'chat',
        platform: 'kick',
        user: { uniqueId: 'viewer', nickname: 'Viewer' },
        data: { comment: 'hi', messageId: '0b3c5a1e-0000-4000-8000-00000000000a' },
      },
      messageId: '0b3c5a1e-0000-4000-8000-00000000000a',
    });
  });

  it('one viewer is one uniqueId (the slug) whether the socket or the webhooks bring them', () => {
    const uniqueIdOf = (result: ReturnType<typeof mapKickEvent>) =>
      'event' in result ? result.event.user : undefined;
    // The socket names the sender by display name and slug; the webhook by slug (channel_slug).
    const socket = mapKickEvent(
      KICK_EVENTS.chat,
      chat({ sender: { id: 987654321, username: 'Viewer_One', slug: 'viewer-one' } }),
    );
    const webhook = mapKickWebhook('chat.message.sent', kickSamples.chat());
    expect(webhook?.type === 'chat' && webhook.user.uniqueId).toBe('viewer-one');
    expect(uniqueIdOf(socket)).toEqual({ uniqueId: 'viewer-one', nickname: 'Viewer_One' });
    // Events that name a viewer only by display name: the slug as Kick makes it from the name.
    expect(uniqueIdOf(mapKickEvent(KICK_EVENTS.chat, chat({ sender: { username: 'Cool_Guy' } })))).toEqual({
      uniqueId: 'cool-guy',
      nickname: 'Cool_Guy',
    });
    expect(uniqueIdOf(mapKickEvent(KICK_EVENTS.subscription, { username: 'Viewer_One', months: 2 }))).toEqual(
      { uniqueId: 'viewer-one', nickname: 'Viewer_One' },
    );
    expect(
      uniqueIdOf(mapKickEvent(KICK_EVENTS.host, { host_username: 'Big_Raider', number_viewers: 3 })),
    ).toEqual({ uniqueId: 'big-raider', nickname: 'Big_Raider' });
    expect(
      uniqueIdOf(
        mapKickEvent(KICK_EVENTS.giftedSubscriptions, {
          gifter_username: 'Viewer_One',
          gifted_usernames: ['a'],
        }),
      ),
    ).toEqual({ uniqueId: 'viewer-one', nickname: 'Viewer_One' });
  });

  it('cuts a long message to 500 characters', () => {
    const result = mapKickEvent(KICK_EVENTS.chat, chat({ content: 'x'.repeat(900) }));
    expect('event' in result && result.event.type === 'chat' && result.event.data.comment.length).toBe(500);
  });

  it('a host or raid is a share with its viewers', () => {
    const host = { chatroom_id: 1, optional_message: '', number_viewers: 12, host_username: 'raider' };
    for (const name of [KICK_EVENTS.host, KICK_EVENTS.chatroomHost])
      expect(mapKickEvent(name, host)).toEqual({
        event: {
          type: 'share',
          platform: 'kick',
          user: { uniqueId: 'raider', nickname: 'raider' },
          data: { viewers: 12 },
        },
      });
  });

  it('subscriptions and gifted subscriptions are subscribe events; an anonymous gifter is Anonymous', () => {
    expect(
      mapKickEvent(KICK_EVENTS.subscription, { chatroom_id: 1, username: 's', months: 1 }),
    ).toMatchObject({
      event: { type: 'subscribe', user: { uniqueId: 's' }, data: { subMonth: 1 } },
    });
    expect(
      mapKickEvent(KICK_EVENTS.giftedSubscriptions, { gifted_usernames: ['a', 'b'], gifter_username: null }),
    ).toMatchObject({
      event: {
        type: 'subscribe',
        user: { uniqueId: 'anonymous', nickname: 'Anonymous' },
        data: { gifted: true, giftCount: 2 },
      },
    });
  });

  it('the end of a stream, events that are not stream events, unknown ones and bad payloads', () => {
    expect(mapKickEvent(KICK_EVENTS.streamEnded, {})).toEqual({ streamEnded: true });
    expect(mapKickEvent('App\\Events\\PollUpdateEvent', {})).toEqual({ ignored: true });
    expect(mapKickEvent('App\\Events\\Whatever', {})).toEqual({ unknown: 'App\\Events\\Whatever' });
    expect(mapKickEvent(KICK_EVENTS.chat, 'not an object')).toMatchObject({
      drop: expect.stringMatching(/^a chat message did not match/),
    });
    expect(mapKickEvent(KICK_EVENTS.chat, chat({ sender: { username: '' } }))).toMatchObject({
      drop: expect.stringMatching(/sender\.username/),
    });
    expect(mapKickEvent(KICK_EVENTS.host, { host_username: 'x', number_viewers: -1 })).toMatchObject({
      drop: expect.stringMatching(/number_viewers/),
    });
  });
});
