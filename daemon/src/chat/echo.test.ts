import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../shared/protocol/index.js';
import { ChatEcho } from './echo.js';

function chat(
  platform: StreamEvent['platform'],
  uniqueId: string,
  comment: string,
  extra: Record<string, unknown> = {},
): StreamEvent {
  return { type: 'chat', platform, user: { uniqueId, nickname: uniqueId }, data: { comment, ...extra } };
}

function setup() {
  let now = 0;
  const echo = new ChatEcho(() => now);
  return { echo, advance: (ms: number) => (now += ms) };
}

describe('chat echo', () => {
  it('recognises a sent message by the id the platform returned, once', () => {
    const { echo, advance } = setup();
    echo.sending('kick', 'Thanks Bob!', undefined).sent('msg-1');
    advance(120_000); // an id is recognised well after the 30 s of sender and text
    expect(echo.isEcho(chat('kick', 'streamer', 'Thanks Bob!', { messageId: 'msg-1' }))).toBe(true);
    expect(echo.isEcho(chat('kick', 'streamer', 'Thanks Bob!', { messageId: 'msg-1' }))).toBe(false);
  });

  it('recognises it by sender and text within 30 s, even before the platform answered', () => {
    const { echo, advance } = setup();
    echo.sending('twitch', 'Welcome  Alice!', 'MyChannel');
    advance(30_000);
    expect(echo.isEcho(chat('twitch', 'mychannel', 'Welcome Alice!'))).toBe(true);
  });

  it('does not take it for chat past 30 s, from someone else, with other text or on another platform', () => {
    const { echo, advance } = setup();
    echo.sending('twitch', 'hi', 'streamer').sent(undefined);
    expect(echo.isEcho(chat('twitch', 'viewer', 'hi'))).toBe(false);
    expect(echo.isEcho(chat('twitch', 'streamer', 'hi there'))).toBe(false);
    expect(echo.isEcho(chat('kick', 'streamer', 'hi'))).toBe(false);
    advance(30_001);
    expect(echo.isEcho(chat('twitch', 'streamer', 'hi'))).toBe(false);
  });

  it('takes only one echo per message sent: the streamer typing the same words again is chat', () => {
    const { echo } = setup();
    echo.sending('youtube', 'GG', 'Streamer Name');
    const back = {
      type: 'chat',
      platform: 'youtube',
      user: { uniqueId: 'UC123', nickname: 'Streamer Name' },
      data: { comment: 'GG' },
    } as const;
    expect(echo.isEcho(back)).toBe(true);
    expect(echo.isEcho(back)).toBe(false);
  });

  it('forgets a message whose send failed', () => {
    const { echo } = setup();
    echo.sending('twitch', 'hello', 'streamer').failed();
    expect(echo.isEcho(chat('twitch', 'streamer', 'hello'))).toBe(false);
  });

  it('only looks at chat', () => {
    const { echo } = setup();
    echo.sending('twitch', 'hello', 'streamer');
    const follow: StreamEvent = {
      type: 'follow',
      platform: 'twitch',
      user: { uniqueId: 'streamer', nickname: 'x' },
      data: {},
    };
    expect(echo.isEcho(follow)).toBe(false);
  });
});
