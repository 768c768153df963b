// The hub of one published overlay (one object per member and overlay): it holds the publisher's socket,
// the latest snapshot and the recent messages in its SQLite storage, admits viewers to its shards and sends
// each batch of messages once to each shard that has viewers. The daemon sends each message once, whatever
// the number of viewers; the shards write it to their viewers.
import { DurableObject } from 'cloudflare:workers';
import {
  errorBody,
  type HubToPublisher,
  PublisherToHub,
  parseWith,
  RELAY_CLOSE,
  RELAY_LIMITS,
  replacedReason,
} from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { memberEpoch, readMember } from '../membership/member-store.js';
import { deriveSubdomain } from '../tunnels/subdomain.js';
import { hubName, overBytes, RELAY_HEADER, shardLayout, shardName, shardOrder } from './names.js';

const PUBLISHER = 'publisher';
/** Past the 500 messages kept whatever their age, the window of 5 minutes is bounded too (storage). */
const BUFFER_CAP_MESSAGES = 20_000;
const BUFFER_CAP_BYTES = 64 * 1024 * 1024;
/**
 * A resume replays at most this much (the newest kept messages; the rest is a gap), so a join costs the
 * hub the same bounded work whatever `resumeFrom` says.
 */
export const REPLAY_CAP_BYTES = 2 * 1024 * 1024;
/** Viewer sockets one address may open on one overlay per minute (each one joins once). */
export const OPENS_PER_IP_PER_MINUTE = 30;
const OPEN_WINDOW_MS = 60_000;
/** Past this many addresses in the window, the ones whose window ended are let go (memory). */
const OPEN_WINDOW_ADDRESSES = 10_000;
/**
 * Frames waiting for a shard that is still busy with the previous batch are merged into one batch; past
 * this many the shard is too far behind: its viewers are closed to reconnect and resume from the buffer.
 */
const PENDING_CAP_ENTRIES = 4096;
const PENDING_CAP_CHARS = 8 * 1024 * 1024;
/** A full relay tells the page when to try again (it also backs off on its own, with jitter). */
const FULL_RETRY_AFTER_SECONDS = 10;
/**
 * A publisher closed at its licence's `exp` has this long to come back with a refreshed licence; its
 * viewers, the snapshot and the kept messages wait for it. Past that, the publication ends.
 */
export const PUBLISHER_RETURN_MS = 10 * 60_000;

type ShardStub = ReturnType<GatekeeperEnv['RELAY_SHARD']['get']>;

/** Who publishes this overlay, as the Worker vouched for at the publisher's last connect. */
interface Publication {
  member: string;
  subdomain: string;
  overlayId: string;
  /** The licence's `exp` (seconds) and epoch. */
  exp: number;
  epoch: number;
}

/** One frame on its way to the viewers: its place in the hub's order and its text, verbatim. */
export interface RelayEntry {
  pos: number;
  text: string;
}

/** What a joining viewer gets first (its `init`, then what it missed), and where live messages take over. */
export interface JoinAnswer {
  frames: string[];
  pos: number;
}

/** Where the stream of frames stands. */
interface Stream {
  /** The last position handed out (never reset, so shards never see a position twice). */
  pos: number;
  /** The highest `seq` relayed since the first publish; absent when none. */
  lastSeq?: number;
  /** The highest `seq` no longer kept (a resume from below it has a gap); absent until a message came. */
  floor?: number;
  /** Messages kept in the replay table, and their bytes. */
  count: number;
  bytes: number;
  /** The bytes of every message ever kept (a kept message's `start` is this before it was kept). */
  total?: number;
}

/** One shard's deliveries: one batch at a time; what comes meanwhile waits as one merged batch. */
interface Outbox {
  pending: RelayEntry[];
  chars: number;
  /** Frames were dropped for this shard: its viewers reconnect once the batch under way is done. */
  behind: boolean;
}

/** Storage keys (the object's synchronous key-value store, in SQLite). */
const KEY = {
  publication: 'publication',
  /** The `init` a page would get now, as text; absent while nothing is published. */
  snapshot: 'snapshot',
  /** Where the stream of frames stands (Stream): one row, written once per frame. */
  stream: 'stream',
  /** When the member was last found Premium (ms). */
  checkedAt: 'checkedAt',
  /** The viewer count the publisher last got, and when. */
  countSent: 'countSent',
  countDueAt: 'countDueAt',
} as const;

