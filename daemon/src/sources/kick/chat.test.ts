import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../../test/support/fake-timers.js';
import { kickChannels, OncePerInterval } from './chat.js';

describe('the Kick chat socket', () => {
  it("subscribes to the chatroom's channel and the channel's own when its id is known", () => {
    expect(kickChannels(12, 34)).toEqual(['chatrooms.12.v2', 'channel.34']);
    expect(kickChannels(12)).toEqual(['chatrooms.12.v2']);
  });

  it('lets one line per kind through a minute', () => {
    const clock = new FakeTimers();
    const once = new OncePerInterval(clock);
    expect(once.allow('not-json')).toBe(true);
    expect(once.allow('not-json')).toBe(false);
    expect(once.allow('unknown:App\\Events\\X')).toBe(true);
    clock.advance(59_999);
    expect(once.allow('not-json')).toBe(false);
    clock.advance(1);
    expect(once.allow('not-json')).toBe(true);
  });
});
