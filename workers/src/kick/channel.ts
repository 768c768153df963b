// One member's Kick channel at the edge (one object per member, named by the member's id): the events of
// Kick's webhooks, numbered with the member's next `seq` and kept in SQLite for 24 hours (at most 10,000),
// the delivery ids already stored (the last 10,000, so a delivery Kick repeats is stored once: the check
// and the store are one step of this object), and the daemon's feed sockets (`GET /kick/events`), which
// hibernate between events.
import { DurableObject } from 'cloudflare:workers';
import * as v from 'valibot';
import { errorBody } from '../../../shared/protocol/index.js';
import {
  KICK_WEBHOOK_LIMITS,
  KickEventsAfter,
  type KickEventsFrame,
  type KickFeedEvent,
} from '../../../shared/protocol/kick.js';
import type { GatekeeperEnv } from '../env.js';

const FEED = 'feed';
const KEY_LAST_SEQ = 'lastSeq';

/** An event as kept: its seq, when it happened and when it was stored (ms), and the event. */
export interface KeptKickEvent {
  seq: number;
  /** When it happened (the feed frame's `at`). */
  at: number;
  /** When it was stored: it is kept for 24 hours from here. */
  storedAt: number;
  event: KickFeedEvent;
}

export type KickStoreResult = { stored: true; seq: number } | { stored: false; reason: 'duplicate' };

