// The overlay commands the journal keeps for pages that resume after a restart: at most 20,000 and an hour.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turnEnds } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from './journal.js';

const OVERLAY = '3f1c9a4e-8b2d-4c6f-9e1a-7d5b3c2a1f00';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(now: () => number): Journal {
  const dir = mkdtempSync(join(tmpdir(), 'journal-commands-'));
  dirs.push(dir);
  return Journal.open({ path: join(dir, 'events.db'), log: () => {}, now });
}

/** Records `count` commands in turns of 50, each turn written once it ends, as in the daemon. */
async function record(journal: Journal, count: number, at: number): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i++) {
    const seq = journal.nextSeq();
    seqs.push(seq);
    journal.recordCommand(OVERLAY, seq, at, { command: 'reset', widgetId: 'alerts', payload: { i } });
    if (i % 50 === 49) await turnEnds();
  }
  return seqs;
}

describe('kept overlay commands', () => {
  it('never hold more than 20,000: the oldest go, and a resume from before them is told so', async () => {
    const now = Date.now();
    const journal = open(() => now);
    try {
      const seqs = await record(journal, 20_500, now);
      const kept = journal.keptForReplay(0);
      expect(kept.commands.length).toBeLessThanOrEqual(20_000);
      expect(kept.commands.length).toBeGreaterThanOrEqual(19_000);
      // The newest are the ones kept, in order, and the mark says up to where the others went.
      expect(kept.commands.at(-1)?.seq).toBe(seqs.at(-1));
      const firstKept = kept.commands[0]?.seq ?? 0;
      expect(kept.commandsPrunedUpTo).toBe(firstKept - 1);
      expect(kept.commands.map((c) => c.seq)).toEqual(seqs.slice(seqs.indexOf(firstKept)));
    } finally {
      journal.close();
    }
  });

  it('let commands older than an hour go', async () => {
    let now = Date.now();
    const journal = open(() => now);
    try {
      const old = await record(journal, 150, now);
      now += 61 * 60_000;
      const fresh = await record(journal, 150, now);
      const kept = journal.keptForReplay(0);
      expect(kept.commands.map((c) => c.seq)).toEqual(fresh);
      expect(kept.commandsPrunedUpTo).toBe(old.at(-1));
    } finally {
      journal.close();
    }
  });
});
