import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../shared/protocol/index.js';
import { tikfinityFrame } from './frames.js';

const user = { uniqueId: 'fan', nickname: 'Fan' };

describe('tikfinityFrame', () => {
  it('gives a YouTube Super Chat as a gift worth its cents, keeping its currency', () => {
    const event: StreamEvent = {
      type: 'gift',
      platform: 'youtube',
      user,
      data: { giftName: 'Super Chat', repeatCount: 1, diamondCount: 500, currency: 'USD' },
    };
    expect(tikfinityFrame(event, 'm1')).toEqual({
      event: 'gift',
      data: {
        userId: 'fan',
        uniqueId: 'fan',
        nickname: 'Fan',
        profilePictureUrl: '',
        msgId: 'm1',
        platform: 'youtube',
        currency: 'USD',
        giftId: 0,
        giftName: 'Super Chat',
        repeatCount: 1,
        diamondCount: 500,
        repeatEnd: true,
        giftType: 1,
      },
    });
  });

  it("keeps a source's own giftType, and a like's count stands in for a missing total", () => {
    const gift: StreamEvent = {
      type: 'gift',
      platform: 'tiktok',
      user,
      data: { giftName: 'Lion', repeatCount: 1, diamondCount: 29999, giftId: 6369, giftType: 2 },
    };
    expect(tikfinityFrame(gift, 'm2').data).toMatchObject({ giftType: 2, giftId: 6369 });
    const like: StreamEvent = { type: 'like', platform: 'twitch', user, data: { likeCount: 3 } };
    expect(tikfinityFrame(like, 'm3').data).toMatchObject({ likeCount: 3, totalLikeCount: 3 });
  });

  it('names a viewer count roomUser, and the sender fields win over look-alike fields of the data', () => {
    const viewers: StreamEvent = {
      type: 'viewer',
      platform: 'twitch',
      user,
      data: { viewerCount: 42, uniqueId: 'spoof', platform: 'tiktok' },
    };
    expect(tikfinityFrame(viewers, 'm4')).toMatchObject({
      event: 'roomUser',
      data: { viewerCount: 42, uniqueId: 'fan', platform: 'twitch' },
    });
  });
});
