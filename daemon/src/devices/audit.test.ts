// The audit of paired devices: kept in events.db, read oldest first a page at a time, the newest 10,000 kept.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal, MIGRATIONS } from '../journal/journal.js';
import { AUDIT_KEPT_MAX, AuditLog } from './audit.js';

const dirs: string[] = [];
const journals: Journal[] = [];
afterEach(() => {
  for (const journal of journals.splice(0)) journal.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'audit-'));
  dirs.push(dir);
  return dir;
}

function openJournal(dir: string, log: (line: string) => void = () => {}): Journal {
  const journal = Journal.open({ path: join(dir, 'events.db'), log });
  journals.push(journal);
  return journal;
}

const entry = (n: number) => ({
  deviceId: 'd-1',
  deviceName: 'Ada’s phone',
  method: 'POST',
  path: `/api/actions/queues/tts/skip?n=${n}`,
  status: 204,
});

describe('the audit', () => {
  it('lists what devices did, oldest first, a page at a time', () => {
    let now = Date.parse('2026-11-28T20:00:00.000Z');
    const audit = new AuditLog(openJournal(dataDir()).database, { log: () => {}, now: () => now });
    for (let n = 0; n < 5; n++) {
      audit.record(entry(n));
      now += 1000;
    }

    const first = audit.list(undefined, 2);
    expect(first.entries).toEqual([
      { id: 1, at: '2026-11-28T20:00:00.000Z', ...entry(0) },
      { id: 2, at: '2026-11-28T20:00:01.000Z', ...entry(1) },
    ]);
    expect(first.next).toBe(2);
    const second = audit.list(first.next ?? undefined, 2);
    expect(second.entries.map((e) => e.path)).toEqual([entry(2).path, entry(3).path]);
    const last = audit.list(second.next ?? undefined, 2);
    expect(last.entries.map((e) => e.id)).toEqual([5]);
    expect(last.next).toBeNull();
    // A page that ends exactly at the newest entry says there is no more.
    expect(audit.list(3, 2)).toMatchObject({ next: null });
    expect(audit.list(5, 100)).toEqual({ entries: [], next: null });
  });

  it('keeps the newest 10,000 entries at most', () => {
    const audit = new AuditLog(openJournal(dataDir()).database, { log: () => {} });
    const total = AUDIT_KEPT_MAX + 1500;
    for (let n = 1; n <= total; n++) audit.record(entry(n));

    const ids: number[] = [];
    for (let after: number | undefined, page = 0; page < 100; page++) {
      const { entries, next } = audit.list(after, 500);
      ids.push(...entries.map((e) => e.id));
      if (next === null) break;
      after = next;
    }
    expect(ids.length).toBeLessThanOrEqual(AUDIT_KEPT_MAX);
    expect(ids.length).toBeGreaterThanOrEqual(AUDIT_KEPT_MAX - 1000);
    // The newest are the ones kept, none missing between them.
    expect(ids.at(-1)).toBe(total);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => total - ids.length + 1 + i));
  });

  it('keeps its entries and numbers across a restart, and numbers never go back', () => {
    const dir = dataDir();
    const journal = openJournal(dir);
    const audit = new AuditLog(journal.database, { log: () => {} });
    audit.record(entry(1));
    audit.record(entry(2));
    journal.close();

    const again = new AuditLog(openJournal(dir).database, { log: () => {} });
    again.record(entry(3));
    expect(again.list(undefined, 10).entries.map((e) => [e.id, e.path])).toEqual([
      [1, entry(1).path],
      [2, entry(2).path],
      [3, entry(3).path],
    ]);
  });

  it('is added to a journal written by an older version, whose events stay', () => {
    const dir = dataDir();
    const old = new Database(join(dir, 'events.db'));
    for (const sql of MIGRATIONS.slice(0, 3)) old.exec(sql);
    old.pragma('user_version = 3');
    old.close();

    const journal = openJournal(dir);
    const audit = new AuditLog(journal.database, { log: () => {} });
    audit.record(entry(1));
    expect(audit.list(undefined, 10).entries).toHaveLength(1);
  });

  it('never throws to the caller: an entry it cannot write is one log line', () => {
    const lines: string[] = [];
    const journal = openJournal(dataDir());
    const audit = new AuditLog(journal.database, { log: (line) => lines.push(line) });
    journal.close();

    expect(() => audit.record(entry(1))).not.toThrow();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\[audit\] POST \/api\/actions\/queues\/tts\/skip\?n=1 of device d-1 could not be kept/,
    );
  });
});
