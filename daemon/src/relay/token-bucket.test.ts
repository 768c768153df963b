import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('gives its capacity at once, then one token per 1/rate s, never more than the capacity saved up', () => {
    let now = 0;
    const bucket = new TokenBucket(100, 5, () => now);
    for (let i = 0; i < 5; i++) expect(bucket.take()).toBe(0);
    expect(bucket.take()).toBe(10);
    now += 10;
    expect(bucket.take()).toBe(0);
    expect(bucket.take()).toBeGreaterThan(0);
    now += 10_000;
    let taken = 0;
    while (bucket.take() === 0) taken++;
    expect(taken).toBe(5);
  });

  it('over a long run the pace is the rate', () => {
    let now = 0;
    const bucket = new TokenBucket(180, 20, () => now);
    let sent = 0;
    while (now < 10_000) {
      const wait = bucket.take();
      if (wait === 0) sent++;
      else now += wait;
    }
    // 10 s at 180/s plus the 20 saved at the start.
    expect(sent).toBeLessThanOrEqual(180 * 10 + 20);
    expect(sent).toBeGreaterThanOrEqual(180 * 10);
  });
});
