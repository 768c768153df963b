import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { UpdateCoalescer } from './coalescer.js';

function setup(intervalMs = 100) {
  const timers = new FakeTimers();
  const flushed: { id: string; at: number }[] = [];
  const coalescer = new UpdateCoalescer((id) => flushed.push({ id, at: timers.now() }), {
    intervalMs,
    timers,
  });
  return { timers, flushed, coalescer };
}

describe('UpdateCoalescer', () => {
  it('flushes a lone change at once', () => {
    const { coalescer, flushed } = setup();
    coalescer.mark('a');
    expect(flushed).toEqual([{ id: 'a', at: 0 }]);
  });

  it('turns a flood of 1000 changes in one second into at most one flush per 100 ms', () => {
    const { coalescer, flushed, timers } = setup(100);
    for (let i = 0; i < 1000; i++) {
      coalescer.mark('a');
      timers.advance(1);
    }
    timers.advance(200);
    expect(flushed.length).toBeLessThanOrEqual(11);
    expect(flushed.length).toBeGreaterThanOrEqual(10);
    for (let i = 1; i < flushed.length; i++)
      expect(flushed[i]!.at - flushed[i - 1]!.at).toBeGreaterThanOrEqual(100);
    // The last change (at 999 ms) is flushed by the trailing edge.
    expect(flushed.at(-1)!.at).toBeGreaterThanOrEqual(999);
  });

  it('keeps overlays independent', () => {
    const { coalescer, flushed, timers } = setup(100);
    coalescer.mark('a');
    coalescer.mark('b');
    coalescer.mark('a');
    expect(flushed.map((f) => f.id)).toEqual(['a', 'b']);
    expect(coalescer.isPending('a')).toBe(true);
    timers.advance(100);
    expect(flushed).toEqual([
      { id: 'a', at: 0 },
      { id: 'b', at: 0 },
      { id: 'a', at: 100 },
    ]);
  });

  it('flushes waiting changes on demand and forgets deleted overlays', () => {
    const { coalescer, flushed, timers } = setup(100);
    coalescer.mark('a');
    coalescer.mark('a');
    coalescer.mark('b');
    coalescer.mark('b');
    coalescer.forget('b');
    coalescer.flushAll();
    timers.advance(1000);
    expect(flushed.map((f) => f.id)).toEqual(['a', 'b', 'a']);
  });

  it('carries on after a flush that throws, and reports it', () => {
    const timers = new FakeTimers();
    const errors: string[] = [];
    let calls = 0;
    const coalescer = new UpdateCoalescer(
      () => {
        calls++;
        throw new Error('socket gone');
      },
      { timers, onError: (e, id) => errors.push(`${id}: ${e instanceof Error ? e.message : ''}`) },
    );
    coalescer.mark('a');
    timers.advance(100);
    coalescer.mark('a');
    expect(calls).toBe(2);
    expect(errors).toEqual(['a: socket gone', 'a: socket gone']);
  });
});