export class KickChannel extends DurableObject<GatekeeperEnv> {
  constructor(ctx: DurableObjectState, env: GatekeeperEnv) {
    super(ctx, env);
    // `at`: when it was stored; `happened_at`: when it happened (added later: rows from before have none).
    this.#sql(
      'CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, event TEXT NOT NULL, happened_at INTEGER)',
    );
    const columns = this.#sql<{ name: string }>("SELECT name FROM pragma_table_info('events')").toArray();
    if (!columns.some((c) => c.name === 'happened_at')) {
      this.#sql('ALTER TABLE events ADD COLUMN happened_at INTEGER');
    }
    this.#sql(
      'CREATE TABLE IF NOT EXISTS deliveries (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE)',
    );
  }

  // --- RPC for the webhook route ---------------------------------------------------------------------

  /**
   * Stores a verified, mapped event unless its delivery id was stored already: it gets the member's next
   * seq, is kept, and goes to every open feed socket. `happenedAt` is Kick's time of the event where the
   * payload gives one (ms); the feed says the receipt otherwise, and for a time ahead of the receipt.
   */
  store(deliveryId: string, event: KickFeedEvent, happenedAt?: number): KickStoreResult {
    const seen = this.#sql('SELECT 1 FROM deliveries WHERE id = ?', deliveryId).toArray().length > 0;
    if (seen) return { stored: false, reason: 'duplicate' };
    const n = this.#sql<{ n: number }>('INSERT INTO deliveries (id) VALUES (?) RETURNING n', deliveryId).one()
      .n;
    this.#sql('DELETE FROM deliveries WHERE n <= ?', n - KICK_WEBHOOK_LIMITS.deliveryIds);
    const seq = this.#lastSeq() + 1;
    this.ctx.storage.kv.put(KEY_LAST_SEQ, seq);
    const now = Date.now();
    const at =
      happenedAt !== undefined && Number.isSafeInteger(happenedAt) && happenedAt >= 0
        ? Math.min(happenedAt, now)
        : now;
    const text = JSON.stringify(event);
    this.#prune(now);
    const wasEmpty = this.#sql('SELECT 1 FROM events LIMIT 1').toArray().length === 0;
    this.#sql('INSERT INTO events (seq, at, event, happened_at) VALUES (?, ?, ?, ?)', seq, now, text, at);
    const frame = eventFrame(seq, at, text);
    for (const ws of this.ctx.getWebSockets(FEED)) sendTo(ws, frame);
    // The alarm follows the oldest event; it only moves when this one is the oldest.
    if (wasEmpty) void this.#arm();
    return { stored: true, seq };
  }

  /** What is kept, oldest first (for tests and diagnostics): seq, when, event. */
  kept(): KeptKickEvent[] {
    this.#prune(Date.now());
    return this.#sql<{ seq: number; at: number; stored_at: number; event: string }>(
      'SELECT seq, COALESCE(happened_at, at) AS at, at AS stored_at, event FROM events ORDER BY seq',
    )
      .toArray()
      .map((r) => ({
        seq: r.seq,
        at: r.at,
        storedAt: r.stored_at,
        event: JSON.parse(r.event) as KickFeedEvent,
      }));
  }

  /** The member unlinked Kick: events and delivery ids go, feed sockets close; the seq goes on. */
  forget(): void {
    this.#sql('DELETE FROM events');
    this.#sql('DELETE FROM deliveries');
    for (const ws of this.ctx.getWebSockets(FEED)) safeClose(ws, 1000, 'Kick is no longer connected');
    void this.ctx.storage.deleteAlarm();
  }

  // --- The daemon's feed socket (the Worker checked the licence) ---------------------------------------

  override async fetch(request: Request): Promise<Response> {
    const param = new URL(request.url).searchParams.get('after');
    let after: number | undefined;
    if (param !== null) {
      const parsed = v.safeParse(KickEventsAfter, param);
      if (!parsed.success) {
        return Response.json(errorBody('bad_request', 'after must be a seq (a whole number)'), {
          status: 400,
        });
      }
      after = parsed.output;
    }
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [FEED]);
    // Synchronous from here to the return: no event is stored in between, so the replay and the live
    // events that follow it neither overlap nor leave a hole.
    if (after !== undefined) for (const frame of this.#replay(after)) sendTo(server, frame);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(): Promise<void> {
    // The daemon sends nothing on this socket; what it sends anyway is ignored.
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    safeClose(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  override async webSocketError(_ws: WebSocket, error: unknown): Promise<void> {
    console.error('kick feed socket error:', error);
  }

  /** Old events go at the end of their 24 hours even when nothing new comes. */
  override async alarm(): Promise<void> {
    this.#prune(Date.now());
    await this.#arm();
  }

  // --- Internals -------------------------------------------------------------------------------------

  /** The frames for a daemon that has everything up to `after`: a gap if some are gone, then the rest. */
  #replay(after: number): string[] {
    this.#prune(Date.now());
    const lastSeq = this.#lastSeq();
    const frames: string[] = [];
    const oldest = this.#sql<{ seq: number | null }>('SELECT MIN(seq) AS seq FROM events').one().seq;
    // Missed events that are no longer kept, or a seq this channel never gave (its history is another):
    // the daemon learns where what it can still get starts.
    const from = oldest ?? lastSeq + 1;
    if ((after < lastSeq && after < from - 1) || after > lastSeq) {
      frames.push(JSON.stringify({ type: 'gap', from: Math.max(1, from) } satisfies KickEventsFrame));
    }
    const rows = this.#sql<{ seq: number; at: number; event: string }>(
      'SELECT seq, COALESCE(happened_at, at) AS at, event FROM events WHERE seq > ? ORDER BY seq',
      after > lastSeq ? 0 : after,
    ).toArray();
    for (const row of rows) frames.push(eventFrame(row.seq, row.at, row.event));
    return frames;
  }

  /** Drops events past 24 hours and beyond the newest 10,000. */
  #prune(now: number): void {
    this.#sql('DELETE FROM events WHERE seq <= ?', this.#lastSeq() - KICK_WEBHOOK_LIMITS.keptEvents);
    // Oldest first by seq (the primary key), so a store reads a row or two, not the table.
    const cutoff = now - KICK_WEBHOOK_LIMITS.keptMs;
    for (;;) {
      const oldest = this.#sql<{ seq: number; at: number }>('SELECT seq, at FROM events ORDER BY seq LIMIT 1')
        .toArray()
        .at(0);
      if (!oldest || oldest.at >= cutoff) break;
      this.#sql('DELETE FROM events WHERE seq = ?', oldest.seq);
    }
  }

  /** The alarm at the end of the oldest kept event's 24 hours, or none. */
  async #arm(): Promise<void> {
    const oldest = this.#sql<{ at: number | null }>('SELECT MIN(at) AS at FROM events').one().at;
    if (oldest === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(oldest + KICK_WEBHOOK_LIMITS.keptMs + 1);
  }

  #lastSeq(): number {
    return this.ctx.storage.kv.get<number>(KEY_LAST_SEQ) ?? 0;
  }

  #sql<T extends Record<string, SqlStorageValue> = Record<string, SqlStorageValue>>(
    query: string,
    ...bindings: unknown[]
  ) {
    return this.ctx.storage.sql.exec<T>(query, ...bindings);
  }
}

/** `{"type":"event","seq":N,"at":T,"event":…}` around an event kept as JSON text. */
function eventFrame(seq: number, at: number, eventJson: string): string {
  return `{"type":"event","seq":${seq},"at":${at},"event":${eventJson}}`;
}

function sendTo(ws: WebSocket, frame: string): void {
  try {
    ws.send(frame);
  } catch {
    // Closing already.
  }
}

function safeClose(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}

/** The member's channel object. */
export function kickChannelOf(env: GatekeeperEnv, member: string) {
  return env.KICK_CHANNEL.get(env.KICK_CHANNEL.idFromName(member));
}
