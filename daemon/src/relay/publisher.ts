// One public overlay's publisher: one outbound WebSocket to the Gatekeeper's relay, which gets a snapshot
// after each `hello`, what it missed after `hello.lastSeq`, then every page message of the overlay once, in
// order, paced under the relay's limit; reconnects with backoff and jitter.
import { WebSocket } from 'ws';
import type { Overlay } from '../../../shared/protocol/index.js';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import {
  HubToPublisher,
  RELAY_CLOSE,
  RELAY_LIMITS,
  REPLACED_REASON,
  type RelayStatus,
  replacedFrom,
} from '../../../shared/protocol/relay.js';
import { backoffDelay } from '../../../shared/timers.js';
import { errorMessage } from '../errors.js';
import type { TimerHandle, Timers } from '../timers.js';
import { type PageInit, pageInit } from '../ws/hub.js';
import { mediaNamesOf, renameMedia } from './media-refs.js';
import { TokenBucket } from './token-bucket.js';

/** 1 s doubling to 60 s, ±25 %: many daemons cut off by one outage do not all come back in the same second. */
export const PUBLISHER_BACKOFF = { initialMs: 1000, maxMs: 60_000, jitter: 0.25 } as const;
/** A connection that stayed up this long was a good one: the next failure waits from 1 s again. */
const STABLE_MS = 60_000;
/** Frames a second, a little under the relay's 200 so that timing noise never reaches its limit. */
export const PUBLISHER_RATE = 180;
/** Frames sent in one go at most (the relay's bucket holds 200). */
const PUBLISHER_BURST = 100;
/** Frames waiting at most; beyond, they are dropped and a fresh snapshot takes their place. */
export const PUBLISHER_QUEUE_MAX = 2000;
/**
 * A socket the relay closed for its licence's `exp` (4401) after being up at least this long is opened again
 * at once with the licence renewed meanwhile; one closed sooner, twice in a row, waits its backoff (a relay
 * that closes every socket at once is not hammered).
 */
const EXPIRED_QUICK_MS = 5000;
/** How long the relay has to say `hello` once the socket is open. */
const HELLO_TIMEOUT_MS = 15_000;
/** The hub's frames are small; anything larger is not the protocol. */
const MAX_INCOMING_BYTES = 64 * 1024;

export const REPLACED_DETAIL = REPLACED_REASON;

/** A takeover by another daemon (4409): when it came and, when the relay said, from which address. */
export interface Takeover {
  at: number;
  from: string | undefined;
}

/** The `/status` entry of an overlay another daemon took over. */
export function takenOverStatus(overlayId: string, takeover: Takeover): RelayStatus {
  const from = takeover.from === undefined ? '' : ` from ${takeover.from}`;
  // In this computer's local time, as the streamer reads the clock beside it.
  const since = new Date(takeover.at).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
  return {
    overlayId,
    state: 'error',
    viewers: 0,
    detail: `${REPLACED_DETAIL}${from} since ${since}: take it back from the dashboard or with overlay-daemon relay take-back ${overlayId}`,
    takenOverAt: new Date(takeover.at).toISOString(),
    ...(takeover.from === undefined ? {} : { takenOverFrom: takeover.from }),
  };
}

export interface PublisherContext {
  overlayId: string;
  /** `ws(s)://…/relay/publish/<overlayId>`. */
  url: string;
  /** The licence JWT in force (undefined once signed out). */
  token(): string | undefined;
  /**
   * A licence to connect again with after the relay closed the socket that had `used` at its `exp` (or
   * refused it): the one held when it is newer and has time left, else a fresh one from the Gatekeeper.
   */
  refreshLicence(used: string | undefined): Promise<unknown>;
  /** The overlay in force. */
  overlay(): Overlay | undefined;
  /** What a page resuming after `from` would get (encoded, `replayed`), in order. */
  keptSince(from: number): { texts: string[]; gap: boolean };
  /** Every page message of the overlay from now on, as its JSON text; returns the unsubscribe. */
  observe(listener: (text: string) => void): () => void;
  /** The relay's name of a media file (uploaded first when needed); undefined when it cannot be published. */
  mediaName(name: string): Promise<string | undefined>;
  timers: Timers;
  random: () => number;
  log: (line: string) => void;
  /** 4409: another daemon took over; the service keeps this overlay in `error` until taken back. */
  onReplaced(takeover: Takeover): void;
}

type Item = { kind: 'snapshot'; init: PageInit } | { kind: 'message'; text: string };

const STREAM_EVENT_PREFIX = '{"type":"stream-event"';

