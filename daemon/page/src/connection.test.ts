import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../../shared/describe-event.js';
import { daemonAnswers, probeDelay, reloadDelay, socketUrl } from './connection.js';
import { pushBounded } from './feed.js';
import { assetUrl, fitScale } from './overlay-view.js';

describe('page helpers', () => {
  it('dials ws on http and wss on https, on the page host', () => {
    expect(socketUrl({ protocol: 'http:', host: '127.0.0.1:7890' })).toBe('ws://127.0.0.1:7890');
    expect(socketUrl({ protocol: 'https:', host: 'o-abc.example.com' })).toBe('wss://o-abc.example.com');
  });

  it('backs off reloads 1 s, 2 s, 4 s … up to 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map(reloadDelay)).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('looks whether the daemon answers again after 1 s, 2 s, 4 s, then every 5 s', () => {
    expect([1, 2, 3, 4, 5, 50].map(probeDelay)).toEqual([1000, 2000, 4000, 5000, 5000, 5000]);
  });

  it('reloads only on an answer from the daemon itself, not an error page of a tunnel or a refused connection', async () => {
    const answer = (status: number, body: unknown) => async () =>
      new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
    expect(await daemonAnswers(answer(200, { running: true, port: 7890 }))).toBe(true);
    expect(await daemonAnswers(answer(530, { running: true }))).toBe(false);
    expect(await daemonAnswers(answer(200, { error: 'not the daemon' }))).toBe(false);
    expect(await daemonAnswers(async () => new Response('<html>Bad gateway</html>', { status: 200 }))).toBe(
      false,
    );
    expect(
      await daemonAnswers(async () => {
        throw new TypeError('Failed to fetch');
      }),
    ).toBe(false);
  });

  it('words events and raises alerts only for gifts, follows, subscriptions and shares', () => {
    const user = { uniqueId: 'rosa', nickname: 'Rosa' };
    expect(
      describeEvent({ type: 'gift', platform: 'api', user, data: { giftName: 'Rose', repeatCount: 99 } }),
    ).toBe('Rosa sent 99 × Rose');
    expect(
      describeEvent({
        type: 'chat',
        platform: 'api',
        user: { uniqueId: 'u', nickname: '' },
        data: { comment: 'hi' },
      }),
    ).toBe('u: hi');
  });

  it('keeps feeds bounded, newest last', () => {
    const list: number[] = [];
    for (let i = 0; i < 12; i++) pushBounded(list, i, 10);
    expect(list).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('encodes asset names and fits the canvas into smaller viewports only', () => {
    expect(assetUrl('alerts/big win #1.png')).toBe('/assets/alerts/big%20win%20%231.png');
    const overlay = { name: 'o', width: 1920, height: 1080 };
    expect(fitScale(overlay, { width: 960, height: 1080 })).toBe(0.5);
    expect(fitScale(overlay, { width: 3840, height: 2160 })).toBe(1);
  });
});
