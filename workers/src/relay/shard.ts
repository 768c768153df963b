// One shard of an overlay's viewers (at most RELAY_SHARD_SIZE sockets): it holds their hibernating
// sockets, answers their pings without waking (auto-response), and writes each batch the hub sends to
// every viewer that has joined. What must outlive eviction is on the sockets (attachments) and in storage.
import { DurableObject } from 'cloudflare:workers';
import {
  errorBody,
  parseJsonWith,
  RELAY_CLOSE,
  RELAY_LIMITS,
  VIEWER_PING,
  VIEWER_PONG,
  ViewerMessage,
} from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import type { RelayEntry } from './batches.js';
import type { JoinAnswer } from './hub.js';
import { overBytes, RELAY_HEADER, safeClose, shardLayout, shortReason } from './names.js';

const VIEWER = 'viewer';
/**
 * Entries delivered while a viewer waits for the hub's answer to its `init` may come after that
 * answer's position: the last this many are kept in memory, so such a viewer gets them too.
 */
const RECENT_ENTRIES = 4096;
/** A socket that has not sent `init` this long after it opened is closed: it holds a viewer's place. */
export const VIEWER_INIT_MS = 10_000;
/**
 * Pings written otherwise than the exact text wake the shard: a socket may send them about once a
 * second (a bucket of this many, refilled at one a second), the page sends one every 30 s.
 */
export const VIEWER_PINGS_HELD = 3;
const PING_REFILL_MS = 1000;

/** A viewer socket's state, on the socket itself so it outlives eviction. */
interface Viewer {
  ip: string;
  /** new: no `init` yet; joining: waiting for the hub; live: gets every entry after `joinedAt`; left: reported gone. */
  state: 'new' | 'joining' | 'live' | 'left';
  joinedAt: number;
  /** When the socket opened (ms), for the `init` deadline. */
  openedAt?: number;
  /** The ping bucket: pings it may still send, as of `pingAt` (ms). */
  pings?: number;
  pingAt?: number;
}

/** The tag of an address's viewer sockets, so the shard counts them without reading every socket. */
const ipTag = (ip: string) => `ip:${ip}`;

/** Which hub this shard belongs to and its number there (storage). */
interface Membership {
  hub: string;
  index: number;
}

export class RelayShard extends DurableObject<GatekeeperEnv> {
  /** The latest entries delivered (memory only: an evicted shard has nobody waiting on the hub). */
  #recent: RelayEntry[] = [];
  #lastPos = 0;
  /** Attachments as read from the sockets, so a batch does not deserialize each one again. */
  readonly #viewers = new WeakMap<WebSocket, Viewer>();

