// The overlay commands the journal keeps for pages that resume after a restart: at most 20,000 and an hour.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turnEnds } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal, MIGRATIONS } from './journal.js';

const OVERLAY = '3f1c9a4e-8b2d-4c6f-9e1a-7d5b3c2a1f00';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(now: () => number, path = newPath()): Journal {
  return Journal.open({ path, log: () => {}, now });
}

function newPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'journal-commands-'));
  dirs.push(dir);
  return join(dir, 'events.db');
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

  it('come back in order when the commands of two overlays interleave, and go with their overlay', async () => {
    const now = Date.now();
    const path = newPath();
    const journal = open(() => now, path);
    const other = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
    const seqs: number[] = [];
    for (let turn = 0; turn < 3; turn++) {
      for (let i = 0; i < 4; i++) {
        const seq = journal.nextSeq();
        seqs.push(seq);
        journal.recordCommand(i % 2 ? other : OVERLAY, seq, now, {
          command: 'reset',
          widgetId: 'alerts',
          payload: { turn, i },
        });
      }
      await turnEnds();
    }
    journal.close();
    const reopened = open(() => now, path);
    try {
      const kept = reopened.keptForReplay(0).commands;
      expect(kept.map((c) => c.seq)).toEqual(seqs);
      expect(kept.map((c) => [c.overlayId === other, c.command.payload])).toEqual(
        seqs.map((_, n) => [n % 2 === 1, { turn: Math.floor(n / 4), i: n % 4 }]),
      );
      reopened.forgetCommands(other);
      expect(reopened.keptForReplay(0).commands.map((c) => c.seq)).toEqual(
        seqs.filter((_, n) => n % 2 === 0),
      );
    } finally {
      reopened.close();
    }
  });

  it('written one to a row by the previous version are kept, with their numbers', () => {
    const now = Date.now();
    const path = newPath();
    const old = new Database(path);
    // The schema up to the version before commands were kept a row per turn.
    const before = MIGRATIONS.findIndex((sql) => sql.includes('CREATE TABLE IF NOT EXISTS command_rows'));
    for (const sql of MIGRATIONS.slice(0, before)) old.exec(sql);
    old.pragma(`user_version = ${before}`);
    const insert = old.prepare('INSERT INTO commands (seq, at, overlay, command) VALUES (?, ?, ?, ?)');
    insert.run(
      7,
      now,
      OVERLAY,
      JSON.stringify({ command: 'show-alert', widgetId: 'alerts', payload: { text: 'hi' } }),
    );
    insert.run(9, now, OVERLAY, JSON.stringify({ command: 'reset', widgetId: 'alerts', payload: {} }));
    old.close();
    const journal = open(() => now, path);
    try {
      expect(journal.keptForReplay(0).commands).toEqual([
        {
          seq: 7,
          at: now,
          overlayId: OVERLAY,
          command: { command: 'show-alert', widgetId: 'alerts', payload: { text: 'hi' } },
        },
        {
          seq: 9,
          at: now,
          overlayId: OVERLAY,
          command: { command: 'reset', widgetId: 'alerts', payload: {} },
        },
      ]);
      // Numbers go on above the commands kept.
      expect(journal.nextSeq()).toBeGreaterThan(9);
    } finally {
      journal.close();
    }
  });
});