export class Publisher {
  readonly #ctx: PublisherContext;
  #state: RelayStatus['state'] = 'connecting';
  #detail: string | undefined;
  #viewers = 0;
  #viewerUrl: string | undefined;
  #ws: WebSocket | undefined;
  /** Bumped by each connection: work of an older one (a media upload) stops when it sees a new number. */
  #generation = 0;
  #attempt = 0;
  #connectedAt: number | undefined;
  /** The last close was a 4401 that came within EXPIRED_QUICK_MS of the socket's `hello` (or before it). */
  #quickExpiry = false;
  #retry: TimerHandle | undefined;
  #paceTimer: TimerHandle | undefined;
  #helloTimer: TimerHandle | undefined;
  #unobserve: (() => void) | undefined;
  #queue: Item[] = [];
  #pumping = false;
  #stopped = false;
  /** Set when this publisher should only tell the relay to stop (`unpublish`) and close. */
  #unpublishing = false;
  readonly #bucket: TokenBucket;

  constructor(ctx: PublisherContext) {
    this.#ctx = ctx;
    this.#bucket = new TokenBucket(PUBLISHER_RATE, PUBLISHER_BURST, () => ctx.timers.now());
  }

  status(): RelayStatus {
    return {
      overlayId: this.#ctx.overlayId,
      state: this.#state,
      viewers: this.#viewers,
      ...(this.#viewerUrl !== undefined ? { viewerUrl: this.#viewerUrl } : {}),
      ...(this.#detail !== undefined ? { detail: this.#detail } : {}),
    };
  }

  start(): void {
    this.#connect();
  }

  /**
   * Tells the relay the overlay is no longer public, then closes. While no socket is open, one is opened
   * for that alone (once: a relay out of reach keeps the last snapshot until the licence says otherwise).
   */
  unpublish(): Promise<void> {
    if (this.#stopped || this.#state === 'error') {
      this.close();
      return Promise.resolve();
    }
    this.#unpublishing = true;
    // No reconnect and nothing more to send; a socket waiting for `hello` keeps its deadline.
    if (this.#retry) this.#ctx.timers.clearTimeout(this.#retry);
    if (this.#paceTimer) this.#ctx.timers.clearTimeout(this.#paceTimer);
    this.#retry = undefined;
    this.#paceTimer = undefined;
    this.#queue = [];
    const ws = this.#ws;
    const done = new Promise<void>((resolve) => {
      this.#whenDone = resolve;
    });
    // Open and past `hello`: now; opening or waiting for `hello`: when it comes; else on a socket of its own.
    if (ws?.readyState === WebSocket.OPEN && this.#state === 'connected') this.#sendUnpublish(ws);
    else if (!ws) this.#connect();
    return done;
  }

  #whenDone: (() => void) | undefined;

  #finish(): void {
    this.#stopped = true;
    this.#clearTimers();
    this.#unobserve?.();
    this.#unobserve = undefined;
    this.#queue = [];
    const resolve = this.#whenDone;
    this.#whenDone = undefined;
    resolve?.();
  }

  #sendUnpublish(ws: WebSocket): void {
    ws.send(JSON.stringify({ type: 'unpublish' }), () => ws.close(1000, 'unpublished'));
    this.#finish();
  }

  /** Stops without unpublishing (shutdown, lapse): viewers keep the last snapshot until the relay decides. */
  close(code = 1001, reason = 'going away'): void {
    this.#finish();
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) {
      if (ws.readyState === WebSocket.OPEN) ws.close(code, reason);
      else ws.terminate();
    }
  }

  #clearTimers(): void {
    if (this.#retry) this.#ctx.timers.clearTimeout(this.#retry);
    if (this.#paceTimer) this.#ctx.timers.clearTimeout(this.#paceTimer);
    if (this.#helloTimer) this.#ctx.timers.clearTimeout(this.#helloTimer);
    this.#retry = undefined;
    this.#paceTimer = undefined;
    this.#helloTimer = undefined;
  }

  #connect(): void {
    this.#retry = undefined;
    const token = this.#ctx.token();
    if (!token) {
      if (this.#unpublishing) this.#finish();
      else this.#backoff('no licence to publish with');
      return;
    }
    const generation = ++this.#generation;
    if (!this.#unpublishing) this.#state = 'connecting';
    const ws = new WebSocket(this.#ctx.url, {
      headers: { Authorization: `Bearer ${token}` },
      maxPayload: MAX_INCOMING_BYTES,
      handshakeTimeout: 15_000,
      perMessageDeflate: false,
    });
    this.#ws = ws;
    let ended = false;
    const end = (code: number, why: string | undefined, refused = false) => {
      if (ended) return;
      ended = true;
      this.#onEnd(generation, code, why, token, refused);
    };
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      ws.terminate();
      const refused = status === 401 || status === 403;
      end(0, refused ? `the Gatekeeper refused the licence (HTTP ${status})` : `HTTP ${status}`, refused);
    });
    ws.on('error', (err) => end(1006, errorMessage(err)));
    // A relay that accepts the socket but never says `hello` is no relay: closed, and tried again later.
    ws.on('open', () => {
      this.#helloTimer = this.#ctx.timers.setTimeout(() => {
        this.#helloTimer = undefined;
        if (generation === this.#generation && this.#state !== 'connected') ws.terminate();
      }, HELLO_TIMEOUT_MS);
    });
    ws.on('close', (code, reason) => end(code, reason.toString() || undefined));
    ws.on('message', (data, isBinary) => {
      if (generation !== this.#generation || isBinary) return;
      const parsed = parseJsonWith(HubToPublisher, String(data));
      if (!parsed.ok) return;
      const frame = parsed.value;
      if (frame.type === 'viewers') {
        this.#viewers = frame.count;
        return;
      }
      this.#viewerUrl = frame.viewerUrl;
      if (this.#helloTimer) this.#ctx.timers.clearTimeout(this.#helloTimer);
      this.#helloTimer = undefined;
      if (this.#unpublishing) return this.#sendUnpublish(ws);
      this.#onHello(ws, frame.lastSeq);
    });
  }

  /** Snapshot, what the relay missed after `lastSeq`, then live: all taken in this turn, so nothing comes in between. */
  #onHello(ws: WebSocket, lastSeq: number | null): void {
    const overlay = this.#ctx.overlay();
    if (!overlay) return void ws.close(1000, 'overlay gone');
    this.#state = 'connected';
    this.#detail = undefined;
    this.#connectedAt = this.#ctx.timers.now();
    this.#queue = [{ kind: 'snapshot', init: pageInit(overlay) }];
    if (lastSeq !== null) {
      const { texts } = this.#ctx.keptSince(lastSeq);
      // Beyond what the queue holds, only the newest: the snapshot already has the state they led to.
      const kept = texts.length > PUBLISHER_QUEUE_MAX / 2 ? texts.slice(-PUBLISHER_QUEUE_MAX / 2) : texts;
      if (kept.length < texts.length)
        this.#ctx.log(
          `[relay] overlay ${this.#ctx.overlayId}: the relay missed ${texts.length} messages; sending the newest ${kept.length}`,
        );
      for (const text of kept) this.#queue.push({ kind: 'message', text });
    }
    this.#unobserve?.();
    this.#unobserve = this.#ctx.observe((text) => this.#enqueue(text));
    void this.#pump();
  }

  #enqueue(text: string): void {
    if (this.#queue.length >= PUBLISHER_QUEUE_MAX) {
      this.#ctx.log(
        `[relay] overlay ${this.#ctx.overlayId}: more than ${PUBLISHER_QUEUE_MAX} messages waiting for the relay; dropped them and sending a fresh snapshot`,
      );
      const overlay = this.#ctx.overlay();
      this.#queue = overlay ? [{ kind: 'snapshot', init: pageInit(overlay) }] : [];
      return;
    }
    this.#queue.push({ kind: 'message', text });
    void this.#pump();
  }

