import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../shared/protocol/index.js';
import type { Journal } from '../journal/journal.js';
import type { Hub } from '../ws/hub.js';
import { createIngest, type IngestContext, JournalWriteError } from './ingest.js';

const gift: StreamEvent = {
  type: 'gift',
  platform: 'api',
  user: { uniqueId: 'u1', nickname: 'Ann' },
  data: { giftName: 'Rose', repeatCount: 1 },
};

/** A journal and a hub that write down, in one list, what happened to each event and in which order. */
function world(options: { failAppend?: boolean } = {}) {
  const steps: string[] = [];
  let next = 41;
  const journal = {
    nextSeq: () => next++,
    append: (
      _event: StreamEvent,
      _source: string,
      _json?: string,
      _test?: boolean,
      seq?: number,
      late?: { at: number },
    ) => {
      if (options.failAppend) throw new Error('disk I/O error');
      steps.push(`journal ${seq}${late ? ` late at ${late.at}` : ''}`);
      return seq ?? -1;
    },
  } as unknown as Journal;
  const hub = {
    broadcastEvent: (
      _event: StreamEvent,
      seq?: number,
      at?: number,
      json?: string,
      how?: { late?: boolean },
    ) => {
      steps.push(how?.late ? `broadcast ${seq} late at ${at}` : `broadcast ${seq} ${json}`);
      return 1;
    },
  } as unknown as Hub;
  const logs: string[] = [];
  const ctx = { hub, journal, log: (line: string) => logs.push(line) } as unknown as IngestContext;
  return { ctx, steps, logs };
}

describe('ingest', () => {
  it('sends the event to the pages under the seq it is journaled with, before the journal write, then runs the steps', () => {
    const { ctx, steps } = world();
    const ingest = createIngest(ctx, [
      () => {
        steps.push('rules');
        return { firedRules: ['r1'] };
      },
    ]);
    expect(ingest(gift, { requireJournal: true })).toEqual({ firedRules: ['r1'] });
    expect(steps).toEqual([`broadcast 41 ${JSON.stringify(gift)}`, 'journal 41', 'rules']);
    ingest(gift);
    expect(steps.slice(3)).toEqual([`broadcast 42 ${JSON.stringify(gift)}`, 'journal 42', 'rules']);
  });

  it('refuses an API event the journal cannot keep (no rules run), and keeps a live source going', () => {
    const { ctx, steps, logs } = world({ failAppend: true });
    const ingest = createIngest(ctx, [
      () => {
        steps.push('rules');
      },
    ]);
    expect(() => ingest(gift, { requireJournal: true })).toThrow(JournalWriteError);
    expect(() => ingest(gift, { requireJournal: true })).toThrow(/could not be written: disk I\/O error/);
    expect(steps.filter((s) => s === 'rules')).toEqual([]);
    // A platform's event is shown and runs its rules; the log says it was not kept.
    ingest(gift);
    expect(steps.at(-1)).toBe('rules');
    expect(logs).toEqual(['[journal] the event journal could not be written: disk I/O error']);
  });

  it('an event older than five minutes is caught up: sent and journaled at its own time, and its steps know it', () => {
    const { ctx, steps } = world();
    const now = 10_000_000;
    const ingest = createIngest(
      ctx,
      [(_event, _ctx, mark) => void steps.push(mark.caughtUp ? 'caught up' : 'live')],
      () => now,
    );
    ingest(gift, { at: now - 5 * 60_000 });
    expect(steps).toEqual([`broadcast 41 ${JSON.stringify(gift)}`, 'journal 41', 'live']);
    ingest(gift, { at: now - 5 * 60_000 - 1 });
    expect(steps.slice(3)).toEqual([
      `broadcast 42 late at ${now - 300_001}`,
      `journal 42 late at ${now - 300_001}`,
      'caught up',
    ]);
  });

  it('drops the daemon’s own chat before anything sees it', () => {
    const { ctx, steps } = world();
    const ingest = createIngest({ ...ctx, isEcho: () => true }, [() => void steps.push('rules')]);
    expect(ingest(gift)).toEqual({ firedRules: [] });
    expect(steps).toEqual([]);
  });
});
