// The event journal: every accepted event in events.db (SQLite through better-sqlite3,
// WAL), written before POST /api/events answers, with the daemon-wide `seq`, its time and its source;
// stream sessions with running totals, per-viewer figures for leaderboards and points, retention, and a
// corrupt database moved aside rather than stopping the daemon. The schema (migrations.ts), the `seq`
// (sequence.ts), the kept overlay commands (command-store.ts) and the boards (leaderboard.ts) are files of
// their own over the same database; devices/audit.ts keeps the `audit` table there.
import { existsSync, renameSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type {
  OverlayCommandInput,
  Platform,
  StreamEvent,
  StreamEventType,
} from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import { type Checkpointer, startCheckpointer } from './checkpointer.js';
import { CommandStore, type KeptCommand } from './command-store.js';
import type { PointRules } from './contribution.js';
import { openJournalDatabase } from './database.js';
import { EventWriter, type LateArrival, SESSION_IDLE_MS } from './event-writer.js';
import {
  allTimeLeaderboard,
  type FiguresRow,
  figuresOf,
  type LeaderboardMetric,
  sessionLeaderboard,
  TIE_ORDER,
  type ViewerFigures,
} from './leaderboard.js';
import { MetaTable } from './meta.js';
import { Sequence } from './sequence.js';

export { DEFAULT_POINTS, type PointRules } from './contribution.js';
export type { LateArrival } from './event-writer.js';
export type { LeaderboardMetric, ViewerFigures } from './leaderboard.js';
export { MIGRATION_COUNT, MIGRATIONS } from './migrations.js';
export { seqFileOf } from './sequence.js';

/** How often the WAL is checkpointed into the database file. */
const CHECKPOINT_MS = 2000;
/** Past this many minutes a session's chart is not filled with quiet minutes (two weeks). */
const MINUTES_FILLED_MAX = 14 * 24 * 60;

/** A row of `events` as `events()` reads it. */
interface EventRow {
  seq: number;
  at: number;
  source: string;
  session: number;
  test: number;
  arrived_at: number | null;
  event: string;
}

function journaledOf(r: EventRow): JournaledEvent {
  return {
    seq: r.seq,
    at: new Date(r.at).toISOString(),
    source: r.source,
    session: r.session,
    test: r.test !== 0,
    ...(r.arrived_at !== null ? { caughtUp: true, arrivedAt: new Date(r.arrived_at).toISOString() } : {}),
    event: JSON.parse(r.event) as StreamEvent,
  };
}

export interface JournaledEvent {
  seq: number;
  /** ISO time it happened: when it was accepted, or a late event's own time. */
  at: string;
  source: string;
  session: number;
  /** Sent from the test panel or the `event` command: counted in no total or leaderboard. */
  test: boolean;
  /** It reached the daemon late (caught up): counted, but it fired no rule. */
  caughtUp?: true;
  /** ISO time a caught-up event arrived. */
  arrivedAt?: string;
  event: StreamEvent;
}

/** Caught-up events are listed this long after they arrived ("while you were away"). */
export const CAUGHT_UP_LISTED_MS = 24 * 60 * 60 * 1000;

/** What a page resuming after a restart can get from the journal (ws/replay.ts). */
export interface KeptForReplay {
  /** The newest events, oldest first. */
  events: { seq: number; at: number; event: StreamEvent }[];
  /** The highest `seq` of an event no longer kept (a resume from before it misses something). */
  eventsPrunedUpTo: number;
  commands: KeptCommand[];
  /** The highest `seq` of a command no longer kept. */
  commandsPrunedUpTo: number;
}

export interface SessionTotals {
  gifts: number;
  diamonds: number;
  likes: number;
  follows: number;
  shares: number;
  subscribes: number;
  chats: number;
  peakViewers: number;
}

export interface SessionSummary {
  id: number;
  startedAt: string;
  endedAt: string | null;
  totals: SessionTotals;
  topGifters: ViewerFigures[];
  /** Test events in the session: kept and marked, not in the totals. */
  testEvents: number;
}

interface JournalOptions {
  path: string;
  log: (line: string) => void;
  now?: () => number;
  points?: () => PointRules;
}

export class Journal {
  readonly #db: Database.Database;
  readonly #options: JournalOptions;
  readonly #meta: MetaTable;
  readonly #sequence: Sequence;
  /** Events are never buffered: each is written before `append` returns. */
  readonly #writer: EventWriter;
  readonly #commands: CommandStore;
  readonly #checkpointTimer: NodeJS.Timeout;
  readonly #checkpointer: Checkpointer | undefined;
  /** A viewer's points on a platform (prepared when first asked). */
  #viewerPoints: Database.Statement<[string, string], { points: number }> | undefined;

  private constructor(db: Database.Database, options: JournalOptions) {
    this.#db = db;
    this.#options = options;
    const now = () => this.#now();
    this.#meta = new MetaTable(db);
    this.#sequence = new Sequence(db, this.#meta, options.path, options.log);
    this.#commands = new CommandStore(db, this.#meta, {
      log: options.log,
      now,
      lastSeq: this.#sequence.peek() - 1,
    });
    this.#writer = new EventWriter(db, this.#sequence, { now, points: options.points });
    // The WAL is folded into the database every few seconds, by a connection of its own in a worker
    // thread (checkpointer.ts). When the worker cannot run, this connection does it, between events.
    this.#checkpointer = startCheckpointer(options.path, options.log);
    this.#checkpointTimer = setInterval(() => {
      if (this.#checkpointer?.run()) return;
      try {
        this.#db.pragma('wal_checkpoint(PASSIVE)');
      } catch (err) {
        options.log(`[journal] checkpoint failed: ${errorMessage(err)}`);
      }
    }, CHECKPOINT_MS);
    this.#checkpointTimer.unref();
  }

  /**
   * Opens (or creates) events.db. A file SQLite cannot read is moved aside as
   * `events.db.corrupt-<time>` and a new one started, said in one line.
   */
  static open(options: JournalOptions): Journal {
    try {
      return Journal.#start(options);
    } catch (err) {
      if (!existsSync(options.path)) throw err;
      const aside = `${options.path}.corrupt-${new Date(options.now?.() ?? Date.now()).toISOString().replace(/[:.]/g, '-')}`;
      renameSync(options.path, aside);
      for (const suffix of ['-wal', '-shm'])
        if (existsSync(options.path + suffix)) renameSync(options.path + suffix, aside + suffix);
      options.log(
        `[journal] ${options.path} could not be read (${errorMessage(err)}): moved aside to ${aside}; a new journal was started`,
      );
      return Journal.#start(options);
    }
  }

  static #start(options: JournalOptions): Journal {
    const db = openJournalDatabase(options.path, options.log);
    try {
      return new Journal(db, options);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  /**
   * Writes one accepted event and answers its `seq` (in the file when this returns). `json`: the event
   * already serialised (the hub sends the same text), so it is not serialised twice. `seq`: the number
   * taken for it with `nextSeq()` (the pages got it under that number before the write); else the next.
   */
  append(
    event: StreamEvent,
    source: string,
    json?: string,
    test = false,
    seq?: number,
    late?: LateArrival,
  ): number {
    return this.#writer.append(event, source, json, test, seq, late);
  }

  /** Writes several events in one transaction (one commit), answering their `seq`s in order. */
  appendBatch(events: readonly { event: StreamEvent; source: string; test?: boolean }[]): number[] {
    return this.#db.transaction(() =>
      events.map(({ event, source, test }) => this.#writer.append(event, source, undefined, test)),
    )();
  }

  /** A `seq` for a message that is not an event (an overlay command), from the same sequence. */
  nextSeq(): number {
    return this.#sequence.take();
  }

  /**
   * Keeps an overlay command (at most an hour, at most 20,000), so that a page resuming after a restart
   * gets it too. It is written with the other commands of this turn once the turn ends; a command that
   * cannot be written is logged and still sent.
   */
  recordCommand(overlayId: string, seq: number, at: number, command: OverlayCommandInput): void {
    this.#commands.record(overlayId, seq, at, command);
  }

  /** The connection to events.db, for a module that keeps a table of its own there (devices/audit.ts). */
  get database(): Database.Database {
    return this.#db;
  }

  /** A value another part keeps beside the events (where Kick's events through the Gatekeeper stand). */
  metaValue(key: string): string | undefined {
    return this.#meta.get(key);
  }

  /** Writes such a value (in the file when this returns). */
  setMetaValue(key: string, value: string): void {
    this.#meta.set(key, value);
  }

  /** The commands of an overlay that no longer exists go. */
  forgetCommands(overlayId: string): void {
    this.#commands.forget(overlayId);
  }

  /**
   * The newest `limit` events and the kept commands, for the pages that resume after a restart, with the
   * highest numbers no longer kept.
   */
  keptForReplay(limit: number): KeptForReplay {
    const lastSeq = this.#sequence.peek() - 1;
    const commands = this.#commands.kept(lastSeq);
    const rows = (
      this.#db.prepare('SELECT seq, at, event FROM events ORDER BY seq DESC LIMIT ?').all(limit + 1) as {
        seq: number;
        at: number;
        event: string;
      }[]
    ).reverse();
    // One more than asked: when it is there, everything up to it is no longer kept.
    const beyond = rows.length > limit ? rows.shift() : undefined;
    let eventsPrunedUpTo = Math.max((this.#meta.seq('first_seq') ?? lastSeq) - 1, beyond?.seq ?? 0);
    const pruned = this.#meta.seq('events_pruned_to');
    if (pruned !== undefined) eventsPrunedUpTo = Math.max(eventsPrunedUpTo, pruned);
    return {
      events: rows.map((r) => ({ seq: r.seq, at: r.at, event: JSON.parse(r.event) as StreamEvent })),
      eventsPrunedUpTo,
      commands: commands.commands,
      commandsPrunedUpTo: commands.prunedUpTo,
    };
  }

  /** The `seq` the next message will get. */
  peekSeq(): number {
    return this.#sequence.peek();
  }

  /** The current session ends now (its source went offline). */
  endSession(): void {
    this.#writer.endSession();
  }

  /** Events after `after`, oldest first, at most `limit`; `next` is the seq to ask after for more. */
  events(query: { after: number; limit: number; type?: StreamEventType | undefined }): {
    events: JournaledEvent[];
    next: number | null;
  } {
    const rows = (
      query.type
        ? this.#db
            .prepare(
              'SELECT seq, at, source, session, test, arrived_at, event FROM events WHERE type = ? AND seq > ? ORDER BY seq LIMIT ?',
            )
            .all(query.type, query.after, query.limit + 1)
        : this.#db
            .prepare(
              'SELECT seq, at, source, session, test, arrived_at, event FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
            )
            .all(query.after, query.limit + 1)
    ) as EventRow[];
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    return { events: page.map(journaledOf), next: more ? (page.at(-1)?.seq ?? null) : null };
  }

  /**
   * The caught-up events that arrived within the last `CAUGHT_UP_LISTED_MS` ("while you were away"), newest
   * first, at most `limit`, test events left out.
   */
  caughtUp(limit: number): JournaledEvent[] {
    const rows = this.#db
      .prepare<[number, number], EventRow>(
        `SELECT seq, at, source, session, test, arrived_at, event FROM events
         WHERE arrived_at >= ? AND test = 0 ORDER BY seq DESC LIMIT ?`,
      )
      .all(this.#now() - CAUGHT_UP_LISTED_MS, limit);
    return rows.map(journaledOf);
  }

  /** Every session, newest first, with its totals and its five top gifters. */
  sessions(): SessionSummary[] {
    const rows = this.#db
      .prepare(
        `SELECT id, started_at AS startedAt, ended_at AS endedAt, last_at AS lastAt, gifts, diamonds, likes,
           follows, shares, subscribes, chats, peak_viewers AS peakViewers, test_events AS testEvents
         FROM sessions ORDER BY id DESC LIMIT 500`,
      )
      .all() as (SessionTotals & {
      id: number;
      startedAt: number;
      endedAt: number | null;
      lastAt: number;
      testEvents: number;
    })[];
    const top = this.#db.prepare<[number], FiguresRow>(
      `SELECT user_id AS uniqueId, nickname, diamonds, likes, chats, points, platform, currency FROM viewers
       WHERE session = ? AND diamonds > 0 ORDER BY diamonds DESC, ${TIE_ORDER} LIMIT 5`,
    );
    const now = this.#now();
    return rows.map((r) => {
      // An open session whose last event is older than the idle time has ended then.
      const ended = r.endedAt ?? (now - r.lastAt > SESSION_IDLE_MS ? r.lastAt : null);
      return {
        id: r.id,
        startedAt: new Date(r.startedAt).toISOString(),
        endedAt: ended === null ? null : new Date(ended).toISOString(),
        totals: {
          gifts: r.gifts,
          diamonds: r.diamonds,
          likes: r.likes,
          follows: r.follows,
          shares: r.shares,
          subscribes: r.subscribes,
          chats: r.chats,
          peakViewers: r.peakViewers,
        },
        topGifters: top.all(r.id).map(figuresOf),
        testEvents: r.testEvents,
      };
    });
  }

  hasSession(id: number): boolean {
    return this.#db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(id) !== undefined;
  }

  /** When a session started (ms), or undefined when there is no such session. */
  sessionStartedAt(id: number): number | undefined {
    const row = this.#db.prepare('SELECT started_at AS at FROM sessions WHERE id = ?').get(id) as
      | { at: number }
      | undefined;
    return row?.at;
  }

  /**
   * A page of a session's events after `after`, oldest first, test events left out (for the CSV export:
   * each page is read whole, so no query stays open between pages and events keep being written).
   */
  sessionEvents(id: number, after: number, limit: number): JournaledEvent[] {
    const rows = this.#db
      .prepare(
        `SELECT seq, at, source, session, event FROM events
         WHERE seq > MAX(?, (SELECT first_seq - 1 FROM sessions WHERE id = ?))
           AND seq <= (SELECT last_seq FROM sessions WHERE id = ?) AND session = ? AND test = 0
         ORDER BY seq LIMIT ?`,
      )
      .all(after, id, id, id, limit) as {
      seq: number;
      at: number;
      source: string;
      session: number;
      event: string;
    }[];
    return rows.map((r) => ({
      seq: r.seq,
      at: new Date(r.at).toISOString(),
      source: r.source,
      session: r.session,
      test: false,
      event: JSON.parse(r.event) as StreamEvent,
    }));
  }

  /**
   * Gifts, diamonds, likes and chats per minute of a session, for its chart: every minute from the first
   * event's to the last one's (a quiet minute is zeros), test events left out.
   */
  minutes(
    session: number,
  ): { minute: string; gifts: number; diamonds: number; likes: number; chats: number }[] {
    const rows = this.#db
      .prepare(
        `SELECT at / 60000 AS m,
           SUM(gifts) AS gifts, SUM(diamonds) AS diamonds, SUM(likes) AS likes, SUM(chats) AS chats
         FROM events WHERE seq BETWEEN (SELECT first_seq FROM sessions WHERE id = ?) AND (SELECT last_seq FROM sessions WHERE id = ?) AND session = ? AND test = 0 GROUP BY m ORDER BY m`,
      )
      .all(session, session, session) as {
      m: number;
      gifts: number;
      diamonds: number;
      likes: number;
      chats: number;
    }[];
    const first = rows[0]?.m;
    const last = rows.at(-1)?.m;
    // Past two weeks of minutes the quiet ones are not written out (the chart joins its points).
    if (first === undefined || last === undefined || last - first >= MINUTES_FILLED_MAX)
      return rows.map(({ m, ...figures }) => ({ minute: new Date(m * 60_000).toISOString(), ...figures }));
    const byMinute = new Map(rows.map((r) => [r.m, r]));
    const out: { minute: string; gifts: number; diamonds: number; likes: number; chats: number }[] = [];
    for (let m = first; m <= last; m++) {
      const r = byMinute.get(m);
      out.push({
        minute: new Date(m * 60_000).toISOString(),
        gifts: r?.gifts ?? 0,
        diamonds: r?.diamonds ?? 0,
        likes: r?.likes ?? 0,
        chats: r?.chats ?? 0,
      });
    }
    return out;
  }

  /**
   * Removes every test event; a session that held nothing else goes with them. Answers how many went.
   * (Test events count in no total, so no total changes.)
   */
  removeTestEvents(): number {
    return this.#db.transaction(() => {
      const onlyTests = (
        this.#db.prepare('SELECT session FROM events GROUP BY session HAVING MIN(test) = 1').all() as {
          session: number;
        }[]
      ).map((r) => r.session);
      const removed = this.#db.prepare('DELETE FROM events WHERE test = 1').run().changes;
      this.#db.prepare('UPDATE sessions SET test_events = 0 WHERE test_events <> 0').run();
      const drop = this.#db.prepare(
        'DELETE FROM sessions WHERE id = ? AND gifts + diamonds + likes + follows + shares + subscribes + chats + peak_viewers = 0',
      );
      for (const id of onlyTests) {
        if (drop.run(id).changes > 0) this.#writer.sessionRemoved(id);
      }
      return removed;
    })();
  }

  /** The session in progress (or the last one), or undefined before any event. */
  currentSession(): number | undefined {
    const current = this.#writer.session;
    if (current !== undefined) return current;
    const last = this.#db.prepare('SELECT MAX(id) AS id FROM sessions').get() as { id: number | null };
    return last.id ?? undefined;
  }

  /** A viewer's points on one platform across every session (test events count in none). */
  viewerPoints(platform: Platform, uniqueId: string): number {
    this.#viewerPoints ??= this.#db.prepare<[string, string], { points: number }>(
      'SELECT points FROM viewer_points WHERE platform = ? AND user_id = ?',
    );
    return this.#viewerPoints.get(platform, uniqueId)?.points ?? 0;
  }

  /** The top viewers by a metric, in one session or across all of them. */
  leaderboard(scope: 'session' | 'all', metric: LeaderboardMetric, limit = 10): ViewerFigures[] {
    if (scope === 'all') return allTimeLeaderboard(this.#db, metric, limit);
    const session = this.currentSession();
    return session === undefined ? [] : sessionLeaderboard(this.#db, session, metric, limit);
  }

  /** Removes events older than `days` (sessions and viewer figures stay: they are the stream's record). */
  prune(days: number): number {
    const before = this.#now() - days * 24 * 60 * 60 * 1000;
    // Times grow with seq: the last event too old bounds what goes, without an index on the time.
    const last = this.#db.prepare('SELECT MAX(seq) AS seq FROM events WHERE at < ?').get(before) as {
      seq: number | null;
    };
    if (last.seq === null) return 0;
    const upTo = last.seq;
    return this.#db.transaction(() => {
      this.#meta.raise('events_pruned_to', upTo);
      return this.#db.prepare('DELETE FROM events WHERE seq <= ?').run(upTo).changes;
    })();
  }

  /** A consistent copy of the database to `path` while it stays in use (SQLite's online backup). */
  backup(path: string): Promise<unknown> {
    this.#commands.flush();
    return this.#db.backup(path);
  }

  close(): void {
    clearInterval(this.#checkpointTimer);
    this.#commands.flush();
    // The worker's connection closes first, so this one is the last and folds the WAL in as it closes.
    this.#checkpointer?.close();
    if (this.#db.open) this.#db.close();
  }
}
