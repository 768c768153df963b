// The overlay commands events.db keeps (at most an hour, at most 20,000), so that a page resuming after a
// restart gets them too: written a row per overlay per turn, in one transaction once the turn ends.
import type Database from 'better-sqlite3';
import type { OverlayCommandInput } from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import type { MetaTable } from './meta.js';

/** Overlay commands are kept this long in the journal (for pages resuming after a restart)… */
const COMMANDS_KEPT_MS = 60 * 60 * 1000;
/** …and at most this many; the oldest go first. */
const COMMANDS_KEPT_MAX = 20_000;
/** Past the count limit the oldest commands go down to this many below it, so a steady stream of
 * commands deletes once per this many rather than at every write. */
const COMMANDS_PRUNE_SLACK = 1000;
/** The most commands one row holds (rows go whole when the oldest are let go). */
const COMMANDS_PER_ROW = 100;

/** An overlay command recorded and not yet written. */
interface PendingCommand {
  seq: number;
  at: number;
  overlay: string;
  command: OverlayCommandInput;
}

/** A row of `command_rows`: up to COMMANDS_PER_ROW commands of one overlay, in order. */
interface CommandRow {
  lastSeq: number;
  at: number;
  overlay: string;
  count: number;
  commands: string;
}

/** A kept command, as a page resuming gets it. */
export interface KeptCommand {
  seq: number;
  at: number;
  overlayId: string;
  command: OverlayCommandInput;
}

/** A turn's commands as rows: one per overlay, in order, split past COMMANDS_PER_ROW. */
function commandRows(pending: readonly PendingCommand[]): CommandRow[] {
  const open = new Map<string, { row: CommandRow; parts: string[] }>();
  const rows: CommandRow[] = [];
  const close = (entry: { row: CommandRow; parts: string[] }) => {
    entry.row.commands = `[${entry.parts.join(',')}]`;
    rows.push(entry.row);
  };
  for (const c of pending) {
    let entry = open.get(c.overlay);
    if (!entry) {
      entry = { row: { lastSeq: c.seq, at: c.at, overlay: c.overlay, count: 0, commands: '' }, parts: [] };
      open.set(c.overlay, entry);
    }
    entry.parts.push(`[${c.seq},${c.at},${JSON.stringify(c.command)}]`);
    entry.row.lastSeq = c.seq;
    entry.row.at = Math.max(entry.row.at, c.at);
    entry.row.count++;
    if (entry.row.count === COMMANDS_PER_ROW) {
      close(entry);
      open.delete(c.overlay);
    }
  }
  for (const entry of open.values()) close(entry);
  return rows;
}

interface CommandStoreOptions {
  log: (line: string) => void;
  now: () => number;
  /** The highest `seq` handed out before this store opened (commands before it may be missing). */
  lastSeq: number;
}

export class CommandStore {
  readonly #db: Database.Database;
  readonly #meta: MetaTable;
  readonly #options: CommandStoreOptions;
  /** Commands kept in the table (counted at open, then kept up to date), for the count limit. */
  #commandCount: number;
  #commandsSincePrune = 0;
  /**
   * Commands recorded this turn, written in one transaction once the turn ends (or before anything reads
   * the table): a rule firing 40 overlay commands costs one commit, not 40, and none of it holds up the
   * event that fired it.
   */
  #pendingCommands: PendingCommand[] = [];
  #commandFlush: NodeJS.Immediate | undefined;
  readonly #writeCommands: (rows: CommandRow[]) => void;
  /** The oldest rows of commands: the highest number in each, its newest time, how many it holds. */
  readonly #oldestRows: Database.Statement<[number], { seq: number; at: number; count: number }>;
  readonly #deleteCommandsUpTo: Database.Statement<[number], { count: number }>;