export class OverlayRelay extends DurableObject<GatekeeperEnv> {
  /** Entries not yet sent to the shards, and the batch timer (at most one batch per 50 ms). */
  #pending: RelayEntry[] = [];
  #batchTimer: ReturnType<typeof setTimeout> | undefined;
  #lastBatchAt = 0;
  /** The shards with a delivery under way, each with what waits for it, so a shard gets batches in order. */
  readonly #outboxes = new Map<number, Outbox>();
  /** Viewer sockets each address opened in the current minute (memory: an evicted hub had none). */
  readonly #opens = new Map<string, { since: number; count: number }>();
  /**
   * Per shard: admissions under way, and a count of admissions and leaves seen, so a shard's count
   * taken while one of those happened is not trusted over the hub's own.
   */
  readonly #admitting = new Map<number, number>();
  readonly #changes = new Map<number, number>();
  /**
   * The publisher's token bucket (200 frames/s, capacity 200), kept across reconnects so a new socket
   * does not refill it; a fresh object starts full (it was idle long enough to refill anyway).
   */
  #tokens: number = RELAY_LIMITS.publisherFramesPerSecond;
  #tokensAt = Date.now();

  /** Whether this instance made sure of its tables (a publisher's connect does, before anything is written). */
  #schemaReady = false;

  // Nothing is written before a publisher comes: a viewer, a page or a media request for an overlay
  // never published reads and answers 404, and the object keeps no storage at all.

