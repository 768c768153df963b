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
import { hubName, overBytes, RELAY_HEADER, shardLayout, shardName } from './names.js';

const PUBLISHER = 'publisher';
/** Past the 500 messages kept whatever their age, the window of 5 minutes is bounded too (storage). */
const BUFFER_CAP_MESSAGES = 20_000;
const BUFFER_CAP_BYTES = 64 * 1024 * 1024;
/** A resume replays at most this much (the newest messages; the rest is a gap): one answer between objects. */
const REPLAY_CAP_BYTES = 8 * 1024 * 1024;
/** A full relay tells the page when to try again (it also backs off on its own, with jitter). */
const FULL_RETRY_AFTER_SECONDS = 10;

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
  /** Messages kept in the buffer table, and their bytes. */
  count: number;
  bytes: number;
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
  /** Each shard's deliveries, one after the other, so a shard gets batches in order. */
  readonly #deliveries = new Map<number, Promise<unknown>>();
  /**
   * The publisher's token bucket (200 frames/s, capacity 200), kept across reconnects so a new socket
   * does not refill it; a fresh object starts full (it was idle long enough to refill anyway).
   */
  #tokens: number = RELAY_LIMITS.publisherFramesPerSecond;
  #tokensAt = Date.now();

  constructor(ctx: DurableObjectState, env: GatekeeperEnv) {
    super(ctx, env);
    this.#sql(
      'CREATE TABLE IF NOT EXISTS buffer (pos INTEGER PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL, frame TEXT NOT NULL)',
    );
    this.#sql('CREATE TABLE IF NOT EXISTS shards (idx INTEGER PRIMARY KEY, viewers INTEGER NOT NULL)');
    this.#sql('CREATE TABLE IF NOT EXISTS ips (ip TEXT PRIMARY KEY, viewers INTEGER NOT NULL)');
  }

  // --- RPC for the rest of the Worker -------------------------------------------------------------

  /** A snapshot is held and the member was Premium at the last check (re-checked here if that is overdue). */
  async published(): Promise<boolean> {
    if (this.#snapshot() === undefined) return false;
    const checkedAt = this.#kv<number>(KEY.checkedAt) ?? 0;
    if (Date.now() - checkedAt > RELAY_LIMITS.lapseCheckMs) await this.#recheck();
    return this.#snapshot() !== undefined;
  }

  /** The member is no longer Premium (or logged out): viewers are closed (4403) and everything is forgotten. */
  async unpublishMember(reason: string): Promise<void> {
    for (const ws of this.ctx.getWebSockets(PUBLISHER)) safeClose(ws, RELAY_CLOSE.notPublished, reason);
    await this.#forget(reason);
  }

  /** A shard's viewer sent `init`: its `init`, what it missed after `resumeFrom`, and `resumed`. Null when unpublished. */
  join(resumeFrom?: number): JoinAnswer | null {
    const snapshot = this.#snapshot();
    if (snapshot === undefined) return null;
    const frames = [snapshot];
    if (resumeFrom !== undefined) {
      // The newest messages after resumeFrom that fit in the replay's bytes.
      const sizes = this.#sql<{ pos: number; len: number }>(
        'SELECT pos, length(frame) AS len FROM buffer WHERE seq > ? ORDER BY pos DESC',
        resumeFrom,
      ).toArray();
      let total = 0;
      let kept = 0;
      for (const { len } of sizes) {
        if (total + len > REPLAY_CAP_BYTES) break;
        total += len;
        kept += 1;
      }
      const cut = sizes.length - kept;
      const rows = this.#sql<{ frame: string }>(
        'SELECT frame FROM buffer WHERE seq > ? AND pos >= ? ORDER BY pos',
        resumeFrom,
        sizes[kept - 1]?.pos ?? Number.MAX_SAFE_INTEGER,
      ).toArray();
      for (const { frame } of rows) frames.push(JSON.stringify({ ...JSON.parse(frame), replayed: true }));
      const { lastSeq, floor } = this.#stream();
      // As the daemon's own page protocol: a gap when the page comes from before what is kept, or from
      // numbers above every one relayed (another history); here also when the replay was cut to its bytes.
      const gap =
        cut > 0 || lastSeq === undefined || resumeFrom > lastSeq || floor === undefined || resumeFrom < floor;
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

  /** A shard's viewer left (closed, refused, or dropped for a bad frame). */
  viewerLeft(shard: number, ip: string): void {
    this.#sql('UPDATE shards SET viewers = viewers - 1 WHERE idx = ?', shard);
    this.#sql('DELETE FROM shards WHERE viewers <= 0');
    this.#sql('UPDATE ips SET viewers = viewers - 1 WHERE ip = ?', ip);
    this.#sql('DELETE FROM ips WHERE viewers <= 0');
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

  async #admitViewer(request: Request): Promise<Response> {
    if (!(await this.published())) return notPublished();
    const publication = this.#kv<Publication>(KEY.publication);
    if (!publication) return notPublished();
    const ip = request.headers.get(RELAY_HEADER.ip) ?? 'unknown';
    const fromIp = this.#sql<{ viewers: number }>('SELECT viewers FROM ips WHERE ip = ?', ip).toArray()[0];
    if ((fromIp?.viewers ?? 0) >= RELAY_LIMITS.viewersPerIp) {
      return Response.json(
        errorBody(
          'rate_limited',
          `At most ${RELAY_LIMITS.viewersPerIp} viewer sockets per address per overlay`,
        ),
        { status: 429 },
      );
    }
    const { shards, shardSize } = shardLayout(this.env, RELAY_LIMITS);
    const used = new Map(
      this.#sql<{ idx: number; viewers: number }>('SELECT idx, viewers FROM shards')
        .toArray()
        .map((r) => [r.idx, r.viewers]),
    );
    const withRoom: number[] = [];
    for (let i = 0; i < shards; i++) if ((used.get(i) ?? 0) < shardSize) withRoom.push(i);
    const shard = withRoom[Math.floor(Math.random() * withRoom.length)];
    if (shard === undefined) {
      return Response.json(
        errorBody('unavailable', 'This overlay has all the viewers it can hold; try again later'),
        {
          status: 503,
          headers: { 'Retry-After': String(FULL_RETRY_AFTER_SECONDS) },
        },
      );
    }
    // Counted before the shard answers, so concurrent viewers never overfill a shard or an address.
    this.#sql(
      'INSERT INTO shards (idx, viewers) VALUES (?, 1) ON CONFLICT (idx) DO UPDATE SET viewers = viewers + 1',
      shard,
    );
    this.#sql(
      'INSERT INTO ips (ip, viewers) VALUES (?, 1) ON CONFLICT (ip) DO UPDATE SET viewers = viewers + 1',
      ip,
    );
    const hub = hubName(publication.subdomain, publication.overlayId);
    const headers = new Headers(request.headers);
    headers.set(RELAY_HEADER.ip, ip);
    headers.set(RELAY_HEADER.hub, hub);
    headers.set(RELAY_HEADER.shard, String(shard));
    let response: Response;
    try {
      response = await this.#shard(shard).fetch(new Request(request.url, { headers }));
    } catch (err) {
      console.error(`relay ${hub}: shard ${shard} refused a viewer:`, err);
      response = Response.json(errorBody('internal', 'Internal error'), { status: 500 });
    }
    if (response.status !== 101) this.viewerLeft(shard, ip);
    else this.#countChanged();
    return response;
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
    this.#relay(text, msg.type === 'overlay-update' ? undefined : msg.seq);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // A publisher that merely disconnects does not unpublish: viewers keep the last snapshot.
    safeClose(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  override async webSocketError(_ws: WebSocket, error: unknown): Promise<void> {
    console.error('relay publisher socket error:', error);
  }

  // --- Alarm: the licence's exp, the member re-check, the paced viewer count ------------------------

  override async alarm(): Promise<void> {
    const now = Date.now();
    const publication = this.#kv<Publication>(KEY.publication);
    if (publication && now >= publication.exp * 1000) {
      const publishers = this.#publishers();
      // No tolerance: the daemon reconnects with its refreshed licence.
      for (const ws of publishers) safeClose(ws, RELAY_CLOSE.licenceExpired, 'the licence expired');
      // Nobody came back with a licence before the last one expired (the daemon has been away for
      // days): nothing vouches for the publication any more, so it ends, and so do the re-checks.
      if (publishers.length === 0 && this.#snapshot() !== undefined) {
        await this.#forget('the publisher has been away past its licence');
      }
    }
    if (this.#watching() && now - (this.#kv<number>(KEY.checkedAt) ?? 0) >= RELAY_LIMITS.lapseCheckMs) {
      await this.#recheck();
    }
    const dueAt = this.#kv<number>(KEY.countDueAt);
    if (dueAt !== undefined && now >= dueAt) {
      this.ctx.storage.kv.delete(KEY.countDueAt);
      this.#countChanged();
    }
    this.#arm();
  }

  /** The member's stored verdict and licence epoch: Free or signed out ends the publication. */
  async #recheck(): Promise<void> {
    const publication = this.#kv<Publication>(KEY.publication);
    if (!publication) return;
    const member = await readMember(this.env, publication.member);
    if (member?.tier === 'free' || memberEpoch(member) > publication.epoch) {
      console.log(`relay ${publication.subdomain}/${publication.overlayId}: the member is no longer Premium`);
      await this.unpublishMember('the membership is no longer Premium');
      return;
    }
    this.ctx.storage.kv.put(KEY.checkedAt, Date.now());
  }

  /** Something is published or a publisher is connected: the member is re-checked every minute. */
  #watching(): boolean {
    return this.#snapshot() !== undefined || this.#publishers().length > 0;
  }

  /** Sets the alarm to the next thing due: the licence's exp, the next re-check, the paced viewer count. */
  #arm(): void {
    const due: number[] = [];
    const publication = this.#kv<Publication>(KEY.publication);
    if (publication && this.#watching()) due.push(publication.exp * 1000);
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
  #relay(text: string, seq?: number): void {
    const stream = this.#stream();
    stream.pos += 1;
    if (seq !== undefined) this.#keep(stream, stream.pos, seq, text);
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
    this.#sql('INSERT INTO buffer (pos, seq, at, frame) VALUES (?, ?, ?, ?)', pos, seq, now, text);
    stream.lastSeq = Math.max(seq, stream.lastSeq ?? seq);
    // After a first publish the relay starts from the snapshot: what came before the first message is not kept.
    stream.floor ??= seq - 1;
    stream.count += 1;
    stream.bytes += text.length;
    while (stream.count > RELAY_LIMITS.bufferMessages) {
      const oldest = this.#sql<{ pos: number; seq: number; at: number; len: number }>(
        'SELECT pos, seq, at, length(frame) AS len FROM buffer ORDER BY pos LIMIT 1',
      ).toArray()[0];
      if (!oldest) break;
      const beyond = stream.count > BUFFER_CAP_MESSAGES || stream.bytes > BUFFER_CAP_BYTES;
      if (!beyond && oldest.at >= now - RELAY_LIMITS.bufferMs) break;
      this.#sql('DELETE FROM buffer WHERE pos = ?', oldest.pos);
      stream.floor = Math.max(stream.floor, oldest.seq);
      stream.count -= 1;
      stream.bytes -= oldest.len;
    }
  }

  /** One batch, once to each shard that has viewers, after that shard's previous batch. */
  #sendBatch(): void {
    this.#batchTimer = undefined;
    this.#lastBatchAt = Date.now();
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const live = this.#sql<{ idx: number }>('SELECT idx FROM shards WHERE viewers > 0').toArray();
    for (const { idx } of live) {
      const previous = this.#deliveries.get(idx) ?? Promise.resolve();
      const next = previous.then(() =>
        this.#shard(idx)
          .deliver(batch)
          .catch((err: unknown) => console.error(`relay: shard ${idx} missed a batch:`, err)),
      );
      this.#deliveries.set(idx, next);
      void next.then(() => {
        if (this.#deliveries.get(idx) === next) this.#deliveries.delete(idx);
      });
    }
  }

  /** Closes every viewer (4403) and forgets the snapshot, the buffer and the viewers: new viewers get 404. */
  async #forget(reason: string): Promise<void> {
    const publication = this.#kv<Publication>(KEY.publication);
    // The shards' names need the publication, which may be forgotten below.
    const live = this.#sql<{ idx: number }>('SELECT idx FROM shards WHERE viewers > 0')
      .toArray()
      .map(({ idx }) => ({ idx, shard: this.#shard(idx) }));
    this.#pending = [];
    this.#sql('DELETE FROM buffer');
    this.#sql('DELETE FROM shards');
    this.#sql('DELETE FROM ips');
    // The position goes on: a shard never sees one twice.
    this.ctx.storage.kv.put<Stream>(KEY.stream, { pos: this.#stream().pos, count: 0, bytes: 0 });
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
    return this.#sql<{ n: number | null }>('SELECT SUM(viewers) AS n FROM shards').one().n ?? 0;
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
