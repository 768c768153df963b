import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { AlertQueue, type QueuedAlert } from './alert-queue.js';

function setup(options = { gapMs: 250, maxWaiting: 3 }) {
  const timers = new FakeTimers();
  const log: string[] = [];
  const queue = new AlertQueue(
    timers,
    (alert: QueuedAlert | undefined) => log.push(`${timers.now()} ${alert ? `show ${alert.text}` : 'hide'}`),
    options,
  );
  return { timers, log, queue };
}

describe('AlertQueue', () => {
  it('shows alerts one after another, each for its duration, with a gap', () => {
    const { queue, timers, log } = setup();
    queue.enqueue({ text: 'A', duration: 1000 });
    queue.enqueue({ text: 'B', duration: 2000 });
    timers.advance(500);
    queue.enqueue({ text: 'C', duration: 500 });
    timers.advance(10_000);
    expect(log).toEqual(['0 show A', '1000 hide', '1250 show B', '3250 hide', '3500 show C', '4000 hide']);
  });

  it('never shows two at once', () => {
    const { queue, timers } = setup({ gapMs: 0, maxWaiting: 100 });
    let visible = 0;
    let most = 0;
    const q = new AlertQueue(timers, (a) => {
      visible = a ? visible + 1 : visible - 1;
      most = Math.max(most, visible);
    });
    for (let i = 0; i < 20; i++) q.enqueue({ text: `${i}`, duration: 100 + i });
    timers.advance(60_000);
    expect(most).toBe(1);
    expect(visible).toBe(0);
    expect(queue.current).toBeUndefined();
  });

  it('shows a new alert at once when idle, after the previous one is gone', () => {
    const { queue, timers, log } = setup();
    queue.enqueue({ text: 'A', duration: 100 });
    timers.advance(5000);
    queue.enqueue({ text: 'B', duration: 100 });
    expect(log.at(-1)).toBe('5000 show B');
    expect(queue.current?.text).toBe('B');
  });

  it('drops alerts beyond the waiting limit and clears on demand', () => {
    const { queue, timers, log } = setup({ gapMs: 0, maxWaiting: 2 });
    expect(queue.enqueue({ text: 'A', duration: 100 })).toBe(true);
    expect(queue.enqueue({ text: 'B', duration: 100 })).toBe(true);
    expect(queue.enqueue({ text: 'C', duration: 100 })).toBe(true);
    expect(queue.enqueue({ text: 'D', duration: 100 })).toBe(false);
    expect(queue.pending).toBe(2);
    queue.clear();
    timers.advance(1000);
    expect(log).toEqual(['0 show A', '0 hide']);
    expect(timers.size).toBe(0);
  });
});
