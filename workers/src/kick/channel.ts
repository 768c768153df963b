// One member's Kick channel at the edge (one object per member, named by the member's id): the events of
// Kick's webhooks, numbered with the member's next `seq` and kept in SQLite for 24 hours (at most 10,000),
// the delivery ids already stored (the last 10,000, so a delivery Kick repeats is stored once: the check
// and the store are one step of this object), and the daemon's feed sockets (`GET /kick/events`), which
// hibernate between events. A feed socket lasts as long as the licence that opened it (closed with 4401
// at its `exp` by the object's alarm) and until the member signs out (4403); a member holds at most 2.
import { DurableObject } from 'cloudflare:workers';
import * as v from 'valibot';
import { errorBody } from '../../../shared/protocol/index.js';
import {
  KICK_FEED_CLOSE,
  KICK_FEED_MAX_SOCKETS,
  KICK_WEBHOOK_LIMITS,
  KickEventsAfter,
  type KickEventsFrame,
  type KickFeedEvent,
} from '../../../shared/protocol/kick.js';
import type { GatekeeperEnv } from '../env.js';

const FEED = 'feed';
const KEY_LAST_SEQ = 'lastSeq';
/** Licences below this epoch were signed out: they open no feed socket here. */
const KEY_SIGNED_OUT_BELOW = 'signedOutBelow';
/** Feed sockets opened so far: each socket's place in that order (the oldest makes way first). */
const KEY_FEEDS_OPENED = 'feedsOpened';

/** The headers by which the Worker tells the channel which licence opens a feed socket. */
export const FEED_HEADER = { exp: 'X-Kick-Feed-Licence-Exp', epoch: 'X-Kick-Feed-Licence-Epoch' } as const;

/** The licence of a feed socket, as FEED_HEADER carries it: `exp` in seconds, and its epoch. */
export function feedHeaders(licence: { exp: number; epoch: number }): Record<string, string> {
  return { [FEED_HEADER.exp]: String(licence.exp), [FEED_HEADER.epoch]: String(licence.epoch) };
}

/** What each feed socket keeps across hibernation: its licence's `exp` (s) and epoch, and its place. */
interface FeedAttachment {
  exp: number;
  epoch: number;
  n: number;
}

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
    if (wasEmpty) void this.#arm(now);
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

  /**
   * The member unlinked Kick (or the link was undone because they stopped using the app: `lapsed`): events
   * and delivery ids go, feed sockets close (1000, or 4403 for a lapsed member); the seq goes on.
   */
  forget(why: 'unlinked' | 'lapsed' = 'unlinked'): void {
    this.#sql('DELETE FROM events');
    this.#sql('DELETE FROM deliveries');
    for (const { ws } of this.#feeds()) {
      if (why === 'lapsed') safeClose(ws, KICK_FEED_CLOSE.signedOut, 'the membership is no longer on record');
      else safeClose(ws, 1000, 'Kick is no longer connected');
    }
    void this.ctx.storage.deleteAlarm();
  }

  /**
   * The member signed out: every licence below `epoch` is revoked. Their feed sockets close (4403), and
   * none opens again here with such a licence, even where the member's record has not caught up yet.
   */
  signOut(epoch: number): void {
    const below = Math.max(epoch, this.ctx.storage.kv.get<number>(KEY_SIGNED_OUT_BELOW) ?? 1);
    this.ctx.storage.kv.put(KEY_SIGNED_OUT_BELOW, below);
    for (const { ws, attachment } of this.#feeds()) {
      if (attachment.epoch < below) safeClose(ws, KICK_FEED_CLOSE.signedOut, 'signed out');
    }
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
    const expHeader = request.headers.get(FEED_HEADER.exp);
    const epochHeader = request.headers.get(FEED_HEADER.epoch);
    const exp = Number(expHeader);
    const epoch = Number(epochHeader);
    if (expHeader === null || epochHeader === null || !Number.isFinite(exp) || !Number.isSafeInteger(epoch)) {
      return Response.json(errorBody('bad_request', 'Not a request the Gatekeeper forwarded'), {
        status: 400,
      });
    }
    if (epoch < (this.ctx.storage.kv.get<number>(KEY_SIGNED_OUT_BELOW) ?? 1)) {
      return Response.json(errorBody('invalid_token', 'This licence was signed out; sign in again'), {
        status: 401,
      });
    }
    const now = Date.now();
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [FEED]);
    // A licence inside the verifier's clock tolerance past its exp: the daemon learns at once to refresh.
    if (exp * 1000 <= now) {
      safeClose(server, KICK_FEED_CLOSE.licenceExpired, 'the licence expired');
      return new Response(null, { status: 101, webSocket: client });
    }
    const n = (this.ctx.storage.kv.get<number>(KEY_FEEDS_OPENED) ?? 0) + 1;
    this.ctx.storage.kv.put(KEY_FEEDS_OPENED, n);
    server.serializeAttachment({ exp, epoch, n } satisfies FeedAttachment);
    // The oldest make way for the newest.
    const open = this.#feeds().sort((a, b) => a.attachment.n - b.attachment.n);
    for (const { ws } of open.slice(0, Math.max(0, open.length - KICK_FEED_MAX_SOCKETS))) {
      safeClose(ws, KICK_FEED_CLOSE.replaced, 'a newer feed socket of this member took its place');
    }
    // Synchronous from here to the return: no event is stored in between, so the replay and the live
    // events that follow it neither overlap nor leave a hole.
    if (after !== undefined) for (const frame of this.#replay(after)) sendTo(server, frame);
    await this.#arm(now);
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

  /**
   * Feed sockets close at their licence's exp (4401), and old events go at the end of their 24 hours even
   * when nothing new comes. Run twice at the same instant, the second run finds nothing left to do.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    this.#closeExpired(now);
    this.#prune(now);
    await this.#arm(now);
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

  /** The feed sockets still open, with what each keeps. */
  #feeds(): { ws: WebSocket; attachment: FeedAttachment }[] {
    const feeds: { ws: WebSocket; attachment: FeedAttachment }[] = [];
    for (const ws of this.ctx.getWebSockets(FEED)) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      // Sockets from before attachments were kept: licences last 7 days, so theirs ends within a week.
      const attachment = (ws.deserializeAttachment() as FeedAttachment | null) ?? { exp: 0, epoch: 1, n: 0 };
      feeds.push({ ws, attachment });
    }
    return feeds;
  }

  /** Closes the feed sockets whose licence's exp has come (4401: the daemon refreshes it and is back). */
  #closeExpired(now: number): void {
    for (const { ws, attachment } of this.#feeds()) {
      if (attachment.exp > 0 && attachment.exp * 1000 <= now) {
        safeClose(ws, KICK_FEED_CLOSE.licenceExpired, 'the licence expired');
      }
    }
  }

  /**
   * The alarm at what comes first: the exp of an open feed socket's licence, or the end of the oldest kept
   * event's 24 hours; none when neither. Only a time still ahead: what is due now is done first.
   */
  async #arm(now = Date.now()): Promise<void> {
    this.#closeExpired(now);
    const due: number[] = [];
    const oldest = this.#sql<{ at: number | null }>('SELECT MIN(at) AS at FROM events').one().at;
    if (oldest !== null) due.push(Math.max(oldest + KICK_WEBHOOK_LIMITS.keptMs + 1, now + 1));
    for (const { attachment } of this.#feeds()) if (attachment.exp > 0) due.push(attachment.exp * 1000);
    if (due.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...due));
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
