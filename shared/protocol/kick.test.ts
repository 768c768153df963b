import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { kickSamples, sampleOfEachType } from '../../test/support/fakes/kick-webhook-signer.js';
import {
  KICK_EVENT_TYPES,
  KickEventsAfter,
  KickEventsFrame,
  KickFeedEvent,
  mapKickWebhook,
  parseKickWebhook,
} from './kick.js';

const VIEWER = {
  uniqueId: 'viewer-one',
  nickname: 'Viewer_One',
  profilePictureUrl: 'https://files.kick.test/images/user/987654321/profile_image/conversion/default.webp',
};

describe('Kick webhook bodies → feed events', () => {
  it('a chat message is chat from its sender, with Kick’s message id', () => {
    expect(mapKickWebhook('chat.message.sent', kickSamples.chat())).toEqual({
      type: 'chat',
      platform: 'kick',
      user: VIEWER,
      data: { comment: 'Hello [emote:37226:KEKW]', messageId: '01JH5XJ4Z1K0T6V8P3N9QWERTY' },
    });
  });

  it('a follow is follow from the follower', () => {
    expect(mapKickWebhook('channel.followed', kickSamples.follow())).toEqual({
      type: 'follow',
      platform: 'kick',
      user: VIEWER,
      data: {},
    });
  });

  it('a new subscription and a renewal are subscribe with their months', () => {
    expect(mapKickWebhook('channel.subscription.new', kickSamples.subscriptionNew())).toEqual({
      type: 'subscribe',
      platform: 'kick',
      user: VIEWER,
      data: { subMonth: 1 },
    });
    expect(
      mapKickWebhook('channel.subscription.renewal', kickSamples.subscriptionRenewal(undefined, 7)),
    ).toEqual({
      type: 'subscribe',
      platform: 'kick',
      user: VIEWER,
      data: { subMonth: 7 },
    });
  });

  it('gifted subscriptions are subscribe {giftCount} from the gifter, or from Anonymous', () => {
    expect(
      mapKickWebhook('channel.subscription.gifts', kickSamples.subscriptionGifts(undefined, { giftees: 5 })),
    ).toEqual({ type: 'subscribe', platform: 'kick', user: VIEWER, data: { gifted: true, giftCount: 5 } });
    expect(
      mapKickWebhook(
        'channel.subscription.gifts',
        kickSamples.subscriptionGifts(undefined, { anonymous: true }),
      ),
    ).toEqual({
      type: 'subscribe',
      platform: 'kick',
      user: { uniqueId: 'anonymous', nickname: 'Anonymous' },
      data: { gifted: true, giftCount: 2 },
    });
  });

  it('Kicks are a gift whose diamonds are the Kicks', () => {
    expect(mapKickWebhook('kicks.gifted', kickSamples.kicksGifted(undefined, 500))).toEqual({
      type: 'gift',
      platform: 'kick',
      // An empty profile picture is left out.
      user: { uniqueId: 'viewer-one', nickname: 'Viewer_One' },
      data: { giftName: 'Rage Quit', repeatCount: 1, diamondCount: 500 },
    });
  });

  it('a stream going live or ending is a livestream marker, not a stream event', () => {
    const started = {
      ...kickSamples.livestreamStatus(undefined, true),
      started_at: '2025-01-01T11:00:00+11:00',
    };
    expect(mapKickWebhook('livestream.status.updated', started)).toEqual({
      type: 'livestream',
      platform: 'kick',
      live: true,
      title: 'Stream Title',
      startedAt: '2025-01-01T11:00:00+11:00',
    });
    const ended = {
      ...kickSamples.livestreamStatus(undefined, false),
      started_at: '2025-01-01T11:00:00+11:00',
      ended_at: '2025-01-01T15:00:00+11:00',
    };
    expect(mapKickWebhook('livestream.status.updated', ended)).toEqual({
      type: 'livestream',
      platform: 'kick',
      live: false,
      title: 'Stream Title',
      startedAt: '2025-01-01T11:00:00+11:00',
      endedAt: '2025-01-01T15:00:00+11:00',
    });
  });

  it('the time of each event is Kick’s, where its payload gives one', () => {
    const at = (type: string, body: unknown) => {
      const parsed = parseKickWebhook(type, body);
      return parsed.kind === 'event' ? parsed.at : parsed.kind;
    };
    const chat = { ...kickSamples.chat(), created_at: '2025-01-14T16:08:06Z' };
    expect(at('chat.message.sent', chat)).toBe(Date.parse('2025-01-14T16:08:06Z'));
    const kicks = { ...kickSamples.kicksGifted(), created_at: '2025-10-20T04:00:08.634Z' };
    expect(at('kicks.gifted', kicks)).toBe(Date.parse('2025-10-20T04:00:08.634Z'));
    const started = {
      ...kickSamples.livestreamStatus(undefined, true),
      started_at: '2025-01-01T11:00:00+11:00',
    };
    expect(at('livestream.status.updated', started)).toBe(Date.parse('2025-01-01T00:00:00Z'));
    const ended = {
      ...kickSamples.livestreamStatus(undefined, false),
      ended_at: '2025-01-01T15:00:00+11:00',
    };
    expect(at('livestream.status.updated', ended)).toBe(Date.parse('2025-01-01T04:00:00Z'));
    // None given, or not a time: none (the Gatekeeper takes the receipt).
    expect(at('channel.followed', kickSamples.follow())).toBeUndefined();
    expect(at('chat.message.sent', { ...chat, created_at: null })).toBeUndefined();
    expect(at('chat.message.sent', { ...chat, created_at: 'yesterday' })).toBeUndefined();
  });

  it('every mapped sample is a valid feed event, with its broadcaster as the channel', () => {
    const types = sampleOfEachType().map(([type, body]) => {
      const parsed = parseKickWebhook(type, body);
      if (parsed.kind !== 'event') throw new Error(`${type}: ${parsed.kind}`);
      expect(parsed.broadcasterUserId).toBe(123456789);
      expect(v.safeParse(KickFeedEvent, parsed.event).success).toBe(true);
      return type;
    });
    expect(types.sort()).toEqual([...KICK_EVENT_TYPES].sort());
  });

  it('a type we do not map is unmapped; a body that does not fit its type is invalid, naming the field', () => {
    expect(parseKickWebhook('livestream.metadata.updated', kickSamples.metadataUpdated())).toEqual({
      kind: 'unmapped',
    });
    const { sender: _, ...noSender } = kickSamples.chat();
    expect(parseKickWebhook('chat.message.sent', noSender)).toMatchObject({
      kind: 'invalid',
      error: /sender/,
    });
    expect(
      parseKickWebhook('kicks.gifted', { ...kickSamples.kicksGifted(), gift: { amount: -1, name: 'x' } }),
    ).toMatchObject({ kind: 'invalid', error: /gift\.amount/ });
    expect(parseKickWebhook('channel.followed', 'not an object')).toMatchObject({ kind: 'invalid' });
    expect(mapKickWebhook('channel.followed', {})).toBeUndefined();
  });

  it('long text is cut to the stream event bounds without splitting a character', () => {
    const content = `${'a'.repeat(499)}😀 and more`;
    const event = mapKickWebhook('chat.message.sent', kickSamples.chat(undefined, { content }));
    expect(event?.type === 'chat' && event.data.comment).toBe('a'.repeat(499));
    expect(v.safeParse(KickFeedEvent, event).success).toBe(true);
  });

  it('unknown fields of Kick’s bodies are accepted', () => {
    const body = { ...kickSamples.follow(), new_field: { nested: true } };
    expect(mapKickWebhook('channel.followed', body)?.type).toBe('follow');
  });
});