  /**
   * The tables, made when the first publisher connects (they stay until the object is deleted), and
   * checked by every use of them, which only comes after a publication. `replay`: the kept messages as
   * a resume sends them (`replayed: true` already in), with where each starts in the bytes ever kept;
   * `shards`: the viewers the hub believes each shard holds.
   */
  #ensureSchema(): void {
    if (this.#schemaReady) return;
    this.#sql(
      'CREATE TABLE IF NOT EXISTS replay (pos INTEGER PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL, start INTEGER NOT NULL, text TEXT NOT NULL)',
    );
    this.#sql('CREATE INDEX IF NOT EXISTS replay_start ON replay (start)');
    this.#sql('CREATE TABLE IF NOT EXISTS shards (idx INTEGER PRIMARY KEY, viewers INTEGER NOT NULL)');
    // Tables of an earlier version: its kept messages were stored as sent, and resumes from before
    // now are a gap; per-address counts now live on the shards.
    const legacy = this.#sql<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('buffer', 'ips')",
    ).toArray();
    for (const { name } of legacy) this.#sql(`DROP TABLE ${name === 'buffer' ? 'buffer' : 'ips'}`);
    if (legacy.some(({ name }) => name === 'buffer')) {
      const stream = this.#stream();
      this.ctx.storage.kv.put<Stream>(KEY.stream, {
        pos: stream.pos,
        count: 0,
        bytes: 0,
        ...(stream.lastSeq !== undefined ? { lastSeq: stream.lastSeq, floor: stream.lastSeq } : {}),
      });
    }
    this.#schemaReady = true;
  }

  // --- RPC for the rest of the Worker -------------------------------------------------------------

  /** A snapshot is held and the member was Premium at the last check (re-checked here if that is overdue). */
  async published(): Promise<boolean> {
    if (this.#snapshot() === undefined) return false;
    // The alarm ends a publication nobody came back to; a page asking first does not wait for it.
    if (this.#abandoned(Date.now())) {
      await this.#forget('the publisher did not come back after its licence expired');
      return false;
    }
    if (await this.#moved()) return false;
    const checkedAt = this.#kv<number>(KEY.checkedAt) ?? 0;
    if (Date.now() - checkedAt > RELAY_LIMITS.lapseCheckMs) await this.#recheck();
    return this.#snapshot() !== undefined;
  }

  /** The member is no longer Premium (or logged out): viewers are closed (4403) and everything is forgotten. */
  async unpublishMember(reason: string): Promise<void> {
    for (const ws of this.ctx.getWebSockets(PUBLISHER)) safeClose(ws, RELAY_CLOSE.notPublished, reason);
    await this.#forget(reason);
  }

  /**
   * A shard's viewer sent `init`: its `init`, what it missed after `resumeFrom`, and `resumed`. Null when
   * unpublished. Bounded work whatever `resumeFrom` says: at most REPLAY_CAP_BYTES of stored text, found
   * through the index and sent as stored.
   */
  join(resumeFrom?: number): JoinAnswer | null {
    const snapshot = this.#snapshot();
    if (snapshot === undefined) return null;
    const frames = [snapshot];
    if (resumeFrom !== undefined) {
      this.#ensureSchema(); // before the stream is read: a storage of the previous version changes it
      const { lastSeq, floor, total = 0 } = this.#stream();
      // The oldest kept message from which on the rest fits in the replay's bytes.
      const from = this.#table<{ pos: number }>(
        'SELECT pos FROM replay WHERE start >= ? ORDER BY start LIMIT 1',
        total - REPLAY_CAP_BYTES,
      ).toArray()[0]?.pos;
      const rows =
        from === undefined
          ? []
          : this.#table<{ text: string }>(
              'SELECT text FROM replay WHERE pos >= ? AND seq > ? ORDER BY pos',
              from,
              resumeFrom,
            ).toArray();
      for (const { text } of rows) frames.push(text);
      // Kept, wanted, but past the replay's bytes: the message just before the replay is after resumeFrom.
      const below = this.#table<{ seq: number }>(
        'SELECT seq FROM replay WHERE pos < ? ORDER BY pos DESC LIMIT 1',
        from ?? Number.MAX_SAFE_INTEGER,
      ).toArray()[0];
      const cut = below !== undefined && below.seq > resumeFrom;
      // As the daemon's own page protocol: a gap when the page comes from before what is kept, or from
      // numbers above every one relayed (another history); here also when the replay was cut to its bytes.
      const gap =
        cut || lastSeq === undefined || resumeFrom > lastSeq || floor === undefined || resumeFrom < floor;
      frames.push(
        JSON.stringify({
          type: 'resumed',
          from: resumeFrom,
          to: Math.max(resumeFrom, lastSeq ?? resumeFrom),
          replayed: rows.length,
          gap,
        }),
      );
    }
    return { frames, pos: this.#stream().pos };
  }

  /** A shard's viewer left (closed, refused, or dropped for a bad frame): its place is free again. */
  viewerLeft(shard: number): void {
    this.#changed(shard);
    // The row stays until a count from the shard says it is empty: batches go on reaching it.
    this.#table('UPDATE shards SET viewers = MAX(viewers - 1, 0) WHERE idx = ?', shard);
    this.#countChanged();
  }

  // --- Requests the Worker forwards ---------------------------------------------------------------

  override async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path.startsWith('/relay/publish/')) return this.#acceptPublisher(request, path);
    return this.#admitViewer(request);
  }

  #acceptPublisher(request: Request, path: string): Response {
    const headers = request.headers;
    const publication: Publication = {
      member: headers.get(RELAY_HEADER.member) ?? '',
      subdomain: headers.get(RELAY_HEADER.subdomain) ?? '',
      overlayId: path.slice('/relay/publish/'.length),
      exp: Number(headers.get(RELAY_HEADER.licenceExp)),
      epoch: Number(headers.get(RELAY_HEADER.licenceEpoch)),
    };
    if (!publication.member || !publication.subdomain || !Number.isFinite(publication.exp)) {
      return Response.json(errorBody('bad_request', 'Not a request the Gatekeeper forwarded'), {
        status: 400,
      });
    }
    // A second publisher replaces the first; the first does not come back by itself, and learns from
    // which address the second connected.
    const from = headers.get(RELAY_HEADER.ip) ?? 'unknown';
    for (const old of this.ctx.getWebSockets(PUBLISHER)) {
      safeClose(old, RELAY_CLOSE.replaced, replacedReason(from));
    }
    this.#ensureSchema();
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [PUBLISHER]);
    this.ctx.storage.kv.put(KEY.publication, publication);
    this.ctx.storage.kv.put(KEY.checkedAt, Date.now());
    const published = this.#snapshot() !== undefined;
    this.#send(server, {
      type: 'hello',
      lastSeq: published ? (this.#stream().lastSeq ?? null) : null,
      viewerUrl: `${this.env.PUBLIC_BASE_URL.replace(/\/+$/, '')}/v/${publication.subdomain}/${publication.overlayId}`,
    });
    this.#sendCount(server, this.#viewerCount());
    this.#arm();
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * A viewer goes to the first shard with room in its address's own order of the shards (names.ts), so
   * the shard holding an address's sockets can count them: it refuses the sixth (429) and, full, says
   * so (503) with the address's sockets there, which the next shard adds to its own count.
   */
  async #admitViewer(request: Request): Promise<Response> {
    if (!(await this.published())) return notPublished();
    const publication = this.#kv<Publication>(KEY.publication);
    if (!publication) return notPublished();
    const ip = request.headers.get(RELAY_HEADER.ip) ?? 'unknown';
    const retryAfter = this.#openedTooOften(ip, Date.now());
    if (retryAfter !== undefined) {
      return Response.json(
        errorBody(
          'rate_limited',
          `At most ${OPENS_PER_IP_PER_MINUTE} viewer sockets a minute per address per overlay`,
        ),
        { status: 429, headers: { 'Retry-After': String(retryAfter) } },
      );
    }
    const { shards, shardSize } = shardLayout(this.env, RELAY_LIMITS);
    const believed = new Map(
      this.#table<{ idx: number; viewers: number }>('SELECT idx, viewers FROM shards')
        .toArray()
        .map((r) => [r.idx, r.viewers]),
    );
    // Full everywhere as far as the hub knows: refused without asking (a full relay's pages retry).
    const order = shardOrder(ip, shards);
    if (order.every((shard) => (believed.get(shard) ?? 0) >= shardSize)) return relayFull();
    const hub = hubName(publication.subdomain, publication.overlayId);
    let elsewhere = 0;
    for (const shard of order) {
      const headers = new Headers(request.headers);
      headers.set(RELAY_HEADER.ip, ip);
      headers.set(RELAY_HEADER.hub, hub);
      headers.set(RELAY_HEADER.shard, String(shard));
      headers.set(RELAY_HEADER.ipElsewhere, String(elsewhere));
      // Counted before the shard answers, so concurrent viewers spread over the shards.
      this.#changed(shard);
      this.#admitting.set(shard, (this.#admitting.get(shard) ?? 0) + 1);
      this.#table(
        'INSERT INTO shards (idx, viewers) VALUES (?, 1) ON CONFLICT (idx) DO UPDATE SET viewers = viewers + 1',
        shard,
      );
      let response: Response;
      try {
        response = await this.#shard(shard).fetch(new Request(request.url, { headers }));
      } catch (err) {
        console.error(`relay ${hub}: shard ${shard} refused a viewer:`, err);
        response = Response.json(errorBody('internal', 'Internal error'), { status: 500 });
      } finally {
        this.#changed(shard);
        this.#admitting.set(shard, (this.#admitting.get(shard) ?? 1) - 1);
      }
      if (response.status === 101) {
        this.#countChanged();
        return response;
      }
      this.#table('UPDATE shards SET viewers = MAX(viewers - 1, 0) WHERE idx = ?', shard);
      if (response.status !== 503) return response;
      // Full by its own count: the hub believes it, and the address's sockets there count at the next.
      await response.body?.cancel();
      this.#table('UPDATE shards SET viewers = ? WHERE idx = ?', shardSize, shard);
      elsewhere += Number(response.headers.get(RELAY_HEADER.ipViewers)) || 0;
    }
    this.#countChanged();
    return relayFull();
  }

  /** Counts a socket this address opens; the seconds until it may open another when over the limit. */
  #openedTooOften(ip: string, now: number): number | undefined {
    if (this.#opens.size > OPEN_WINDOW_ADDRESSES) {
      for (const [key, window] of this.#opens) {
        if (now - window.since >= OPEN_WINDOW_MS) this.#opens.delete(key);
      }
    }
    let window = this.#opens.get(ip);
    if (!window || now - window.since >= OPEN_WINDOW_MS || now < window.since) {
      window = { since: now, count: 0 };
      this.#opens.set(ip, window);
    }
    if (window.count >= OPENS_PER_IP_PER_MINUTE) {
      return Math.max(1, Math.ceil((window.since + OPEN_WINDOW_MS - now) / 1000));
    }
    window.count += 1;
    return undefined;
  }

  /** Something changed the viewers of this shard as the hub counts them (see #reconcile). */
  #changed(shard: number): void {
    this.#changes.set(shard, (this.#changes.get(shard) ?? 0) + 1);
  }

  /** An RPC to a shard that may fail (it is logged): its answer, or `fallback`. */
  async #ask<T>(shard: number, call: (stub: ShardStub) => Promise<T>, fallback: T): Promise<T> {
    try {
      return await call(this.#shard(shard));
    } catch (err) {
      console.error(`relay: shard ${shard} did not answer:`, err);
      return fallback;
    }
  }

  // --- The publisher's socket ---------------------------------------------------------------------

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // A publisher closed for a bad frame or replaced: what it still sends is dropped.
    if (!this.ctx.getTags(ws).includes(PUBLISHER) || ws.readyState !== WebSocket.OPEN) return;
    // Limits first, then parsing.
    if (typeof message !== 'string') return safeClose(ws, RELAY_CLOSE.policy, 'frames are JSON text');
    if (overBytes(message, RELAY_LIMITS.publisherFrameBytes)) {
      return safeClose(ws, RELAY_CLOSE.policy, 'frame over 256 KiB');
    }
    if (!this.#takeToken()) return safeClose(ws, RELAY_CLOSE.policy, 'more than 200 frames per second');
    let raw: unknown;
    try {
      raw = JSON.parse(message);
    } catch {
      return safeClose(ws, RELAY_CLOSE.policy, 'frames are JSON');
    }
    const parsed = parseWith(PublisherToHub, raw);
    if (!parsed.ok) return safeClose(ws, RELAY_CLOSE.policy, shortReason(`bad frame: ${parsed.error}`));
    // What is relayed is what the daemon sent, verbatim (the parsed copy drops unknown keys).
    const verbatim = raw as Record<string, unknown>;
    const frame = parsed.value;
    if (frame.type === 'unpublish') return this.#forget('the overlay is no longer public');
    if (frame.type === 'snapshot') {
      const wasPublished = this.#snapshot() !== undefined;
      const text = JSON.stringify(verbatim.init);
      this.ctx.storage.kv.put(KEY.snapshot, text);
      if (!wasPublished) this.ctx.storage.kv.put(KEY.checkedAt, Date.now());
      this.#relay(text);
      if (!wasPublished) this.#arm();
      return;
    }
    const msg = frame.msg;
    const sent = verbatim.msg as Record<string, unknown>;
    const text = JSON.stringify(sent);
    if (msg.type === 'overlay-update') {
      // A page loaded now gets the overlay as it is now, not as it was at the last snapshot.
      if (this.#snapshot() !== undefined) {
        this.ctx.storage.kv.put(
          KEY.snapshot,
          JSON.stringify({ type: 'init', overlay: sent.overlay, widgets: sent.widgets }),
        );
      }
    }
    const seq = msg.type === 'overlay-update' ? undefined : msg.seq;
    if (seq === undefined) return this.#relay(text);
    // Kept as a resume sends it, so a join sends stored text and parses nothing.
    const replayText = sent.replayed === true ? text : JSON.stringify({ ...sent, replayed: true });
    this.#relay(text, { seq, replayText });
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // A publisher that merely disconnects does not unpublish: viewers keep the last snapshot.
    safeClose(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  override async webSocketError(_ws: WebSocket, error: unknown): Promise<void> {
    console.error('relay publisher socket error:', error);
  }

  // --- Alarm: the licence's exp, the member re-check, the paced viewer count ------------------------

  // Each step looks at what is due now and leaves it done, so a second run at the same instant does
  // nothing more, and #arm only ever picks times still ahead.
  override async alarm(): Promise<void> {
    const now = Date.now();
    const publication = this.#kv<Publication>(KEY.publication);
    if (publication && now >= publication.exp * 1000) {
      // No tolerance: the daemon reconnects with its refreshed licence; viewers wait for it.
      for (const ws of this.#publishers()) {
        safeClose(ws, RELAY_CLOSE.licenceExpired, 'the licence expired');
      }
    }
    if (this.#abandoned(now)) {
      // Nobody came back with a licence in time: nothing vouches for the publication any more, so it
      // ends, and so do the re-checks.
      await this.#forget('the publisher did not come back after its licence expired');
    }
    if (this.#watching() && now - (this.#kv<number>(KEY.checkedAt) ?? 0) >= RELAY_LIMITS.lapseCheckMs) {
      await this.#recheck();
      await this.#reconcile();
    }
    const dueAt = this.#kv<number>(KEY.countDueAt);
    if (dueAt !== undefined && now >= dueAt) {
      this.ctx.storage.kv.delete(KEY.countDueAt);
      this.#countChanged();
    }
    this.#arm();
  }

  /**
   * The member's viewer address is no longer this hub's (SUBDOMAIN_SECRET changed): its old address ends
   * like an unpublished one, and the publisher reconnects (4401) to the hub of the new address.
   */
  async #moved(): Promise<boolean> {
    const publication = this.#kv<Publication>(KEY.publication);
    if (!publication) return false;
    const subdomain = await deriveSubdomain(this.env.SUBDOMAIN_SECRET, publication.member);
    if (subdomain === publication.subdomain) return false;
    console.log(
      `relay ${publication.subdomain}/${publication.overlayId}: the member's address is now ${subdomain}`,
    );
    for (const ws of this.ctx.getWebSockets(PUBLISHER)) {
      safeClose(ws, RELAY_CLOSE.licenceExpired, 'the viewer address changed; connect again');
    }
    await this.#forget('this overlay moved to another address');
    return true;
  }

  /** The member's stored verdict and licence epoch: Free or signed out ends the publication. */
  async #recheck(): Promise<void> {
    const publication = this.#kv<Publication>(KEY.publication);
    if (!publication) return;
    if (await this.#moved()) return;
    const member = await readMember(this.env, publication.member);
    if (member?.tier === 'free' || memberEpoch(member) > publication.epoch) {
      console.log(`relay ${publication.subdomain}/${publication.overlayId}: the member is no longer Premium`);
      await this.unpublishMember('the membership is no longer Premium');
      return;
    }
    this.ctx.storage.kv.put(KEY.checkedAt, Date.now());
  }

  /**
   * Takes each shard's own count of its viewers (every minute, with the member re-check), so a leave
   * report that never arrived does not keep a place taken for good. A count taken while a viewer of
   * that shard was being admitted or reported gone is not trusted; the next minute's is.
   */
  async #reconcile(): Promise<void> {
    if (this.#kv<Publication>(KEY.publication) === undefined) return;
    const rows = this.#table<{ idx: number; viewers: number }>('SELECT idx, viewers FROM shards').toArray();
    await Promise.all(
      rows.map(async ({ idx, viewers }) => {
        const before = this.#changes.get(idx) ?? 0;
        const counted = await this.#ask(idx, (shard) => shard.viewerCount(), undefined);
        if (counted === undefined || (this.#changes.get(idx) ?? 0) !== before) return;
        // Admissions still under way (begun before the count was asked for) are not in it yet.
        const believed = counted + (this.#admitting.get(idx) ?? 0);
        if (believed === 0) this.#table('DELETE FROM shards WHERE idx = ?', idx);
        else if (believed !== viewers)
          this.#table('UPDATE shards SET viewers = ? WHERE idx = ?', believed, idx);
      }),
    );
    this.#countChanged();
  }

  /** Something is published or a publisher is connected: the member is re-checked every minute. */
  #watching(): boolean {
    return this.#snapshot() !== undefined || this.#publishers().length > 0;
  }

  /** Published, the last licence expired more than PUBLISHER_RETURN_MS ago, and no publisher is back. */
  #abandoned(now: number): boolean {
    const publication = this.#kv<Publication>(KEY.publication);
    return (
      publication !== undefined &&
      now >= publication.exp * 1000 + PUBLISHER_RETURN_MS &&
      this.#publishers().length === 0 &&
      this.#snapshot() !== undefined
    );
  }

  /**
   * Sets the alarm to the next thing due: the licence's exp, then the end of the publisher's time to
   * come back, the next re-check, the paced viewer count.
   */
  #arm(): void {
    const now = Date.now();
    const due: number[] = [];
    const publication = this.#kv<Publication>(KEY.publication);
    if (publication && this.#watching()) {
      const exp = publication.exp * 1000;
      if (now < exp) due.push(exp);
      else if (now < exp + PUBLISHER_RETURN_MS) due.push(exp + PUBLISHER_RETURN_MS);
    }
    if (this.#watching()) due.push((this.#kv<number>(KEY.checkedAt) ?? 0) + RELAY_LIMITS.lapseCheckMs);
    const countDueAt = this.#kv<number>(KEY.countDueAt);
    if (countDueAt !== undefined) due.push(countDueAt);
    if (due.length === 0) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(Math.min(...due));
  }

  // --- Buffer and batches ---------------------------------------------------------------------------

  /** The publisher sockets still open (one, but for a moment after a replacement or a close). */
  #publishers(): WebSocket[] {
    return this.ctx.getWebSockets(PUBLISHER).filter((ws) => ws.readyState === WebSocket.OPEN);
  }

  #snapshot(): string | undefined {
    return this.#kv<string>(KEY.snapshot);
  }

  #stream(): Stream {
    return this.#kv<Stream>(KEY.stream) ?? { pos: 0, count: 0, bytes: 0 };
  }

  /**
   * Hands the frame a position, keeps it for resumes when it is numbered, and sends it with the next
   * batch (at most one batch per 50 ms).
   */
  #relay(text: string, kept?: { seq: number; replayText: string }): void {
    this.#ensureSchema(); // before the stream is read, as in join
    const stream = this.#stream();
    stream.pos += 1;
    if (kept) this.#keep(stream, stream.pos, kept.seq, kept.replayText);
    this.ctx.storage.kv.put(KEY.stream, stream);
    this.#pending.push({ pos: stream.pos, text });
    if (this.#batchTimer === undefined) {
      const wait = Math.max(0, this.#lastBatchAt + RELAY_LIMITS.batchMs - Date.now());
      this.#batchTimer = setTimeout(() => this.#sendBatch(), wait);
    }
  }

  /** Keeps a numbered message for resumes: the last 500, or the last 5 minutes, whichever holds more. */
  #keep(stream: Stream, pos: number, seq: number, text: string): void {
    const now = Date.now();
    const start = stream.total ?? 0;
    this.#table(
      'INSERT INTO replay (pos, seq, at, start, text) VALUES (?, ?, ?, ?, ?)',
      pos,
      seq,
      now,
      start,
      text,
    );
    stream.total = start + text.length;
    stream.lastSeq = Math.max(seq, stream.lastSeq ?? seq);
    // After a first publish the relay starts from the snapshot: what came before the first message is not kept.
    stream.floor ??= seq - 1;
    stream.count += 1;
    stream.bytes += text.length;
    while (stream.count > RELAY_LIMITS.bufferMessages) {
      const oldest = this.#table<{ pos: number; seq: number; at: number; len: number }>(
        'SELECT pos, seq, at, length(text) AS len FROM replay ORDER BY pos LIMIT 1',
      ).toArray()[0];
      if (!oldest) break;
      const beyond = stream.count > BUFFER_CAP_MESSAGES || stream.bytes > BUFFER_CAP_BYTES;
      if (!beyond && oldest.at >= now - RELAY_LIMITS.bufferMs) break;
      this.#table('DELETE FROM replay WHERE pos = ?', oldest.pos);
      stream.floor = Math.max(stream.floor, oldest.seq);
      stream.count -= 1;
      stream.bytes -= oldest.len;
    }
  }

  /** One batch to each shard that has viewers: at once, or merged into what waits for a busy shard. */
  #sendBatch(): void {
    this.#batchTimer = undefined;
    this.#lastBatchAt = Date.now();
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const chars = batch.reduce((n, entry) => n + entry.text.length, 0);
    for (const { idx } of this.#table<{ idx: number }>('SELECT idx FROM shards').toArray()) {
      const outbox = this.#outboxes.get(idx);
      if (!outbox) {
        this.#outboxes.set(idx, { pending: [], chars: 0, behind: false });
        void this.#deliver(idx, batch);
      } else if (
        outbox.behind ||
        outbox.pending.length + batch.length > PENDING_CAP_ENTRIES ||
        outbox.chars + chars > PENDING_CAP_CHARS
      ) {
        outbox.pending = [];
        outbox.chars = 0;
        outbox.behind = true;
      } else {
        for (const entry of batch) outbox.pending.push(entry);
        outbox.chars += chars;
      }
    }
  }

  /** Sends a batch to a shard, then what gathered for it meanwhile, as one batch, until nothing waits. */
  async #deliver(idx: number, first: RelayEntry[]): Promise<void> {
    let batch = first;
    for (;;) {
      await this.#ask(idx, (shard) => shard.deliver(batch), undefined);
      const outbox = this.#outboxes.get(idx);
      if (!outbox) return; // forgotten meanwhile
      if (outbox.behind) {
        // Frames were dropped for this shard: its viewers reconnect and resume from the kept messages.
        this.#outboxes.delete(idx);
        await this.#ask(idx, (shard) => shard.closeAll(1011, 'the relay fell behind; reconnect'), undefined);
        return;
      }
      if (outbox.pending.length === 0) {
        this.#outboxes.delete(idx);
        return;
      }
      batch = outbox.pending;
      outbox.pending = [];
      outbox.chars = 0;
    }
  }

  /** Closes every viewer (4403) and forgets the snapshot, the buffer and the viewers: new viewers get 404. */
  async #forget(reason: string): Promise<void> {
    const publication = this.#kv<Publication>(KEY.publication);
    // Never published (or forgotten already with nobody connected): nothing to forget, nothing written.
    if (publication === undefined && this.#snapshot() === undefined) return;
    // The shards' names need the publication, which may be forgotten below.
    const live = this.#table<{ idx: number }>('SELECT idx FROM shards')
      .toArray()
      .map(({ idx }) => ({ idx, shard: this.#shard(idx) }));
    this.#pending = [];
    this.#outboxes.clear();
    this.#table('DELETE FROM replay');
    this.#table('DELETE FROM shards');
    // The position goes on: a shard never sees one twice.
    const { pos, total } = this.#stream();
    this.ctx.storage.kv.put<Stream>(KEY.stream, { pos, count: 0, bytes: 0, ...(total ? { total } : {}) });
    for (const key of [KEY.snapshot, KEY.countDueAt]) {
      this.ctx.storage.kv.delete(key);
    }
    if (publication && this.#publishers().length === 0) this.ctx.storage.kv.delete(KEY.publication);
    this.#countChanged();
    this.#arm();
    await Promise.all(
      live.map(({ idx, shard }) =>
        shard
          .closeAll(RELAY_CLOSE.notPublished, reason)
          .catch((err: unknown) => console.error(`relay: shard ${idx} could not close its viewers:`, err)),
      ),
    );
  }

  #shard(index: number) {
    const publication = this.#kv<Publication>(KEY.publication);
    const name = shardName(hubName(publication?.subdomain ?? '', publication?.overlayId ?? ''), index);
    return this.env.RELAY_SHARD.get(this.env.RELAY_SHARD.idFromName(name));
  }

  // --- Viewer count for the publisher -------------------------------------------------------------

  #viewerCount(): number {
    return this.#table<{ n: number | null }>('SELECT SUM(viewers) AS n FROM shards').one().n ?? 0;
  }

  /** Right away if the publisher got none in the last 5 s, else when 5 s have passed (the alarm). */
  #countChanged(): void {
    const [publisher] = this.#publishers();
    if (!publisher) return;
    const count = this.#viewerCount();
    const sent = this.#kv<{ count: number; at: number }>(KEY.countSent);
    if (sent?.count === count) return;
    const now = Date.now();
    if (sent && now - sent.at < RELAY_LIMITS.viewerCountMs) {
      if (this.#kv<number>(KEY.countDueAt) === undefined) {
        this.ctx.storage.kv.put(KEY.countDueAt, sent.at + RELAY_LIMITS.viewerCountMs);
        this.#arm();
      }
      return;
    }
    this.#sendCount(publisher, count);
  }

  #sendCount(ws: WebSocket, count: number): void {
    this.#send(ws, { type: 'viewers', count });
    this.ctx.storage.kv.put(KEY.countSent, { count, at: Date.now() });
  }

  #send(ws: WebSocket, message: HubToPublisher): void {
    try {
      ws.send(JSON.stringify(message));
    } catch {
      // Closing already: nothing to tell it.
    }
  }

  #takeToken(): boolean {
    const now = Date.now();
    const rate = RELAY_LIMITS.publisherFramesPerSecond;
    // A clock that went back refills nothing.
    this.#tokens = Math.min(rate, this.#tokens + (Math.max(0, now - this.#tokensAt) / 1000) * rate);
    this.#tokensAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  #kv<T>(key: string): T | undefined {
    return this.ctx.storage.kv.get<T>(key);
  }

  #sql<T extends Record<string, SqlStorageValue> = Record<string, SqlStorageValue>>(
    query: string,
    ...bindings: unknown[]
  ) {
    return this.ctx.storage.sql.exec<T>(query, ...bindings);
  }

  /** A query on the hub's tables, made first if this storage has none yet (only after a publication). */
  #table<T extends Record<string, SqlStorageValue> = Record<string, SqlStorageValue>>(
    query: string,
    ...bindings: unknown[]
  ) {
    this.#ensureSchema();
    return this.#sql<T>(query, ...bindings);
  }
}

function relayFull(): Response {
  return Response.json(
    errorBody('unavailable', 'This overlay has all the viewers it can hold; try again later'),
    {
      status: 503,
      headers: { 'Retry-After': String(FULL_RETRY_AFTER_SECONDS) },
    },
  );
}

function notPublished(): Response {
  return Response.json(errorBody('not_found', 'This overlay is not published'), { status: 404 });
}

/** Close reasons are at most 123 bytes. */
export function shortReason(reason: string): string {
  return reason.length > 100 ? `${reason.slice(0, 99)}…` : reason;
}

/** Closes a socket that may be closing already. */
export function safeClose(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}