  constructor(db: Database.Database, meta: MetaTable, options: CommandStoreOptions) {
    this.#db = db;
    this.#meta = meta;
    this.#options = options;
    // Commands before this version were not kept: a resume from before now may have missed some.
    if (meta.seq('commands_pruned_to') === undefined) meta.set('commands_pruned_to', String(options.lastSeq));
    const insertRow = db.prepare<[number, number, string, number, string]>(
      'INSERT INTO command_rows (last_seq, at, overlay, count, commands) VALUES (?, ?, ?, ?, ?)',
    );
    this.#writeCommands = db.transaction((rows: CommandRow[]) => {
      for (const row of rows) insertRow.run(row.lastSeq, row.at, row.overlay, row.count, row.commands);
    });
    this.#commandCount = (
      db.prepare('SELECT COALESCE(SUM(count), 0) AS n FROM command_rows').get() as { n: number }
    ).n;
    this.#oldestRows = db.prepare<[number], { seq: number; at: number; count: number }>(
      'SELECT last_seq AS seq, at, count FROM command_rows ORDER BY last_seq LIMIT ?',
    );
    this.#deleteCommandsUpTo = db.prepare<[number], { count: number }>(
      'DELETE FROM command_rows WHERE last_seq <= ? RETURNING count',
    );
  }

  /** Keeps a command; it is written with the other commands of this turn once the turn ends. */
  record(overlayId: string, seq: number, at: number, command: OverlayCommandInput): void {
    this.#pendingCommands.push({ seq, at, overlay: overlayId, command });
    this.#commandFlush ??= setImmediate(() => this.flush());
  }

  /**
   * Writes the commands recorded since the last flush, in one transaction: a row per overlay (or per 100).
   * A command that cannot be written is logged (it was still sent).
   */
  flush(): void {
    if (this.#commandFlush) clearImmediate(this.#commandFlush);
    this.#commandFlush = undefined;
    const pending = this.#pendingCommands;
    if (pending.length === 0 || !this.#db.open) return;
    this.#pendingCommands = [];
    try {
      this.#writeCommands(commandRows(pending));
      this.#commandCount += pending.length;
      this.#commandsSincePrune += pending.length;
      if (this.#commandsSincePrune >= 100 || this.#commandCount > COMMANDS_KEPT_MAX) this.#prune();
    } catch (err) {
      this.#options.log(
        `[journal] ${pending.length === 1 ? 'an overlay command' : `${pending.length} overlay commands`} could not be kept: ${errorMessage(err)}`,
      );
    }
  }

  /**
   * Rows whose commands are all older than an hour go, and past 20,000 commands the oldest rows, whole,
   * down to no fewer than 19,000; the highest number gone is kept. Rows are in time order, so both are
   * found from the oldest on, and the count is kept in memory: neither limit reads the whole table.
   */
  #prune(): void {
    this.#commandsSincePrune = 0;
    const cutoff = this.#options.now() - COMMANDS_KEPT_MS;
    const excess =
      this.#commandCount > COMMANDS_KEPT_MAX
        ? this.#commandCount - (COMMANDS_KEPT_MAX - COMMANDS_PRUNE_SLACK)
        : 0;
    let upTo = 0;
    let going = 0;
    // The oldest rows, a block at a time, while they are aged or too many.
    search: for (let block = excess > 0 ? 64 : 1; ; block *= 4) {
      const rows = this.#oldestRows.all(block);
      going = 0;
      upTo = 0;
      for (const row of rows) {
        if (row.at >= cutoff && going + row.count > excess) break search;
        going += row.count;
        upTo = row.seq;
      }
      if (rows.length < block) break;
    }
    if (upTo === 0) return;
    this.#db.transaction(() => {
      for (const row of this.#deleteCommandsUpTo.all(upTo)) this.#commandCount -= row.count;
      this.#meta.raise('commands_pruned_to', upTo);
    })();
  }

  /** The commands of an overlay that no longer exists go. */
  forget(overlayId: string): void {
    this.flush();
    try {
      const gone = this.#db
        .prepare<[string], { count: number }>('DELETE FROM command_rows WHERE overlay = ? RETURNING count')
        .all(overlayId);
      for (const row of gone) this.#commandCount -= row.count;
    } catch (err) {
      this.#options.log(
        `[journal] the commands of a deleted overlay could not be removed: ${errorMessage(err)}`,
      );
    }
  }

  /** Every kept command in order, and the highest `seq` of one no longer kept (`fallback` when unknown). */
  kept(fallback: number): { commands: KeptCommand[]; prunedUpTo: number } {
    this.flush();
    const commands: KeptCommand[] = [];
    const stored = this.#db
      .prepare<[], { overlay: string; commands: string }>(
        'SELECT overlay, commands FROM command_rows ORDER BY last_seq',
      )
      .all();
    for (const row of stored)
      for (const [seq, at, command] of JSON.parse(row.commands) as [number, number, OverlayCommandInput][])
        commands.push({ seq, at, overlayId: row.overlay, command });
    // Rows of different overlays from one turn interleave.
    commands.sort((a, b) => a.seq - b.seq);
    return { commands, prunedUpTo: this.#meta.seq('commands_pruned_to') ?? fallback };
  }
}
