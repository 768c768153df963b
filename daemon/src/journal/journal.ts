// The event journal (decisions-2 §7): every accepted event in events.db (SQLite through better-sqlite3,
// WAL), written before POST /api/events answers, with the daemon-wide `seq`, its time and its source;
// stream sessions with running totals, per-viewer figures for leaderboards and points, retention, and a
// corrupt database moved aside rather than stopping the daemon.
import { existsSync, renameSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { StreamEvent, StreamEventType } from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';

/** Where an event came from: a platform source, or the control API. */
export type EventSource = 'api' | 'tiktok' | 'twitch' | 'youtube';

/** Schema versions, applied in order; `PRAGMA user_version` says how many ran. */
const MIGRATIONS: readonly string[] = [
  // Each event row carries what it adds to its session and its viewer; a trigger adds it, so an event
  // is one INSERT (one call into SQLite, one implicit transaction) on the daemon's hot path.
  `CREATE TABLE events (
     seq INTEGER PRIMARY KEY,
     at INTEGER NOT NULL,
     source TEXT NOT NULL,
     type TEXT NOT NULL,
     session INTEGER NOT NULL,
     user_id TEXT NOT NULL,
     nickname TEXT NOT NULL,
     gifts INTEGER NOT NULL,
     diamonds INTEGER NOT NULL,
     likes INTEGER NOT NULL,
     chats INTEGER NOT NULL,
     follows INTEGER NOT NULL,
     shares INTEGER NOT NULL,
     subscribes INTEGER NOT NULL,
     viewers INTEGER NOT NULL,
     points INTEGER NOT NULL,
     event TEXT NOT NULL
   );
   CREATE INDEX events_type ON events (type, seq);
   CREATE TABLE sessions (
     id INTEGER PRIMARY KEY,
     -- A session's events are the seqs from first_seq to last_seq (one session at a time): no index needed.
     first_seq INTEGER NOT NULL,
     last_seq INTEGER NOT NULL,
     started_at INTEGER NOT NULL,
     ended_at INTEGER,
     last_at INTEGER NOT NULL,
     gifts INTEGER NOT NULL DEFAULT 0,
     diamonds INTEGER NOT NULL DEFAULT 0,
     likes INTEGER NOT NULL DEFAULT 0,
     follows INTEGER NOT NULL DEFAULT 0,
     shares INTEGER NOT NULL DEFAULT 0,
     subscribes INTEGER NOT NULL DEFAULT 0,
     chats INTEGER NOT NULL DEFAULT 0,
     peak_viewers INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE viewers (
     session INTEGER NOT NULL,
     user_id TEXT NOT NULL,
     nickname TEXT NOT NULL,
     diamonds INTEGER NOT NULL DEFAULT 0,
     likes INTEGER NOT NULL DEFAULT 0,
     chats INTEGER NOT NULL DEFAULT 0,
     points INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (session, user_id)
   ) WITHOUT ROWID;
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
   CREATE TRIGGER events_add AFTER INSERT ON events BEGIN
     UPDATE sessions SET last_at = NEW.at, last_seq = NEW.seq, gifts = gifts + NEW.gifts, diamonds = diamonds + NEW.diamonds,
       likes = likes + NEW.likes, follows = follows + NEW.follows, shares = shares + NEW.shares,
       subscribes = subscribes + NEW.subscribes, chats = chats + NEW.chats,
       peak_viewers = MAX(peak_viewers, NEW.viewers)
     WHERE id = NEW.session;
     INSERT INTO viewers (session, user_id, nickname, diamonds, likes, chats, points)
       SELECT NEW.session, NEW.user_id, NEW.nickname, NEW.diamonds, NEW.likes, NEW.chats, NEW.points
       WHERE NEW.diamonds + NEW.likes + NEW.chats + NEW.points > 0
     ON CONFLICT (session, user_id) DO UPDATE SET nickname = excluded.nickname,
       diamonds = diamonds + excluded.diamonds, likes = likes + excluded.likes,
       chats = chats + excluded.chats, points = points + excluded.points;
   END;`,
];

/** How many schema versions this daemon knows (a newer journal is not opened). */
export const MIGRATION_COUNT = MIGRATIONS.length;

/** A session ends after this long without events (decisions-2 §7). */
const SESSION_IDLE_MS = 30 * 60 * 1000;
/** How often the WAL is checkpointed into the database file. */
const CHECKPOINT_MS = 2000;
/** `seq`s are reserved in blocks, so numbers never repeat across restarts without a write per message. */
const SEQ_BLOCK = 1000;

/** Points per action of a viewer (settings.json `points`). */
export interface PointRules {
  perDiamond: number;
  perLike: number;
  perChat: number;
  perFollow: number;
  perShare: number;
}

export const DEFAULT_POINTS: PointRules = {
  perDiamond: 1,
  perLike: 0,
  perChat: 0,
  perFollow: 0,
  perShare: 0,
};

export interface JournaledEvent {
  seq: number;
  /** ISO time it was accepted. */
  at: string;
  source: string;
  session: number;
  event: StreamEvent;
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

export interface ViewerFigures {
  uniqueId: string;
  nickname: string;
  diamonds: number;
  likes: number;
  chats: number;
  points: number;
}

export interface SessionSummary {
  id: number;
  startedAt: string;
  endedAt: string | null;
  totals: SessionTotals;
  topGifters: ViewerFigures[];
}

export type LeaderboardMetric = 'diamonds' | 'likes' | 'chats' | 'points';

interface JournalOptions {
  path: string;
  log: (line: string) => void;
  now?: () => number;
  points?: () => PointRules;
}

/** What an event adds to its session and to its viewer. */
function contribution(event: StreamEvent, points: PointRules) {
  let gifts = 0;
  let diamonds = 0;
  let likes = 0;
  let chats = 0;
  let follows = 0;
  let shares = 0;
  let subscribes = 0;
  let viewers = 0;
  switch (event.type) {
    case 'gift':
      gifts = event.data.repeatCount;
      diamonds = (event.data.diamondCount ?? 0) * event.data.repeatCount;
      break;
    case 'like':
      likes = event.data.likeCount;
      break;
    case 'chat':
      chats = 1;
      break;
    case 'follow':
      follows = 1;
      break;
    case 'share':
      shares = 1;
      break;
    case 'subscribe':
      subscribes = 1;
      break;
    case 'viewer':
      viewers = event.data.viewerCount;
      break;
  }
  const earned = Math.round(
    diamonds * points.perDiamond +
      likes * points.perLike +
      chats * points.perChat +
      follows * points.perFollow +
      shares * points.perShare,
  );
  return { gifts, diamonds, likes, chats, follows, shares, subscribes, viewers, points: earned };
}

export class Journal {
  readonly #db: Database.Database;
  readonly #options: JournalOptions;
  readonly #insert: Database.Statement;
  readonly #append: (event: StreamEvent, source: string, json?: string) => number;
  #nextSeq: number;
  #reservedTo: number;
  #session: { id: number; lastAt: number } | undefined;
  readonly #checkpointTimer: NodeJS.Timeout;

  private constructor(db: Database.Database, options: JournalOptions) {
    this.#db = db;
    this.#options = options;
    // The WAL is folded into the database every few seconds, between events rather than inside one.
    this.#checkpointTimer = setInterval(() => {
      try {
        this.#db.pragma('wal_checkpoint(PASSIVE)');
      } catch (err) {
        options.log(`[journal] checkpoint failed: ${errorMessage(err)}`);
      }
    }, CHECKPOINT_MS);
    this.#checkpointTimer.unref();
    const meta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
    const maxSeq = (db.prepare('SELECT MAX(seq) AS m FROM events').get() as { m: number | null }).m ?? 0;
    const reserved = Number(meta.get('seq_reserved')?.value ?? 0);
    // Numbers handed out before a restart (commands are not journaled) are never handed out again.
    this.#nextSeq = Math.max(maxSeq, reserved) + 1;
    this.#reservedTo = this.#nextSeq - 1;
    const open = db
      .prepare('SELECT id, last_at AS lastAt FROM sessions WHERE ended_at IS NULL ORDER BY id DESC LIMIT 1')
      .get() as { id: number; lastAt: number } | undefined;
    this.#session = open;

    this.#insert = db.prepare(
      `INSERT INTO events (seq, at, source, type, session, user_id, nickname, gifts, diamonds, likes, chats,
         follows, shares, subscribes, viewers, points, event) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const newSession = db.prepare(
      'INSERT INTO sessions (first_seq, last_seq, started_at, last_at) VALUES (?, ?, ?, ?)',
    );
    const endSession = db.prepare('UPDATE sessions SET ended_at = last_at WHERE id = ?');
    const reserve = db.prepare(
      "INSERT INTO meta (key, value) VALUES ('seq_reserved', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    // Rare steps (a new session, a new block of seq numbers) in a transaction of their own.
    const prepare = db.transaction((now: number, seq: number) => {
      if (this.#session && now - this.#session.lastAt > SESSION_IDLE_MS) {
        endSession.run(this.#session.id);
        this.#session = undefined;
      }
      if (!this.#session)
        this.#session = { id: Number(newSession.run(seq, seq, now, now).lastInsertRowid), lastAt: now };
      if (seq > this.#reservedTo) {
        this.#reservedTo = seq + SEQ_BLOCK;
        reserve.run(String(this.#reservedTo));
      }
    });
    this.#append = (event: StreamEvent, source: string, json?: string): number => {
      const now = this.#now();
      const seq = this.#nextSeq;
      if (!this.#session || now - this.#session.lastAt > SESSION_IDLE_MS || seq > this.#reservedTo)
        prepare(now, seq);
      const session = this.#session as { id: number; lastAt: number };
      const c = contribution(event, this.#options.points?.() ?? DEFAULT_POINTS);
      // One statement: the event, and through the trigger its session's totals and its viewer's figures.
      this.#insert.run(
        seq,
        now,
        source,
        event.type,
        session.id,
        event.user.uniqueId,
        event.user.nickname,
        c.gifts,
        c.diamonds,
        c.likes,
        c.chats,
        c.follows,
        c.shares,
        c.subscribes,
        c.viewers,
        c.points,
        json ?? JSON.stringify(event),
      );
      this.#nextSeq = seq + 1;
      session.lastAt = now;
      return seq;
    };
  }

  /**
   * Opens (or creates) events.db. A file SQLite cannot read is moved aside as
   * `events.db.corrupt-<time>` and a new one started, said in one line.
   */
  static open(options: JournalOptions): Journal {
    try {
      return new Journal(Journal.#openDatabase(options.path), options);
    } catch (err) {
      if (!existsSync(options.path)) throw err;
      const aside = `${options.path}.corrupt-${new Date(options.now?.() ?? Date.now()).toISOString().replace(/[:.]/g, '-')}`;
      renameSync(options.path, aside);
      for (const suffix of ['-wal', '-shm'])
        if (existsSync(options.path + suffix)) renameSync(options.path + suffix, aside + suffix);
      options.log(
        `[journal] ${options.path} could not be read (${errorMessage(err)}): moved aside to ${aside}; a new journal was started`,
      );
      return new Journal(Journal.#openDatabase(options.path), options);
    }
  }

  static #openDatabase(path: string): Database.Database {
    const db = new Database(path);
    try {
      db.pragma('journal_mode = WAL');
      // In WAL mode a commit is in the file when it returns; a process killed after it loses nothing.
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 2000');
      // Checkpoints run from a timer (see the constructor), not inside the commit of an event.
      db.pragma('wal_autocheckpoint = 0');
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`integrity check: ${String(check)}`);
      const version = Number(db.pragma('user_version', { simple: true }));
      if (version > MIGRATIONS.length)
        throw new Error(
          `it was written by a newer version (schema ${version}, this one knows ${MIGRATIONS.length})`,
        );
      for (let v = version; v < MIGRATIONS.length; v++) {
        db.transaction(() => {
          db.exec(MIGRATIONS[v] as string);
          db.pragma(`user_version = ${v + 1}`);
        })();
      }
      return db;
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
   * already serialised (the hub sends the same text), so it is not serialised twice.
   */
  append(event: StreamEvent, source: string, json?: string): number {
    return this.#append(event, source, json);
  }

  /** Writes several events in one transaction (one commit), answering their `seq`s in order. */
  appendBatch(events: readonly { event: StreamEvent; source: string }[]): number[] {
    return this.#db.transaction(() => events.map(({ event, source }) => this.#append(event, source)))();
  }

  /** A `seq` for a message that is not journaled (an overlay command), from the same sequence. */
  nextSeq(): number {
    const seq = this.#nextSeq++;
    if (seq > this.#reservedTo) {
      this.#reservedTo = seq + SEQ_BLOCK;
      this.#db
        .prepare(
          "INSERT INTO meta (key, value) VALUES ('seq_reserved', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .run(String(this.#reservedTo));
    }
    return seq;
  }

  /** The `seq` the next message will get. */
  peekSeq(): number {
    return this.#nextSeq;
  }

  /** The current session ends now (its source went offline). */
  endSession(): void {
    if (!this.#session) return;
    this.#db.prepare('UPDATE sessions SET ended_at = last_at WHERE id = ?').run(this.#session.id);
    this.#session = undefined;
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
              'SELECT seq, at, source, session, event FROM events WHERE type = ? AND seq > ? ORDER BY seq LIMIT ?',
            )
            .all(query.type, query.after, query.limit + 1)
        : this.#db
            .prepare('SELECT seq, at, source, session, event FROM events WHERE seq > ? ORDER BY seq LIMIT ?')
            .all(query.after, query.limit + 1)
    ) as { seq: number; at: number; source: string; session: number; event: string }[];
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    return {
      events: page.map((r) => ({
        seq: r.seq,
        at: new Date(r.at).toISOString(),
        source: r.source,
        session: r.session,
        event: JSON.parse(r.event) as StreamEvent,
      })),
      next: more ? (page.at(-1)?.seq ?? null) : null,
    };
  }

  /** Every session, newest first, with its totals and its five top gifters. */
  sessions(): SessionSummary[] {
    const rows = this.#db
      .prepare(
        `SELECT id, started_at AS startedAt, ended_at AS endedAt, last_at AS lastAt, gifts, diamonds, likes,
           follows, shares, subscribes, chats, peak_viewers AS peakViewers FROM sessions ORDER BY id DESC LIMIT 500`,
      )
      .all() as (SessionTotals & { id: number; startedAt: number; endedAt: number | null; lastAt: number })[];
    const top = this.#db.prepare(
      `SELECT user_id AS uniqueId, nickname, diamonds, likes, chats, points FROM viewers
       WHERE session = ? AND diamonds > 0 ORDER BY diamonds DESC LIMIT 5`,
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
        topGifters: top.all(r.id) as ViewerFigures[],
      };
    });
  }

  hasSession(id: number): boolean {
    return this.#db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(id) !== undefined;
  }

  /** A session's events, oldest first, in pages (for the CSV export). */
  *sessionEvents(id: number): Generator<JournaledEvent> {
    const statement = this.#db.prepare(
      'SELECT seq, at, source, session, event FROM events WHERE seq BETWEEN (SELECT first_seq FROM sessions WHERE id = ?) AND (SELECT last_seq FROM sessions WHERE id = ?) AND session = ? ORDER BY seq',
    );
    for (const r of statement.iterate(id, id, id) as Iterable<{
      seq: number;
      at: number;
      source: string;
      session: number;
      event: string;
    }>) {
      yield {
        seq: r.seq,
        at: new Date(r.at).toISOString(),
        source: r.source,
        session: r.session,
        event: JSON.parse(r.event) as StreamEvent,
      };
    }
  }

  /** Gifts, diamonds, likes and chats per minute of a session, for its chart. */
  minutes(
    session: number,
  ): { minute: string; gifts: number; diamonds: number; likes: number; chats: number }[] {
    const rows = this.#db
      .prepare(
        `SELECT at / 60000 AS m,
           SUM(gifts) AS gifts, SUM(diamonds) AS diamonds, SUM(likes) AS likes, SUM(chats) AS chats
         FROM events WHERE seq BETWEEN (SELECT first_seq FROM sessions WHERE id = ?) AND (SELECT last_seq FROM sessions WHERE id = ?) AND session = ? GROUP BY m ORDER BY m`,
      )
      .all(session, session, session) as {
      m: number;
      gifts: number;
      diamonds: number;
      likes: number;
      chats: number;
    }[];
    return rows.map(({ m, ...figures }) => ({ minute: new Date(m * 60_000).toISOString(), ...figures }));
  }

  /** The session in progress (or the last one), or undefined before any event. */
  currentSession(): number | undefined {
    if (this.#session) return this.#session.id;
    const last = this.#db.prepare('SELECT MAX(id) AS id FROM sessions').get() as { id: number | null };
    return last.id ?? undefined;
  }

  /** The top viewers by a metric, in one session or across all of them. */
  leaderboard(scope: 'session' | 'all', metric: LeaderboardMetric, limit = 10): ViewerFigures[] {
    if (scope === 'session') {
      const session = this.currentSession();
      if (session === undefined) return [];
      return this.#db
        .prepare(
          `SELECT user_id AS uniqueId, nickname, diamonds, likes, chats, points FROM viewers
           WHERE session = ? AND ${metric} > 0 ORDER BY ${metric} DESC LIMIT ?`,
        )
        .all(session, limit) as ViewerFigures[];
    }
    return this.#db
      .prepare(
        `SELECT user_id AS uniqueId, MAX(nickname) AS nickname, SUM(diamonds) AS diamonds, SUM(likes) AS likes,
           SUM(chats) AS chats, SUM(points) AS points FROM viewers GROUP BY user_id
         HAVING SUM(${metric}) > 0 ORDER BY SUM(${metric}) DESC LIMIT ?`,
      )
      .all(limit) as ViewerFigures[];
  }

  /** Removes events older than `days` (sessions and viewer figures stay: they are the stream's record). */
  prune(days: number): number {
    const before = this.#now() - days * 24 * 60 * 60 * 1000;
    // Times grow with seq: the last event too old bounds what goes, without an index on the time.
    const last = this.#db.prepare('SELECT MAX(seq) AS seq FROM events WHERE at < ?').get(before) as {
      seq: number | null;
    };
    if (last.seq === null) return 0;
    return this.#db.prepare('DELETE FROM events WHERE seq <= ?').run(last.seq).changes;
  }

  /** A consistent copy of the database to `path` while it stays in use (SQLite's online backup). */
  backup(path: string): Promise<unknown> {
    return this.#db.backup(path);
  }

  close(): void {
    clearInterval(this.#checkpointTimer);
    if (this.#db.open) this.#db.close();
  }
}
