// The daemon-wide `seq` that events and overlay commands share: handed out from blocks reserved in
// events.db's meta and in events.seq beside it, so a number is never handed out twice, even across
// restarts, a corrupt events.db moved aside or an older one restored.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import { JOURNAL_FILE_MODE } from './database.js';

/** `seq`s are reserved in blocks, so numbers never repeat across restarts without a write per message. */
const SEQ_BLOCK = 10_000;
/** The highest `seq` the journal accepts from its files: far above any stream, far below float trouble. */
export const SEQ_MAX = 2 ** 50;

/** A `seq` read from a file: a whole number from 0 to SEQ_MAX, else undefined (never NaN). */
export function seqFrom(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= SEQ_MAX ? n : undefined;
}

/**
 * Where the highest `seq` ever reserved is kept beside events.db, so numbers never go back, even when a
 * corrupt events.db is moved aside or an older one is restored.
 */
export function seqFileOf(path: string): string {
  return join(dirname(path), 'events.seq');
}

/** The values the sequence keeps in events.db's `meta` table (meta.ts). */
interface SeqMeta {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

/** The next `seq` and how far numbers are reserved. */
export class Sequence {
  #next: number;
  #reservedTo: number;
  readonly #meta: SeqMeta;
  readonly #file: string;
  readonly #log: (line: string) => void;

  /**
   * Goes on from the highest number events.db's rows, its meta or events.seq hold. Throws when a row holds
   * a number no journal hands out (the file was not written by this program).
   */
  constructor(db: Database.Database, meta: SeqMeta, path: string, log: (line: string) => void) {
    this.#meta = meta;
    this.#file = seqFileOf(path);
    this.#log = log;
    const maxSeqRow = db.prepare('SELECT MAX(seq) AS m FROM events').get() as { m: number | null };
    const maxCommandRow = db.prepare('SELECT MAX(last_seq) AS m FROM command_rows').get() as {
      m: number | null;
    };
    for (const [what, value] of [
      ['an event', maxSeqRow.m],
      ['a command', maxCommandRow.m],
    ] as const) {
      // A row SQLite reads but no number can stand for: the file was not written by this program.
      if (value !== null && seqFrom(value) === undefined)
        throw new Error(`${what} has the number ${String(value)}, which no journal hands out`);
    }
    const reservedText = meta.get('seq_reserved');
    let reserved = seqFrom(reservedText ?? '0');
    if (reserved === undefined) {
      // Repaired, never NaN: the numbers in the rows and in events.seq still say where to go on from.
      log(
        `[journal] the stored sequence (${JSON.stringify(reservedText).slice(0, 40)}) is not a number: it was ignored`,
      );
      reserved = 0;
    }
    // Numbers handed out before a restart (or by a journal that was moved aside) are never handed out again.
    const highWater = Math.max(
      maxSeqRow.m ?? 0,
      maxCommandRow.m ?? 0,
      reserved,
      readSeqFile(this.#file, log),
    );
    this.#next = highWater + 1;
    this.#reservedTo = highWater;
    // The first number this database could ever hold: a page resuming from before it missed what an
    // earlier journal had.
    if (seqFrom(meta.get('first_seq')) === undefined) {
      const min = (db.prepare('SELECT MIN(seq) AS m FROM events').get() as { m: number | null }).m;
      meta.set('first_seq', String(min ?? this.#next));
    }
  }

  /** The `seq` the next message will get. */
  peek(): number {
    return this.#next;
  }

  /** The next `seq`, reserving a new block when it is past the reserved ones. */
  take(): number {
    const seq = this.#next++;
    if (seq > this.#reservedTo) this.reserveFrom(seq);
    return seq;
  }

  /** Whether `seq` is past the reserved numbers (a block is to be reserved before it is written). */
  beyondReserved(seq: number): boolean {
    return seq > this.#reservedTo;
  }

  /** Reserves the block that starts at `seq` (in events.db and events.seq). */
  reserveFrom(seq: number): void {
    const to = seq + SEQ_BLOCK;
    this.#reservedTo = to;
    this.#meta.set('seq_reserved', String(to));
    writeSeqFile(this.#file, to, this.#log);
  }

  /** A number taken for a message was written: the next one is after it. */
  used(seq: number): void {
    if (seq >= this.#next) this.#next = seq + 1;
  }
}

/** The highest `seq` events.seq holds; 0 when there is none, and a line when it cannot be read. */
function readSeqFile(path: string, log: (line: string) => void): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      log(`[journal] ${path} could not be read (${errorMessage(err)}): numbers go on from events.db`);
    return 0;
  }
  const value = seqFrom(text);
  if (value === undefined) log(`[journal] ${path} holds no number: numbers go on from events.db`);
  return value ?? 0;
}

/** Writes events.seq whole (a temporary file renamed over it), mode 0600; a failure is logged. */
function writeSeqFile(path: string, value: number, log: (line: string) => void): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${value}\n`, { mode: JOURNAL_FILE_MODE });
    renameSync(tmp, path);
  } catch (err) {
    log(`[journal] ${path} could not be written: ${errorMessage(err)}`);
  }
}