  /** Sends what waits, in order, one token per frame; media are uploaded before the frame that names them. */
  async #pump(): Promise<void> {
    if (this.#pumping || this.#paceTimer) return;
    this.#pumping = true;
    const generation = this.#generation;
    try {
      while (this.#queue.length > 0) {
        const ws = this.#ws;
        if (generation !== this.#generation || this.#stopped || ws?.readyState !== WebSocket.OPEN) return;
        const wait = this.#bucket.take();
        if (wait > 0) {
          this.#paceTimer = this.#ctx.timers.setTimeout(() => {
            this.#paceTimer = undefined;
            void this.#pump();
          }, wait);
          return;
        }
        const item = this.#queue.shift();
        if (!item) return;
        const frame = await this.#frame(item);
        if (generation !== this.#generation || this.#stopped || ws.readyState !== WebSocket.OPEN) return;
        const bytes = Buffer.byteLength(frame);
        if (bytes > RELAY_LIMITS.publisherFrameBytes) {
          this.#ctx.log(
            `[relay] overlay ${this.#ctx.overlayId}: a ${item.kind} of ${Math.ceil(bytes / 1024)} KiB is over the relay's ${RELAY_LIMITS.publisherFrameBytes / 1024} KiB a frame: not sent`,
          );
          continue;
        }
        ws.send(frame);
      }
    } catch (err) {
      this.#ctx.log(`[relay] overlay ${this.#ctx.overlayId}: could not send: ${errorMessage(err)}`);
    } finally {
      this.#pumping = false;
    }
  }

  /** The frame's text: stream events verbatim; anything naming media with each name the relay serves it under. */
  async #frame(item: Item): Promise<string> {
    if (item.kind === 'snapshot') {
      const init = await this.#withRelayMedia(item.init);
      return `{"type":"snapshot","init":${JSON.stringify(init)}}`;
    }
    const { text } = item;
    if (text.startsWith(STREAM_EVENT_PREFIX)) return `{"type":"message","msg":${text}}`;
    const message = JSON.parse(text) as Record<string, unknown>;
    const renamed = await this.#withRelayMedia(message);
    return `{"type":"message","msg":${renamed === message ? text : JSON.stringify(renamed)}}`;
  }

  async #withRelayMedia<T extends Record<string, unknown> | PageInit>(message: T): Promise<T> {
    const names = mediaNamesOf(message as Record<string, unknown>);
    if (names.size === 0) return message;
    // Renamed to the relay's own name, `<sha256>.<ext>`: a media name as the page protocol allows it, which the
    // viewer page resolves beside its own address, `<viewerUrl>/assets/<sha256>.<ext>` (a full URL would not
    // pass the relay's check of the frame).
    const map = new Map<string, string>();
    for (const name of names) {
      const relayName = await this.#ctx.mediaName(name);
      if (relayName !== undefined) map.set(name, relayName);
    }
    return map.size === 0 ? message : renameMedia(message, (name) => map.get(name));
  }

  #onEnd(generation: number, code: number, why: string | undefined, used: string, refused: boolean): void {
    if (generation !== this.#generation) return;
    this.#unobserve?.();
    this.#unobserve = undefined;
    this.#queue = [];
    this.#ws = undefined;
    if (this.#paceTimer) this.#ctx.timers.clearTimeout(this.#paceTimer);
    if (this.#helloTimer) this.#ctx.timers.clearTimeout(this.#helloTimer);
    this.#paceTimer = undefined;
    this.#helloTimer = undefined;
    if (this.#stopped) return;
    if (this.#unpublishing) {
      this.#ctx.log(
        `[relay] overlay ${this.#ctx.overlayId}: could not tell the relay to stop publishing (${why ?? code})`,
      );
      this.#finish();
      return;
    }
    const lasted = this.#connectedAt === undefined ? 0 : this.#ctx.timers.now() - this.#connectedAt;
    this.#connectedAt = undefined;
    if (lasted >= STABLE_MS) this.#attempt = 0;
    const quickBefore = this.#quickExpiry;
    this.#quickExpiry = code === RELAY_CLOSE.licenceExpired && lasted < EXPIRED_QUICK_MS;
    if (code === RELAY_CLOSE.replaced) {
      const takeover = { at: this.#ctx.timers.now(), from: replacedFrom(why) };
      const entry = takenOverStatus(this.#ctx.overlayId, takeover);
      this.#state = 'error';
      this.#detail = entry.detail;
      this.#viewers = 0;
      this.#ctx.log(
        `[relay] overlay ${this.#ctx.overlayId}: ${REPLACED_DETAIL}${takeover.from ? ` (from ${takeover.from})` : ''}; not publishing it from here until it is taken back (dashboard, overlay-daemon relay take-back), made public again or the daemon restarts`,
      );
      this.#stopped = true;
      this.#ctx.onReplaced(takeover);
      return;
    }
    if (code === RELAY_CLOSE.licenceExpired) {
      // The relay closes when the licence's `exp` passes: with the licence renewed meanwhile (or one asked
      // for now), at once; viewers stay connected meanwhile. No newer licence, or the relay closing sockets
      // as fast as they open: the backoff.
      this.#state = 'connecting';
      this.#detail = 'the licence expired: connecting again with a fresh one';
      void this.#ctx
        .refreshLicence(used)
        .catch(() => undefined)
        .then(() => {
          if (this.#stopped || generation !== this.#generation || this.#retry) return;
          const fresh = this.#ctx.token();
          if (fresh !== undefined && fresh !== used && !(quickBefore && this.#quickExpiry)) this.#connect();
          else this.#backoff('the licence expired and no fresh one came from the Gatekeeper yet');
        });
      return;
    }
    if (code === RELAY_CLOSE.notPublished || refused) {
      // 4403 (signed out or no longer Premium, says the relay) or an upgrade refused: the Gatekeeper's word
      // on the licence now, so a lapse or a logout stops the publishers; a retry only after the backoff.
      void this.#ctx.refreshLicence(used).catch(() => undefined);
    }
    if (code === RELAY_CLOSE.policy)
      this.#ctx.log(
        `[relay] overlay ${this.#ctx.overlayId}: the relay closed the publisher (1008${why ? `: ${why}` : ''})`,
      );
    this.#backoff(why ?? `closed (${code})`);
  }

  #backoff(why: string): void {
    this.#attempt += 1;
    const delay = backoffDelay(this.#attempt, PUBLISHER_BACKOFF, this.#ctx.random);
    this.#state = 'backoff';
    this.#detail = why;
    this.#retry = this.#ctx.timers.setTimeout(() => this.#connect(), delay);
  }
}