  constructor(ctx: DurableObjectState, env: GatekeeperEnv) {
    super(ctx, env);
    // Answered by the runtime without waking the object (exact bytes only).
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(VIEWER_PING, VIEWER_PONG));
  }

  /**
   * A viewer the hub sends here: refused when the shard is full (503, with how many of this address's
   * sockets it holds) or the address has its 5 sockets here and on the shards before (429).
   */
  override async fetch(request: Request): Promise<Response> {
    const index = Number(request.headers.get(RELAY_HEADER.shard));
    const hub = request.headers.get(RELAY_HEADER.hub);
    if (!hub || !Number.isSafeInteger(index))
      return new Response('Not a request the hub forwarded', { status: 400 });
    const ip = request.headers.get(RELAY_HEADER.ip) ?? 'unknown';
    const fromIp = this.#viewersFrom(ip);
    if (this.viewerCount() >= shardLayout(this.env, RELAY_LIMITS).shardSize) {
      return new Response(null, { status: 503, headers: { [RELAY_HEADER.ipViewers]: String(fromIp) } });
    }
    const elsewhere = Number(request.headers.get(RELAY_HEADER.ipElsewhere)) || 0;
    if (fromIp + elsewhere >= RELAY_LIMITS.viewersPerIp) {
      return Response.json(
        errorBody(
          'rate_limited',
          `At most ${RELAY_LIMITS.viewersPerIp} viewer sockets per address per overlay`,
        ),
        { status: 429 },
      );
    }
    const known = this.ctx.storage.kv.get<Membership>('membership');
    if (known?.hub !== hub || known.index !== index)
      this.ctx.storage.kv.put<Membership>('membership', { hub, index });
    const { 0: client, 1: server } = new WebSocketPair();
    // Counted and accepted in one turn: concurrent viewers never overfill the shard or an address.
    this.ctx.acceptWebSocket(server, [VIEWER, ipTag(ip)]);
    const now = Date.now();
    this.#save(server, { ip, state: 'new', joinedAt: 0, openedAt: now });
    // The `init` deadline: the alarm is due at the earliest socket's; a later one never pushes it back.
    const due = now + VIEWER_INIT_MS;
    const armed = await this.ctx.storage.getAlarm();
    if (armed === null || armed > due) await this.ctx.storage.setAlarm(due);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const viewer = this.#viewer(ws);
    if (viewer.state === 'left') return;
    // Limits first, then parsing.
    if (typeof message !== 'string') return this.#drop(ws, RELAY_CLOSE.policy, 'frames are JSON text');
    if (overBytes(message, RELAY_LIMITS.viewerFrameBytes)) {
      return this.#drop(ws, RELAY_CLOSE.policy, 'frame over 1 KiB');
    }
    const parsed = parseJsonWith(ViewerMessage, message);
    if (!parsed.ok) return this.#drop(ws, RELAY_CLOSE.policy, shortReason(`bad frame: ${parsed.error}`));
    const frame = parsed.value;
    if (frame.action === 'ping') {
      // The exact bytes never reach here (auto-response); the same ping spelled otherwise does.
      if (viewer.state !== 'live') return this.#drop(ws, RELAY_CLOSE.policy, 'init first');
      const now = Date.now();
      const since = Math.max(0, now - (viewer.pingAt ?? now));
      const pings = Math.min(VIEWER_PINGS_HELD, (viewer.pings ?? VIEWER_PINGS_HELD) + since / PING_REFILL_MS);
      if (pings < 1) return this.#drop(ws, RELAY_CLOSE.policy, 'at most one ping a second');
      this.#save(ws, { ...viewer, pings: pings - 1, pingAt: now });
      ws.send(VIEWER_PONG);
      return;
    }
    if (viewer.state !== 'new') return this.#drop(ws, RELAY_CLOSE.policy, 'init is sent once');
    const membership = this.ctx.storage.kv.get<Membership>('membership');
    if (!membership?.hub.endsWith(`/${frame.overlayId}`)) {
      return this.#drop(ws, RELAY_CLOSE.policy, 'init names another overlay');
    }
    this.#save(ws, { ...viewer, state: 'joining' });
    let answer: JoinAnswer | null;
    try {
      answer = await this.#hub(membership).join(frame.resumeFrom);
    } catch (err) {
      console.error(`relay shard ${membership.hub}#${membership.index}: join failed:`, err);
      return this.#drop(ws, 1011, 'the relay failed; try again');
    }
    if (this.#viewer(ws).state !== 'joining') return; // closed while the hub answered
    if (!answer) return this.#drop(ws, RELAY_CLOSE.notPublished, 'this overlay is not published');
    try {
      for (const text of answer.frames) ws.send(text);
      // What reached this shard while the hub answered, past the answer's position: once, in order.
      for (const entry of this.#recent) if (entry.pos > answer.pos) ws.send(entry.text);
    } catch {
      return; // closed meanwhile: webSocketClose reports it
    }
    this.#save(ws, { ...viewer, state: 'live', joinedAt: Math.max(answer.pos, this.#lastPos) });
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.#left(ws);
    // The runtime does not answer a client's Close by itself; 1005 and 1006 cannot be sent.
    safeClose(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#left(ws);
  }

  /**
   * Closes the sockets that let the `init` deadline pass; comes back for those still within it (a
   * second run at the same instant closes nothing more and arms the same time).
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    let next: number | undefined;
    for (const ws of this.ctx.getWebSockets(VIEWER)) {
      const viewer = this.#viewer(ws);
      if (viewer.state !== 'new') continue;
      const due = (viewer.openedAt ?? 0) + VIEWER_INIT_MS;
      if (due <= now) this.#drop(ws, RELAY_CLOSE.policy, 'init first');
      else next = Math.min(next ?? due, due);
    }
    if (next !== undefined) await this.ctx.storage.setAlarm(next);
  }

  // --- RPC from the hub -----------------------------------------------------------------------------

  /** One batch from the hub, in order: each entry to each viewer that joined before it. */
  deliver(entries: RelayEntry[]): void {
    for (const entry of entries) {
      this.#recent.push(entry);
      this.#lastPos = Math.max(this.#lastPos, entry.pos);
    }
    if (this.#recent.length > RECENT_ENTRIES * 2) this.#recent = this.#recent.slice(-RECENT_ENTRIES);
    for (const ws of this.ctx.getWebSockets(VIEWER)) {
      const viewer = this.#viewer(ws);
      if (viewer.state !== 'live') continue;
      try {
        for (const entry of entries) if (entry.pos > viewer.joinedAt) ws.send(entry.text);
      } catch {
        // Closing: webSocketClose reports it.
      }
    }
  }

  /** The overlay stopped being published: every viewer is closed and nothing is reported back. */
  closeAll(code: number, reason: string): void {
    this.#recent = [];
    for (const ws of this.ctx.getWebSockets(VIEWER)) {
      this.#save(ws, { ...this.#viewer(ws), state: 'left' });
      safeClose(ws, code, reason);
    }
  }

  /** How many viewer sockets this shard holds: the hub takes this count over its own every minute. */
  viewerCount(): number {
    return this.ctx.getWebSockets(VIEWER).filter((ws) => this.#viewer(ws).state !== 'left').length;
  }

  /** How many of them an address holds. */
  #viewersFrom(ip: string): number {
    return this.ctx.getWebSockets(ipTag(ip)).filter((ws) => this.#viewer(ws).state !== 'left').length;
  }

  #hub(membership: Membership) {
    return this.env.OVERLAY_RELAY.get(this.env.OVERLAY_RELAY.idFromName(membership.hub));
  }

  // --- Viewers ----------------------------------------------------------------------------------------

  #viewer(ws: WebSocket): Viewer {
    let viewer = this.#viewers.get(ws);
    if (!viewer) {
      viewer = (ws.deserializeAttachment() as Viewer | null) ?? { ip: 'unknown', state: 'new', joinedAt: 0 };
      this.#viewers.set(ws, viewer);
    }
    return viewer;
  }

  #save(ws: WebSocket, viewer: Viewer): void {
    this.#viewers.set(ws, viewer);
    ws.serializeAttachment(viewer);
  }

  /** Closes a viewer that broke the protocol; the others notice nothing. */
  #drop(ws: WebSocket, code: number, reason: string): void {
    this.#left(ws);
    safeClose(ws, code, reason);
  }

  /** Tells the hub once that this viewer is gone, so its shard and its address have room again. */
  #left(ws: WebSocket): void {
    const viewer = this.#viewer(ws);
    if (viewer.state === 'left') return;
    this.#save(ws, { ...viewer, state: 'left' });
    const membership = this.ctx.storage.kv.get<Membership>('membership');
    if (!membership) return;
    void this.#hub(membership)
      .viewerLeft(membership.index)
      .catch((err: unknown) =>
        console.error(`relay shard ${membership.hub}: could not report a viewer gone:`, err),
      );
  }
}
