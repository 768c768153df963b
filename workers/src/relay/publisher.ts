// The publisher's side of a hub (relay/hub.ts): the daemon's socket is accepted, its frames are checked
// (limits first, then parsing) and handed on verbatim, and it is told the viewer count, at most every 5 s.
import {
  errorBody,
  type HubToPublisher,
  PublisherToHub,
  parseWith,
  RELAY_CLOSE,
  RELAY_LIMITS,
  replacedReason,
} from '../../../shared/protocol/index.js';
import { type HubStore, KEY, PUBLISHER, type Publication } from './hub-store.js';
import { overBytes, RELAY_HEADER, safeClose, shortReason } from './names.js';

/** What the publisher's frames do to the hub. */
export interface PublisherHub {
  /** Sends a frame to the viewers, kept for resumes when it is numbered. */
  relay(text: string, kept?: { seq: number; replayText: string }): void;
  /** Ends the publication. */
  forget(reason: string): Promise<void>;
  /** Sets the alarm to the next thing due. */
  arm(): void;
}

export class PublisherLink {
  /**
   * The publisher's token bucket (200 frames/s, capacity 200), kept across reconnects so a new socket
   * does not refill it; a fresh object starts full (it was idle long enough to refill anyway).
   */
  #tokens: number = RELAY_LIMITS.publisherFramesPerSecond;
  #tokensAt = Date.now();

  constructor(
    readonly store: HubStore,
    readonly hub: PublisherHub,
  ) {}

  /** The daemon's socket, forwarded by the Worker with who publishes: it replaces any earlier one. */
  accept(request: Request, path: string): Response {
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
    for (const old of this.store.publisherSockets()) {
      safeClose(old, RELAY_CLOSE.replaced, replacedReason(from));
    }
    this.store.ensureSchema();
    const { 0: client, 1: server } = new WebSocketPair();
    this.store.ctx.acceptWebSocket(server, [PUBLISHER]);
    this.store.put(KEY.publication, publication);
    this.store.put(KEY.checkedAt, Date.now());
    const published = this.store.snapshot() !== undefined;
    this.#send(server, {
      type: 'hello',
      lastSeq: published ? (this.store.stream().lastSeq ?? null) : null,
      viewerUrl: `${this.store.env.PUBLIC_BASE_URL.replace(/\/+$/, '')}/v/${publication.subdomain}/${publication.overlayId}`,
    });
    this.#sendCount(server, this.store.viewerCount());
    this.hub.arm();
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A frame from a socket of this hub. */
  async message(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // A publisher closed for a bad frame or replaced: what it still sends is dropped.
    if (!this.store.ctx.getTags(ws).includes(PUBLISHER) || ws.readyState !== WebSocket.OPEN) return;
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
    if (frame.type === 'unpublish') return this.hub.forget('the overlay is no longer public');
    if (frame.type === 'snapshot') return this.#snapshot(JSON.stringify(verbatim.init));
    const msg = frame.msg;
    const sent = verbatim.msg as Record<string, unknown>;
    const text = JSON.stringify(sent);
    if (msg.type === 'overlay-update') {
      // A page loaded now gets the overlay as it is now, not as it was at the last snapshot.
      if (this.store.snapshot() !== undefined) {
        this.store.put(
          KEY.snapshot,
          JSON.stringify({ type: 'init', overlay: sent.overlay, widgets: sent.widgets }),
        );
      }
    }
    const seq = msg.type === 'overlay-update' ? undefined : msg.seq;
    if (seq === undefined) return this.hub.relay(text);
    // Kept as a resume sends it, so a join sends stored text and parses nothing.
    const replayText = sent.replayed === true ? text : JSON.stringify({ ...sent, replayed: true });
    this.hub.relay(text, { seq, replayText });
  }

  /** The viewer count: right away if the publisher got none in the last 5 s, else when 5 s have passed (the alarm). */
  countChanged(): void {
    const [publisher] = this.store.publishers();
    if (!publisher) return;
    const count = this.store.viewerCount();
    const sent = this.store.get<{ count: number; at: number }>(KEY.countSent);
    if (sent?.count === count) return;
    const now = Date.now();
    if (sent && now - sent.at < RELAY_LIMITS.viewerCountMs) {
      if (this.store.get<number>(KEY.countDueAt) === undefined) {
        this.store.put(KEY.countDueAt, sent.at + RELAY_LIMITS.viewerCountMs);
        this.hub.arm();
      }
      return;
    }
    this.#sendCount(publisher, count);
  }

  /** A snapshot: what a page loaded now gets first; the first one starts the publication. */
  #snapshot(text: string): void {
    const wasPublished = this.store.snapshot() !== undefined;
    this.store.put(KEY.snapshot, text);
    if (!wasPublished) this.store.put(KEY.checkedAt, Date.now());
    this.hub.relay(text);
    if (!wasPublished) this.hub.arm();
  }

  #sendCount(ws: WebSocket, count: number): void {
    this.#send(ws, { type: 'viewers', count });
    this.store.put(KEY.countSent, { count, at: Date.now() });
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
}
