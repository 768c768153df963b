import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FiredAction } from '../rules/engine.js';
import { ActionLog } from './action-log.js';

const action = (index = 0, ruleId = 'rule-1'): FiredAction => ({
  ruleId,
  ruleName: 'Gift camera',
  index,
  kind: 'streamerbot',
  action: 'Camera',
  args: {},
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
});
afterEach(() => vi.useRealTimers());

describe('action log', () => {
  it('keeps each outcome with its rule, place, kind and time taken', () => {
    const log = new ActionLog();
    const started = Date.now();
    vi.advanceTimersByTime(40);
    log.add(action(1), started, undefined);
    log.add(action(2), Date.now(), 'HTTP 500');
    expect(log.entries()).toEqual([
      {
        at: '2026-01-01T00:00:00.040Z',
        ruleId: 'rule-1',
        ruleName: 'Gift camera',
        action: 1,
        kind: 'streamerbot',
        ok: true,
        ms: 40,
      },
      {
        at: '2026-01-01T00:00:00.040Z',
        ruleId: 'rule-1',
        ruleName: 'Gift camera',
        action: 2,
        kind: 'streamerbot',
        ok: false,
        ms: 0,
        error: 'HTTP 500',
      },
    ]);
  });

  it('keeps the last 200, newest last', () => {
    const log = new ActionLog();
    for (let i = 0; i < 450; i++) log.add(action(i), Date.now(), undefined);
    const entries = log.entries();
    expect(entries).toHaveLength(200);
    expect(entries[0]?.action).toBe(250);
    expect(entries.at(-1)?.action).toBe(449);
  });

  it('writes one failure line per action every 10 s at most, then says how many more failed', () => {
    const lines: string[] = [];
    const log = new ActionLog((line) => lines.push(line));
    for (let i = 0; i < 5; i++) log.add(action(1), Date.now(), 'no answer within 5 s');
    log.add(action(0, 'rule-2'), Date.now(), 'HTTP 404');
    vi.advanceTimersByTime(10_000);
    log.add(action(1), Date.now(), 'no answer within 5 s');
    expect(lines).toEqual([
      '[actions] rule "Gift camera" action 2 (streamerbot) failed: no answer within 5 s',
      '[actions] rule "Gift camera" action 1 (streamerbot) failed: HTTP 404',
      '[actions] rule "Gift camera" action 2 (streamerbot) failed: no answer within 5 s (4 more failed since the last line)',
    ]);
  });

  it('tells each observer of every outcome until it stops', () => {
    const log = new ActionLog();
    const seen: number[] = [];
    const stop = log.observe((fired, entry) => seen.push(fired.index * 10 + entry.action));
    log.add(action(1), Date.now(), undefined);
    stop();
    log.add(action(2), Date.now(), undefined);
    expect(seen).toEqual([11]);
  });
});
