// The event journal: every accepted event in events.db (SQLite through better-sqlite3,
// WAL), written before POST /api/events answers, with the daemon-wide `seq`, its time and its source;
// stream sessions with running totals, per-viewer figures for leaderboards and points, retention, and a
// corrupt database moved aside rather than stopping the daemon.
import { chmodSync, closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { currencyCode, giftCurrency } from '../../../shared/money.js';
import {
  type OverlayCommandInput,
  PLATFORMS,
  type Platform,
  type StreamEvent,
  type StreamEventType,
} from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';

/** Schema versions, applied in order; `PRAGMA user_version` says how many ran (exported for upgrade tests). */
export const MIGRATIONS: readonly string[] = [
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
  // Test events (from the test panel or the `event` command) are kept and marked, and count in no total;
  // overlay commands are kept a while, so a page resumes with them after a restart.
  `ALTER TABLE events ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE sessions ADD COLUMN test_events INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE commands (
     seq INTEGER PRIMARY KEY,
     at INTEGER NOT NULL,
     overlay TEXT NOT NULL,
     command TEXT NOT NULL
   );
   DROP TRIGGER events_add;
   CREATE TRIGGER events_add AFTER INSERT ON events WHEN NEW.test = 0 BEGIN
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
   END;
   CREATE TRIGGER events_add_test AFTER INSERT ON events WHEN NEW.test <> 0 BEGIN
     UPDATE sessions SET last_at = NEW.at, last_seq = NEW.seq, test_events = test_events + 1 WHERE id = NEW.session;
   END;`,
  // Gift value is in its platform's unit (TikTok's diamonds, Twitch's bits, a Super Chat's currency in
  // cents): each event keeps its platform (and a YouTube gift its currency), and each viewer's figures the
  // unit their `diamonds` are in, `mixed` once gifts in different units were added up; a board names it
  // without reading events. Viewers whose gift events are still kept get their unit now.
  `ALTER TABLE events ADD COLUMN platform TEXT;
   ALTER TABLE events ADD COLUMN currency TEXT;
   ALTER TABLE viewers ADD COLUMN platform TEXT;
   ALTER TABLE viewers ADD COLUMN currency TEXT;
   UPDATE viewers SET platform = g.platform, currency = g.currency FROM (
     SELECT session, user_id,
       CASE WHEN COUNT(DISTINCT p) = 1 THEN MAX(p) ELSE 'mixed' END AS platform,
       CASE WHEN COUNT(DISTINCT c) = 1 AND COUNT(c) = COUNT(*) AND MAX(p) = 'youtube' THEN MAX(c) END AS currency
     FROM (SELECT session, user_id, COALESCE(json_extract(event, '$.platform'), 'api') AS p,
             json_extract(event, '$.data.currency') AS c
           FROM events WHERE type = 'gift' AND test = 0 AND diamonds > 0)
     GROUP BY session, user_id
   ) AS g WHERE viewers.session = g.session AND viewers.user_id = g.user_id;
   UPDATE viewers SET currency = NULL WHERE currency IS NOT NULL AND NOT (currency GLOB '[A-Z][A-Z][A-Z]');
   DROP TRIGGER events_add;
   CREATE TRIGGER events_add AFTER INSERT ON events WHEN NEW.test = 0 BEGIN
     UPDATE sessions SET last_at = NEW.at, last_seq = NEW.seq, gifts = gifts + NEW.gifts, diamonds = diamonds + NEW.diamonds,
       likes = likes + NEW.likes, follows = follows + NEW.follows, shares = shares + NEW.shares,
       subscribes = subscribes + NEW.subscribes, chats = chats + NEW.chats,
       peak_viewers = MAX(peak_viewers, NEW.viewers)
     WHERE id = NEW.session;
     INSERT INTO viewers (session, user_id, nickname, diamonds, likes, chats, points, platform, currency)
       SELECT NEW.session, NEW.user_id, NEW.nickname, NEW.diamonds, NEW.likes, NEW.chats, NEW.points,
         CASE WHEN NEW.diamonds > 0 THEN NEW.platform END, CASE WHEN NEW.diamonds > 0 THEN NEW.currency END
       WHERE NEW.diamonds + NEW.likes + NEW.chats + NEW.points > 0
     ON CONFLICT (session, user_id) DO UPDATE SET nickname = excluded.nickname,
       diamonds = diamonds + excluded.diamonds, likes = likes + excluded.likes,
       chats = chats + excluded.chats, points = points + excluded.points,
       platform = CASE WHEN excluded.diamonds <= 0 THEN platform WHEN diamonds <= 0 THEN excluded.platform
         WHEN platform IS excluded.platform THEN platform ELSE 'mixed' END,
       currency = CASE WHEN excluded.diamonds <= 0 THEN currency WHEN diamonds <= 0 THEN excluded.currency
         WHEN currency = excluded.currency THEN currency END;
   END;`,
  // What paired devices changed (devices/audit.ts): ids never go back, so a page's `next` stays valid.
  `CREATE TABLE audit (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     device_id TEXT NOT NULL,
     device_name TEXT NOT NULL,
     method TEXT NOT NULL,
     path TEXT NOT NULL,
     status INTEGER NOT NULL
   );`,
  // Each viewer's points on each platform across every session (what the `!points` chat command answers),
  // kept like the viewers' figures when old events go; a journal written before starts from its kept events.
  `CREATE TABLE viewer_points (
     platform TEXT NOT NULL,
     user_id TEXT NOT NULL,
     points INTEGER NOT NULL,
     PRIMARY KEY (platform, user_id)
   ) WITHOUT ROWID;
   INSERT INTO viewer_points (platform, user_id, points)
     SELECT COALESCE(platform, json_extract(event, '$.platform'), 'api'), user_id, SUM(points) FROM events
     WHERE test = 0 AND points <> 0 GROUP BY 1, 2;
   CREATE TRIGGER events_points AFTER INSERT ON events WHEN NEW.test = 0 AND NEW.points <> 0 BEGIN
     INSERT INTO viewer_points (platform, user_id, points) VALUES (COALESCE(NEW.platform, 'api'), NEW.user_id, NEW.points)
     ON CONFLICT (platform, user_id) DO UPDATE SET points = points + excluded.points;
   END;`,
  // Overlay commands are kept a row per overlay per turn (at most COMMANDS_PER_ROW), not a row each: a
  // rule set firing 40 commands per gift writes one row, not 40. `last_seq` is the highest number in the
  // row, `at` its newest time, `commands` a JSON array of [seq, at, command] in order. The table of single
  // commands stays, empty.
  `CREATE TABLE IF NOT EXISTS command_rows (
     last_seq INTEGER PRIMARY KEY,
     at INTEGER NOT NULL,
     overlay TEXT NOT NULL,
     count INTEGER NOT NULL,
     commands TEXT NOT NULL
   );
   INSERT INTO command_rows (last_seq, at, overlay, count, commands)
     SELECT seq, at, overlay, 1, '[[' || seq || ',' || at || ',' || command || ']]' FROM commands;
   DELETE FROM commands;`,
  // What an audited request acted on, in words (the rule a "test this rule" ran), when its path does not say.
  'ALTER TABLE audit ADD COLUMN detail TEXT;',
  // An event that reached the daemon late (caught up: the Kick feed's backlog after a night off, a replayed
  // socket) is kept at its own time and keeps when it arrived, so the dashboard lists what came while the
  // streamer was away. Live events leave it NULL (and out of the index).
  `ALTER TABLE events ADD COLUMN arrived_at INTEGER;
   CREATE INDEX events_arrived ON events (arrived_at) WHERE arrived_at IS NOT NULL;`,
];

/** How many schema versions this daemon knows (a newer journal is not opened). */
export const MIGRATION_COUNT = MIGRATIONS.length;

/** A session ends after this long without events. */
const SESSION_IDLE_MS = 30 * 60 * 1000;
/** How often the WAL is checkpointed into the database file. */
const CHECKPOINT_MS = 2000;
/** `seq`s are reserved in blocks, so numbers never repeat across restarts without a write per message. */
const SEQ_BLOCK = 10_000;
/** The highest `seq` the journal accepts from its files: far above any stream, far below float trouble. */
const SEQ_MAX = 2 ** 50;
/** Overlay commands are kept this long in the journal (for pages resuming after a restart)… */
const COMMANDS_KEPT_MS = 60 * 60 * 1000;
/** …and at most this many; the oldest go first. */
const COMMANDS_KEPT_MAX = 20_000;
/** Past the count limit the oldest commands go down to this many below it, so a steady stream of
 * commands deletes once per this many rather than at every write. */
const COMMANDS_PRUNE_SLACK = 1000;
/** The most commands one row holds (rows go whole when the oldest are let go). */
const COMMANDS_PER_ROW = 100;

/** Past this many minutes a session's chart is not filled with quiet minutes (two weeks). */
const MINUTES_FILLED_MAX = 14 * 24 * 60;
/** One order for equal figures on every board: the name, then the id (`nickname` and `uniqueId` columns). */
const TIE_ORDER = 'nickname COLLATE NOCASE ASC, uniqueId ASC';

/** The mode of events.db and its -wal and -shm: they hold every viewer's name and message. */
const FILE_MODE = 0o600;

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

/** A `seq` read from a file: a whole number from 0 to SEQ_MAX, else undefined (never NaN). */
function seqFrom(value: unknown): number | undefined {
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

/** An event that reaches the daemon after the fact (decisions: caught-up events): its own time. */
export interface LateArrival {
  /** When it happened, in milliseconds since the epoch. */
  at: number;
}

/** Caught-up events are listed this long after they arrived ("while you were away"). */
export const CAUGHT_UP_LISTED_MS = 24 * 60 * 60 * 1000;

/** What a page resuming after a restart can get from the journal (ws/replay.ts). */
export interface KeptForReplay {
  /** The newest events, oldest first. */
  events: { seq: number; at: number; event: StreamEvent }[];
  /** The highest `seq` of an event no longer kept (a resume from before it misses something). */
  eventsPrunedUpTo: number;
  commands: { seq: number; at: number; overlayId: string; command: OverlayCommandInput }[];
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

export interface ViewerFigures {
  uniqueId: string;
  nickname: string;
  diamonds: number;
  likes: number;
  chats: number;
  points: number;
  /** The platform whose unit `diamonds` are in (`mixed`: added up from several units, the figure alone). */
  platform?: Platform | 'mixed';
  /** The currency of YouTube gifts in `diamonds` (cents), when every one said the same. */
  currency?: string;
}

/** A viewer's figures as read from the database: a unit it does not know is left out, not null. */
type FiguresRow = Omit<ViewerFigures, 'platform' | 'currency'> & {
  platform: string | null;
  currency: string | null;
};

function figuresOf({ platform, currency, ...figures }: FiguresRow): ViewerFigures {
  const known = platform === 'mixed' || (PLATFORMS as readonly (string | null)[]).includes(platform);
  return {
    ...figures,
    ...(known ? { platform: platform as Platform | 'mixed' } : {}),
    ...(known && currencyCode(currency) ? { currency: currency as string } : {}),
  };
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
  /** The currency of a gift's value (its cents) where its platform counts in money, as the platform said it. */
  let currency: string | undefined;
  switch (event.type) {
    case 'gift':
      // A Twitch cheer is one gift whose value is its bits (`repeatCount`): six cheers of 100 bits are
      // six gifts, not 600.
      gifts = event.platform === 'twitch' && event.data.giftName === 'Bits' ? 1 : event.data.repeatCount;
      diamonds = (event.data.diamondCount ?? 0) * event.data.repeatCount;
      currency = giftCurrency(event.platform, event.data.currency);
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
  return { gifts, diamonds, likes, chats, follows, shares, subscribes, viewers, points: earned, currency };
}

export class Journal {
  readonly #db: Database.Database;
  readonly #options: JournalOptions;
  readonly #insert: Database.Statement;
  readonly #append: (
    event: StreamEvent,
    source: string,
    json?: string,
    test?: boolean,
    seq?: number,
    late?: LateArrival,
  ) => number;
  readonly #reserve: (to: number) => void;
  #nextSeq: number;
  #reservedTo: number;
  #session: { id: number; lastAt: number } | undefined;
  readonly #checkpointTimer: NodeJS.Timeout;
  readonly #checkpointer: Checkpointer | undefined;
  /** Commands kept in the table (counted at open, then kept up to date), for the count limit. */
  #commandCount: number;
  #commandsSincePrune = 0;
  /**
   * Commands recorded this turn, written in one transaction once the turn ends (or before anything reads
   * the table): a rule firing 40 overlay commands costs one commit, not 40, and none of it holds up the
   * event that fired it. Events are never buffered: each is written before `append` returns.
   */
  #pendingCommands: PendingCommand[] = [];
  #commandFlush: NodeJS.Immediate | undefined;
  readonly #writeCommands: (rows: CommandRow[]) => void;
  /** The oldest rows of commands: the highest number in each, its newest time, how many it holds. */
  readonly #oldestRows: Database.Statement<[number], { seq: number; at: number; count: number }>;
  readonly #deleteCommandsUpTo: Database.Statement<[number], { count: number }>;
  readonly #getMeta: Database.Statement<[string], { value: string }>;
  readonly #setMeta: Database.Statement<[string, string]>;
  /** A viewer's points on a platform (prepared when first asked). */
  #viewerPoints: Database.Statement<[string, string], { points: number }> | undefined;

  private constructor(db: Database.Database, options: JournalOptions) {
    this.#db = db;
    this.#options = options;
    const meta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
    const setMeta = db.prepare<[string, string]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    this.#getMeta = meta;
    this.#setMeta = setMeta;
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
    const reservedText = meta.get('seq_reserved')?.value;
    let reserved = seqFrom(reservedText ?? '0');
    if (reserved === undefined) {
      // Repaired, never NaN: the numbers in the rows and in events.seq still say where to go on from.
      options.log(
        `[journal] the stored sequence (${JSON.stringify(reservedText).slice(0, 40)}) is not a number: it was ignored`,
      );
      reserved = 0;
    }
    const seqFile = seqFileOf(options.path);
    // Numbers handed out before a restart (or by a journal that was moved aside) are never handed out again.
    const highWater = Math.max(
      maxSeqRow.m ?? 0,
      maxCommandRow.m ?? 0,
      reserved,
      readSeqFile(seqFile, options.log),
    );
    this.#nextSeq = highWater + 1;
    this.#reservedTo = highWater;
    // The first number this database could ever hold: a page resuming from before it missed what an
    // earlier journal had.
    if (seqFrom(meta.get('first_seq')?.value) === undefined) {
      const min = (db.prepare('SELECT MIN(seq) AS m FROM events').get() as { m: number | null }).m;
      setMeta.run('first_seq', String(min ?? this.#nextSeq));
    }
    // Commands before this version were not kept: a resume from before now may have missed some.
    if (seqFrom(meta.get('commands_pruned_to')?.value) === undefined)
      setMeta.run('commands_pruned_to', String(this.#nextSeq - 1));
    this.#reserve = (to: number) => {
      this.#reservedTo = to;
      setMeta.run('seq_reserved', String(to));
      writeSeqFile(seqFile, to, options.log);
    };
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
    // The WAL is folded into the database every few seconds, by a connection of its own in a worker
    // thread: a checkpoint writes and syncs the database file, and events arriving meanwhile would wait
    // for it. When the worker cannot run, this connection does it, between events.
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
    const open = db
      .prepare('SELECT id, last_at AS lastAt FROM sessions WHERE ended_at IS NULL ORDER BY id DESC LIMIT 1')
      .get() as { id: number; lastAt: number } | undefined;
    this.#session = open;

    this.#insert = db.prepare(
      `INSERT INTO events (seq, at, source, type, session, user_id, nickname, gifts, diamonds, likes, chats,
         follows, shares, subscribes, viewers, points, event, test, platform, currency, arrived_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // A late event older than its session's last one: the session's last time stays the newer one.
    const keepLastAt = db.prepare<[number, number]>(
      'UPDATE sessions SET last_at = MAX(last_at, ?) WHERE id = ?',
    );
    const newSession = db.prepare(
      'INSERT INTO sessions (first_seq, last_seq, started_at, last_at) VALUES (?, ?, ?, ?)',
    );
    const endSession = db.prepare('UPDATE sessions SET ended_at = last_at WHERE id = ?');
    // Rare steps (a new session, a new block of seq numbers) in a transaction of their own.
    const prepare = db.transaction((now: number, seq: number) => {
      if (this.#session && now - this.#session.lastAt > SESSION_IDLE_MS) {
        endSession.run(this.#session.id);
        this.#session = undefined;
      }
      if (!this.#session)
        this.#session = { id: Number(newSession.run(seq, seq, now, now).lastInsertRowid), lastAt: now };
      if (seq > this.#reservedTo) this.#reserve(seq + SEQ_BLOCK);
    });
    this.#append = (
      event: StreamEvent,
      source: string,
      json?: string,
      test = false,
      given?: number,
      late?: LateArrival,
    ): number => {
      // A late event is kept at its own time (its session too), with when it arrived beside it.
      const arrived = late ? this.#now() : undefined;
      const now = late?.at ?? this.#now();
      const seq = given ?? this.#nextSeq;
      if (!this.#session || now - this.#session.lastAt > SESSION_IDLE_MS || seq > this.#reservedTo)
        prepare(now, seq);
      const session = this.#session as { id: number; lastAt: number };
      const c = contribution(event, this.#options.points?.() ?? DEFAULT_POINTS);
      if (seq > SEQ_MAX) throw new Error('the journal has handed out every number it may');
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
        test ? 1 : 0,
        event.platform,
        c.currency ?? null,
        arrived ?? null,
      );
      if (seq >= this.#nextSeq) this.#nextSeq = seq + 1;
      if (now < session.lastAt) keepLastAt.run(session.lastAt, session.id);
      else session.lastAt = now;
      return seq;
    };
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
    const db = Journal.#openDatabase(options.path, options.log);
    try {
      return new Journal(db, options);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  static #openDatabase(path: string, log: (line: string) => void): Database.Database {
    // Created 0600 before SQLite opens it (SQLite gives -wal and -shm the mode of the database), and
    // made 0600 if an older version left it readable by others: it holds every viewer's messages.
    closeSync(openSync(path, 'a', FILE_MODE));
    const makePrivate = (file: string) => {
      if (!existsSync(file)) return;
      try {
        chmodSync(file, FILE_MODE);
      } catch (err) {
        // Another user's file this daemon may still read and write: said, and not a reason to set it aside.
        log(`[journal] ${file} could not be made private (mode 0600): ${errorMessage(err)}`);
      }
    };
    makePrivate(path);
    const db = new Database(path);
    try {
      for (const suffix of ['-wal', '-shm']) makePrivate(path + suffix);
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
      // The first write makes -wal and -shm; they take the database's mode, checked here all the same.
      for (const suffix of ['-wal', '-shm']) makePrivate(path + suffix);
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
    return this.#append(event, source, json, test, seq, late);
  }

  /** Writes several events in one transaction (one commit), answering their `seq`s in order. */
  appendBatch(events: readonly { event: StreamEvent; source: string; test?: boolean }[]): number[] {
    return this.#db.transaction(() =>
      events.map(({ event, source, test }) => this.#append(event, source, undefined, test)),
    )();
  }

  /** A `seq` for a message that is not an event (an overlay command), from the same sequence. */
  nextSeq(): number {
    const seq = this.#nextSeq++;
    if (seq > this.#reservedTo) this.#reserve(seq + SEQ_BLOCK);
    return seq;
  }

  /**
   * Keeps an overlay command (at most an hour, at most 20,000), so that a page resuming after a restart
   * gets it too. It is written with the other commands of this turn once the turn ends; a command that
   * cannot be written is logged and still sent.
   */
  recordCommand(overlayId: string, seq: number, at: number, command: OverlayCommandInput): void {
    this.#pendingCommands.push({ seq, at, overlay: overlayId, command });
    this.#commandFlush ??= setImmediate(() => this.#flushCommands());
  }

  /** Writes the commands recorded since the last flush, in one transaction: a row per overlay (or per 100). */
  #flushCommands(): void {
    if (this.#commandFlush) clearImmediate(this.#commandFlush);
    this.#commandFlush = undefined;
    const pending = this.#pendingCommands;
    if (pending.length === 0 || !this.#db.open) return;
    this.#pendingCommands = [];
    try {
      this.#writeCommands(commandRows(pending));
      this.#commandCount += pending.length;
      this.#commandsSincePrune += pending.length;
      if (this.#commandsSincePrune >= 100 || this.#commandCount > COMMANDS_KEPT_MAX) this.#pruneCommands();
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
  #pruneCommands(): void {
    this.#commandsSincePrune = 0;
    const cutoff = this.#now() - COMMANDS_KEPT_MS;
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
      this.#raiseMeta('commands_pruned_to', upTo);
    })();
  }

  /** A `seq` mark in meta that only goes up. */
  #raiseMeta(key: string, value: number): void {
    const old = seqFrom(this.#getMeta.get(key)?.value);
    if (old !== undefined && old >= value) return;
    this.#setMeta.run(key, String(value));
  }

  /** The connection to events.db, for a module that keeps a table of its own there (devices/audit.ts). */
  get database(): Database.Database {
    return this.#db;
  }

  /** A value another part keeps beside the events (where Kick's events through the Gatekeeper stand). */
  metaValue(key: string): string | undefined {
    return this.#getMeta.get(key)?.value;
  }

  /** Writes such a value (in the file when this returns). */
  setMetaValue(key: string, value: string): void {
    this.#setMeta.run(key, value);
  }

  /** The commands of an overlay that no longer exists go. */
  forgetCommands(overlayId: string): void {
    this.#flushCommands();
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

  /**
   * The newest `limit` events and the kept commands, for the pages that resume after a restart, with the
   * highest numbers no longer kept.
   */
  keptForReplay(limit: number): KeptForReplay {
    this.#flushCommands();
    const metaSeq = (key: string) =>
      seqFrom(
        (this.#db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)
          ?.value,
      ) ?? this.#nextSeq - 1;
    const rows = (
      this.#db.prepare('SELECT seq, at, event FROM events ORDER BY seq DESC LIMIT ?').all(limit + 1) as {
        seq: number;
        at: number;
        event: string;
      }[]
    ).reverse();
    // One more than asked: when it is there, everything up to it is no longer kept.
    const beyond = rows.length > limit ? rows.shift() : undefined;
    let eventsPrunedUpTo = Math.max(metaSeq('first_seq') - 1, beyond?.seq ?? 0);
    const pruned = seqFrom(
      (
        this.#db.prepare("SELECT value FROM meta WHERE key = 'events_pruned_to'").get() as
          | { value: string }
          | undefined
      )?.value,
    );
    if (pruned !== undefined) eventsPrunedUpTo = Math.max(eventsPrunedUpTo, pruned);
    const commands: KeptForReplay['commands'] = [];
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
    return {
      events: rows.map((r) => ({ seq: r.seq, at: r.at, event: JSON.parse(r.event) as StreamEvent })),
      eventsPrunedUpTo,
      commands,
      commandsPrunedUpTo: metaSeq('commands_pruned_to'),
    };
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
        if (drop.run(id).changes > 0 && this.#session?.id === id) this.#session = undefined;
      }
      return removed;
    })();
  }

  /** The session in progress (or the last one), or undefined before any event. */
  currentSession(): number | undefined {
    if (this.#session) return this.#session.id;
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
    if (scope === 'session') {
      const session = this.currentSession();
      if (session === undefined) return [];
      return (
        this.#db
          .prepare(
            `SELECT user_id AS uniqueId, nickname, diamonds, likes, chats, points, platform, currency FROM viewers
           WHERE session = ? AND ${metric} > 0 ORDER BY ${metric} DESC, ${TIE_ORDER} LIMIT ?`,
          )
          .all(session, limit) as FiguresRow[]
      ).map(figuresOf);
    }
    const top = this.#db
      .prepare(
        `SELECT user_id AS uniqueId, MAX(nickname) AS nickname, SUM(diamonds) AS diamonds, SUM(likes) AS likes,
           SUM(chats) AS chats, SUM(points) AS points FROM viewers GROUP BY user_id
         HAVING SUM(${metric}) > 0 ORDER BY SUM(${metric}) DESC, ${TIE_ORDER} LIMIT ?`,
      )
      .all(limit) as Omit<FiguresRow, 'platform' | 'currency'>[];
    if (top.length === 0) return [];
    // The units of the few viewers ranked, by their key in every session (no scan, whatever the table's
    // size). Across sessions a unit holds when every session with gifts had that one (one unknown: `mixed`).
    const units = this.#db
      .prepare(
        `SELECT user_id AS uniqueId, platform, currency FROM viewers
         WHERE session IN (SELECT id FROM sessions) AND user_id IN (SELECT value FROM json_each(?)) AND diamonds > 0`,
      )
      .all(JSON.stringify(top.map((v) => v.uniqueId))) as Pick<
      FiguresRow,
      'uniqueId' | 'platform' | 'currency'
    >[];
    const merged = new Map<string, Pick<FiguresRow, 'platform' | 'currency'>>();
    for (const { uniqueId, platform, currency } of units) {
      const seen = merged.get(uniqueId);
      merged.set(
        uniqueId,
        seen
          ? {
              platform: seen.platform === platform ? platform : (seen.platform ?? platform) ? 'mixed' : null,
              currency: seen.currency === currency ? currency : null,
            }
          : { platform, currency },
      );
    }
    return top.map((v) =>
      figuresOf({ ...v, ...(merged.get(v.uniqueId) ?? { platform: null, currency: null }) }),
    );
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
      this.#raiseMeta('events_pruned_to', upTo);
      return this.#db.prepare('DELETE FROM events WHERE seq <= ?').run(upTo).changes;
    })();
  }

  /** A consistent copy of the database to `path` while it stays in use (SQLite's online backup). */
  backup(path: string): Promise<unknown> {
    this.#flushCommands();
    return this.#db.backup(path);
  }

  close(): void {
    clearInterval(this.#checkpointTimer);
    this.#flushCommands();
    // The worker's connection closes first, so this one is the last and folds the WAL in as it closes.
    this.#checkpointer?.close();
    if (this.#db.open) this.#db.close();
  }
}

interface Checkpointer {
  /** Asks for a checkpoint; false when the worker is not running (the caller does it then). */
  run(): boolean;
  /** Closes the worker's connection and waits (at most 5 s) until it is closed. */
  close(): void;
}

/** The worker: its own connection to events.db, a passive checkpoint per message, closed on `close`. */
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const done = new Int32Array(workerData.done);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 2000');
parentPort.on('message', (message) => {
  if (message === 'checkpoint') {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      parentPort.postMessage(String((err && err.message) || err));
    }
    return;
  }
  try { db.close(); } finally {
    Atomics.store(done, 0, 1);
    Atomics.notify(done, 0);
    parentPort.close();
  }
});
`;

function startCheckpointer(path: string, log: (line: string) => void): Checkpointer | undefined {
  let worker: Worker;
  const done = new SharedArrayBuffer(4);
  try {
    worker = new Worker(CHECKPOINTER_SOURCE, {
      eval: true,
      workerData: { path, module: createRequire(import.meta.url).resolve('better-sqlite3'), done },
    });
  } catch (err) {
    log(`[journal] checkpoints run between events: no worker thread (${errorMessage(err)})`);
    return undefined;
  }
  worker.unref();
  let running = true;
  worker.on('message', (message) => log(`[journal] checkpoint failed: ${String(message)}`));
  worker.on('error', (err) => {
    running = false;
    log(`[journal] checkpoints run between events: the worker stopped (${errorMessage(err)})`);
  });
  worker.on('exit', () => {
    running = false;
  });
  return {
    run() {
      if (running) worker.postMessage('checkpoint');
      return running;
    },
    close() {
      if (!running) return;
      running = false;
      worker.postMessage('close');
      Atomics.wait(new Int32Array(done), 0, 0, 5000);
    },
  };
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
    writeFileSync(tmp, `${value}\n`, { mode: FILE_MODE });
    renameSync(tmp, path);
  } catch (err) {
    log(`[journal] ${path} could not be written: ${errorMessage(err)}`);
  }
}
