import { EventEmitter } from 'node:events';
import { TikTokLiveConnection, WebcastEvent } from 'tiktok-live-connector';
import { describe, expect, it } from 'vitest';
import { tiktokConnection } from './connection.js';

describe('the tiktok-live-connector edge', () => {
  it('relies on what the pinned library provides: an EventEmitter with these event names', () => {
    // Constructing does not connect: no network is touched.
    const connection: unknown = new TikTokLiveConnection('someone', { processInitialData: false });
    expect(connection).toBeInstanceOf(EventEmitter);
    expect([WebcastEvent.GIFT, WebcastEvent.LIKE, WebcastEvent.CHAT, WebcastEvent.FOLLOW]).toEqual([
      'gift',
      'like',
      'chat',
      'follow',
    ]);
    expect([
      WebcastEvent.SHARE,
      WebcastEvent.SUB_NOTIFY,
      WebcastEvent.ROOM_USER,
      WebcastEvent.STREAM_END,
    ]).toEqual(['share', 'subNotify', 'roomUser', 'streamEnd']);
  });

  it('disconnects cleanly before it ever connected', async () => {
    const connection = tiktokConnection('someone');
    let calls = 0;
    connection.on('chat', () => calls++);
    await connection.disconnect();
    connection.removeAllListeners();
    expect(calls).toBe(0);
  });
});
