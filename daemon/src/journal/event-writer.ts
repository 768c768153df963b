// Writing one accepted event: its session (a new one after half an hour without events), its `seq`, and
// one INSERT whose trigger adds it to its session's totals and its viewer's figures.
import type Database from 'better-sqlite3';
import type { StreamEvent } from '../../../shared/protocol/index.js';
import { contribution, DEFAULT_POINTS, type PointRules } from './contribution.js';
import { SEQ_MAX, type Sequence } from './sequence.js';

/** A session ends after this long without events. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

/** An event that reaches the daemon after the fact (decisions: caught-up events): its own time. */
export interface LateArrival {
  /** When it happened, in milliseconds since the epoch. */
  at: number;
}

interface EventWriterOptions {
  now: () => number;
  points?: (() => PointRules) | undefined;
}

export class EventWriter {
  readonly #sequence: Sequence;
  readonly #options: EventWriterOptions;
  #session: { id: number; lastAt: number } | undefined;
  readonly #insert: Database.Statement;
  readonly #keepLastAt: Database.Statement<[number, number]>;
  readonly #endSession: Database.Statement<[number]>;
  /** Rare steps (a new session, a new block of seq numbers) in a transaction of their own. */
  readonly #prepare: (now: number, seq: number) => void;

  constructor(db: Database.Database, sequence: Sequence, options: EventWriterOptions) {
    this.#sequence = sequence;
    this.#options = options;
    this.#session = db
      .prepare('SELECT id, last_at AS lastAt FROM sessions WHERE ended_at IS NULL ORDER BY id DESC LIMIT 1')
      .get() as { id: number; lastAt: number } | undefined;
    this.#insert = db.prepare(
      `INSERT INTO events (seq, at, source, type, session, user_id, nickname, gifts, diamonds, likes, chats,
         follows, shares, subscribes, viewers, points, event, test, platform, currency, arrived_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // A late event older than its session's last one: the session's last time stays the newer one.
    this.#keepLastAt = db.prepare<[number, number]>(
      'UPDATE sessions SET last_at = MAX(last_at, ?) WHERE id = ?',
    );
    const newSession = db.prepare(
      'INSERT INTO sessions (first_seq, last_seq, started_at, last_at) VALUES (?, ?, ?, ?)',
    );
    this.#endSession = db.prepare<[number]>('UPDATE sessions SET ended_at = last_at WHERE id = ?');
    this.#prepare = db.transaction((now: number, seq: number) => {
      if (this.#session && now - this.#session.lastAt > SESSION_IDLE_MS) {
        this.#endSession.run(this.#session.id);
        this.#session = undefined;
      }
      if (!this.#session)
        this.#session = { id: Number(newSession.run(seq, seq, now, now).lastInsertRowid), lastAt: now };
      if (sequence.beyondReserved(seq)) sequence.reserveFrom(seq);
    });
  }

  /** Writes one event (see Journal.append) and answers its `seq`. */
  append(
    event: StreamEvent,
    source: string,
    json?: string,
    test = false,
    given?: number,
    late?: LateArrival,
  ): number {
    // A late event is kept at its own time (its session too), with when it arrived beside it.
    const arrived = late ? this.#options.now() : undefined;
    const now = late?.at ?? this.#options.now();
    const seq = given ?? this.#sequence.peek();
    if (!this.#session || now - this.#session.lastAt > SESSION_IDLE_MS || this.#sequence.beyondReserved(seq))
      this.#prepare(now, seq);
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
    this.#sequence.used(seq);
    if (now < session.lastAt) this.#keepLastAt.run(session.lastAt, session.id);
    else session.lastAt = now;
    return seq;
  }

  /** The session in progress, if any. */
  get session(): number | undefined {
    return this.#session?.id;
  }

  /** The current session ends now (its source went offline). */
  endSession(): void {
    if (!this.#session) return;
    this.#endSession.run(this.#session.id);
    this.#session = undefined;
  }

  /** A session was removed from the database: when it was the current one, the next event starts one. */
  sessionRemoved(id: number): void {
    if (this.#session?.id === id) this.#session = undefined;
  }
}