describe('the event feed’s frames', () => {
  it('an event frame carries a stream event or a livestream marker; a gap names where what is kept starts', () => {
    const at = Date.now();
    const chat = mapKickWebhook('chat.message.sent', kickSamples.chat());
    expect(v.safeParse(KickEventsFrame, { type: 'event', seq: 1, at, event: chat }).success).toBe(true);
    const live = mapKickWebhook('livestream.status.updated', kickSamples.livestreamStatus());
    expect(v.safeParse(KickEventsFrame, { type: 'event', seq: 2, at, event: live }).success).toBe(true);
    // When it happened is part of every event frame: ms since the epoch.
    expect(v.safeParse(KickEventsFrame, { type: 'event', seq: 1, event: chat }).success).toBe(false);
    for (const bad of [-1, 1.5, '2025-01-14T16:08:06Z']) {
      expect(v.safeParse(KickEventsFrame, { type: 'event', seq: 1, at: bad, event: chat }).success).toBe(
        false,
      );
    }
    expect(v.safeParse(KickEventsFrame, { type: 'gap', from: 40 }).success).toBe(true);
    expect(v.safeParse(KickEventsFrame, { type: 'gap', from: 0 }).success).toBe(false);
    expect(v.safeParse(KickEventsFrame, { type: 'event', seq: 1, event: { type: 'nope' } }).success).toBe(
      false,
    );
  });

  it('after is a whole number', () => {
    expect(v.parse(KickEventsAfter, '0')).toBe(0);
    expect(v.parse(KickEventsAfter, '42')).toBe(42);
    for (const bad of ['', '-1', '1.5', 'abc', '01', '1e3', '99999999999999999']) {
      expect(v.safeParse(KickEventsAfter, bad).success, bad).toBe(false);
    }
  });
});
