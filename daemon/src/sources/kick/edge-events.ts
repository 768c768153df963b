// Kick's official events through the Gatekeeper: Kick sends them as signed webhooks to the Gatekeeper,
// which keeps them (24 hours, at most 10,000) under a number of their own (`seq`). While the daemon has a
// licence and the member connected Kick, it keeps one WebSocket open to `/kick/events?after=<seq>`,
// hands every event to the kick source, and remembers the last seq in the journal once the event is
// journaled: what happened while the daemon was off arrives when it starts, and nothing twice.
// The member's account link (kick-link.ts) says whether Kick is connected.
import { WebSocket } from 'ws';
import { parseJsonWith } from '../../../../shared/protocol/index.js';
import { KICK_FEED_CLOSE, KickEventsFrame, type KickFeedEvent } from '../../../../shared/protocol/kick.js';
import { backoffDelay, formatWait } from '../../../../shared/timers.js';
import { errorMessage } from '../../errors.js';
import { redact } from '../../http-client/fetch-json.js';
import { decodeJwtPayload } from '../../licence/jwt-payload.js';
import type { TimerHandle, Timers } from '../../timers.js';
import { KickLink } from './kick-link.js';

/** 1 s doubling to 60 s, ±25 %: daemons cut off by one outage do not all come back in the same second. */
export const KICK_EDGE_BACKOFF = { initialMs: 1000, maxMs: 60_000, jitter: 0.25 } as const;
/** While Kick is not connected, the Gatekeeper is asked again this often (the CLI links in another process). */
export const KICK_STATUS_RECHECK_MS = 60_000;
/**
 * The dashboard (or the CLI) asking how the link stands makes the feed look again at most this often: a
 * box polled every 2 s costs the Gatekeeper one look per 10 s, well inside its 30 requests a minute.
 */
export const KICK_STATUS_ASKED_MIN_MS = 10_000;
/** A socket that stayed up this long was a good one: the next failure waits from 1 s again. */
const STABLE_MS = 60_000;
/**
 * A socket the Gatekeeper closed at its licence's `exp` (4401) after being up at least this long opens again
 * at once with the licence renewed meanwhile; one closed sooner, twice in a row, waits its backoff.
 */
const EXPIRED_QUICK_MS = 5000;
/** What the feed says after the Gatekeeper ended it with 4403, until a new sign-in. */
const ENDED_WHY =
  'the Gatekeeper ended the feed (signed out, or no membership on record) — run overlay-daemon login again';
/** One mapped event is small; anything larger is not the protocol. */
const MAX_INCOMING_BYTES = 256 * 1024;
/** The journal's meta key of the last seq taken, one per member (another member has other numbers). */
export const KICK_SEQ_META_PREFIX = 'kick_events_seq:';

/** What the feed needs of the licence (licence/licence-manager.ts). */
export interface KickEdgeLicence {
  record(): { token: string } | undefined;
  /** `invalid`: the Gatekeeper rejected the licence, so the feed waits for a new sign-in. */
  status?(): { state: string };
  /** Asks the Gatekeeper for a fresh licence (after it refused the one in use). */
  refresh(): Promise<unknown>;
  /**
   * The licence to open the socket again with after the Gatekeeper closed one that had `used` at its `exp`
   * (4401): the one held when it is newer with time left, else a fresh one; absent: always a refresh.
   */
  renewed?(used: string | undefined): Promise<unknown>;
  on(event: 'change', listener: () => void): unknown;
  off(event: 'change', listener: () => void): unknown;
}

/** Where the last seq taken is kept (the journal's meta table): written only after the event is journaled. */
export interface KickSeqStore {
  get(member: string): number | undefined;
  set(member: string, seq: number): void;
}

export interface KickEdgeContext {
  /** The Gatekeeper's origin (the one the licence is validated with). */
  gatekeeperUrl: string;
  licence: KickEdgeLicence;
  seq: KickSeqStore;
  /**
   * The kick source's seam: a stream event is journaled and broadcast once this returns (a Kick message id
   * once, whichever way it came); a live/offline marker starts or ends the session.
   */
  deliver(event: KickFeedEvent, at?: number): void;
  timers: Timers;
  random?: () => number;
  log(line: string): void;
  fetch?: typeof fetch;
  /** Each change of state (the kick source leaves out the socket's subscription notices while connected). */
  onState?(state: KickEdgeState): void;
  /**
   * Whether the streamer reads Kick here (a kick source is set up). Without it, and without a link seen for
   * the member, the feed's "need a sign-in" and "not connected" are no news: /status and the dashboard say
   * them, the log does not.
   */
  usesKick?(): boolean;
}

export type KickEdgeState =
  | 'signed_out'
  | 'checking'
  | 'not_connected'
  | 'connecting'
  | 'connected'
  | 'backoff'
  /** 4409: another daemon of this member took the feed; this one does not take it back by itself. */
  | 'replaced'
  | 'stopped';

export interface KickEdgeStatus {
  state: KickEdgeState;
  /** Whether the Gatekeeper said at its last look that Kick is linked for the member. */
  linked: boolean;
  /** The Kick channel linked, once the Gatekeeper said so. */
  channel?: string;
  /** The state in words, as the kick source's detail carries it. */
  detail: string;
}

/** `seq` frames as JSON meta values: a text that is not a whole number counts as none. */
export function seqStoreOn(journal: {
  metaValue(key: string): string | undefined;
  setMetaValue(key: string, value: string): void;
}): KickSeqStore {
  return {
    get(member) {
      const text = journal.metaValue(KICK_SEQ_META_PREFIX + member);
      const n = text === undefined ? Number.NaN : Number(text);
      return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
    },
    set(member, seq) {
      journal.setMetaValue(KICK_SEQ_META_PREFIX + member, String(seq));
    },
  };
}

export class KickEdgeFeed {
  readonly #ctx: KickEdgeContext;
  readonly #link: KickLink;
  #state: KickEdgeState = 'checking';
  #why: string | undefined;
  #channel: string | undefined;
  #member: string | undefined;
  /** The last seq taken for `#member` (in memory; the journal has it too). */
  #last = 0;
  #ws: WebSocket | undefined;
  #generation = 0;
  #attempt = 0;
  #connectedAt: number | undefined;
  /** The last close was a 4401 within EXPIRED_QUICK_MS of the socket opening. */
  #quickExpiry = false;
  /** Opening again after a 4401: routine (every few seconds with short licences), so not news for the log. */
  #renewing = false;
  /**
   * The licence (member and epoch) whose feed the Gatekeeper ended with 4403: no socket again until a new
   * sign-in — another member, a higher epoch, or a licence confirmed after the Gatekeeper's verdict on
   * this one (`verdict`: the licence was seen refused since).
   */
  #endedFor: { member: string; epoch: number; verdict: boolean } | undefined;
  /** 4409: another daemon of this member took the feed with this licence (member, epoch). */
  #replacedFor: { member: string; epoch: number } | undefined;
  #retry: TimerHandle | undefined;
  /** The token a refresh was already asked for after a 401: a second 401 with it waits instead. */
  #refreshedFor: string | undefined;
  #started = false;
  /** The last line the log got: a state said once per change, not at every look. */
  #said: string | undefined;
  /** The member Kick was seen linked for in this run (a later "not connected" or sign-out is news then). */
  #linkedFor: string | undefined;
  /** The Gatekeeper's last word on the link: connected or not. */
  #linked = false;
  /** When a look was last made because someone asked (`lookAgain`), on the feed's clock. */
  #askedAt: number | undefined;
  readonly #onLicence = () => this.#licenceChanged();

  constructor(ctx: KickEdgeContext) {
    this.#ctx = ctx;
    this.#link = new KickLink(ctx.gatekeeperUrl, ctx.fetch ? { fetch: ctx.fetch } : {});
  }

  get link(): KickLink {
    return this.#link;
  }

  /** The licence JWT in force, undefined while signed out. */
  token(): string | undefined {
    return this.#ctx.licence.record()?.token;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#ctx.licence.on('change', this.#onLicence);
    void this.#check();
  }

  /**
   * Someone asks how the link stands (the dashboard's Kick box, `connect kick` in another terminal): while
   * the feed waits for a link it looks again, at once when it last did so on such a request at least
   * `KICK_STATUS_ASKED_MIN_MS` ago (resolving once the answer is in), else when that time is over. A feed
   * that is connected, or waiting out a failure with its backoff, asks nobody.
   */
  async lookAgain(): Promise<void> {
    if (this.#state !== 'not_connected' && this.#state !== 'signed_out') return;
    const now = this.#ctx.timers.now();
    const wait = this.#askedAt === undefined ? 0 : this.#askedAt + KICK_STATUS_ASKED_MIN_MS - now;
    this.#clearRetry();
    if (wait > 0) {
      this.#retry = this.#ctx.timers.setTimeout(() => void this.#check(), wait);
      return;
    }
    this.#askedAt = now;
    await this.#check();
  }

  /** A link was started or undone from here: the next request for its state may look at once. */
  linkChanging(): void {
    this.#askedAt = undefined;
  }

  /** Kick was unlinked from here: the socket closes and the feed waits for a new link. */
  unlinked(): void {
    if (this.#state === 'stopped') return;
    this.#closeSocket();
    this.#channel = undefined;
    this.#linked = false;
    this.#clearRetry();
    void this.#check();
  }

  status(): KickEdgeStatus {
    return {
      state: this.#state,
      linked: this.#linked,
      ...(this.#channel !== undefined ? { channel: this.#channel } : {}),
      detail: this.describe(),
    };
  }

  /** The feed's state in words: "events: connected through the Gatekeeper". */
  describe(): string {
    switch (this.#state) {
      case 'signed_out':
        return this.#why
          ? `events: ${this.#why}`
          : 'events: need a sign-in — run overlay-daemon login, then overlay-daemon connect kick';
      case 'checking':
        return 'events: asking the Gatekeeper whether Kick is connected';
      case 'not_connected':
        return this.#why
          ? `events: not connected — ${this.#why}`
          : 'events: not connected — run overlay-daemon connect kick';
      case 'connecting':
        return 'events: connecting to the Gatekeeper';
      case 'connected':
        return 'events: connected through the Gatekeeper';
      case 'backoff':
        return `events: trying the Gatekeeper again soon${this.#why ? ` (${this.#why})` : ''}`;
      case 'replaced':
        return 'events: another daemon of this member took the feed — this one does not take it back by itself (restart it, or sign in again, to take the feed back here)';
      case 'stopped':
        return 'events: stopped';
    }
  }

  close(): void {
    if (this.#state !== 'stopped') this.#ctx.onState?.('stopped');
    this.#state = 'stopped';
    this.#ctx.licence.off('change', this.#onLicence);
    this.#clearRetry();
    this.#generation += 1;
    this.#closeSocket();
  }

  #set(state: KickEdgeState, why?: string): void {
    const changed = state !== this.#state;
    this.#state = state;
    this.#why = why;
    const line = this.describe();
    const routine = this.#renewing && (state === 'connecting' || state === 'connected');
    if (state !== 'connecting') this.#renewing = false;
    // Asking is a step of its own, not news: the answer is logged, once per change of what it says (a look
    // every minute that finds Kick still not linked says nothing new).
    if (state !== 'checking' && !routine && line !== this.#said && this.#news(state)) {
      this.#said = line;
      this.#ctx.log(`[kick] ${line}`);
    }
    if (changed) this.#ctx.onState?.(state);
  }

  /**
   * Whether a state is worth a line: being signed out or not linked is, only for a streamer who uses Kick
   * (a kick source set up, or a link seen for this member, in this run or before: its seq is in the journal).
   * A daemon starts signed out until the licence on disk is read, so that is never news by itself.
   */
  #news(state: KickEdgeState): boolean {
    if (state !== 'signed_out' && state !== 'not_connected') return true;
    const member = this.#member;
    const linkedBefore =
      member !== undefined && (this.#linkedFor === member || this.#ctx.seq.get(member) !== undefined);
    // Signed out (logout): news only after a link in this run. A licence the Gatekeeper rejects: as not linked.
    if (state === 'signed_out' && this.#why === undefined) return this.#linkedFor !== undefined;
    return linkedBefore || this.#ctx.usesKick?.() === true;
  }

  #clearRetry(): void {
    if (this.#retry) this.#ctx.timers.clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  #closeSocket(): void {
    const ws = this.#ws;
    this.#ws = undefined;
    this.#generation += 1;
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'going away');
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  }

  /** Signed in as someone else, or signed out: start over with that licence. */
  #licenceChanged(): void {
    if (this.#state === 'stopped') return;
    const token = this.#ctx.licence.record()?.token;
    const member = token ? decodeJwtPayload(token)?.sub : undefined;
    if (member === this.#member && (this.#state === 'connected' || this.#state === 'connecting')) return;
    this.#closeSocket();
    this.#clearRetry();
    void this.#check();
  }

  /** Is Kick linked? Then the socket; else ask again later. */
  async #check(): Promise<void> {
    this.#retry = undefined;
    if (this.#state === 'stopped') return;
    const token = this.#ctx.licence.record()?.token;
    const member = token ? decodeJwtPayload(token)?.sub : undefined;
    if (!token || !member) {
      this.#member = undefined;
      this.#linked = false;
      this.#set('signed_out');
      return;
    }
    if (member !== this.#member) {
      this.#member = member;
      this.#last = this.#ctx.seq.get(member) ?? 0;
    }
    const epoch = decodeJwtPayload(token)?.epoch ?? 1;
    const licenceState = this.#ctx.licence.status?.().state;
    const replaced = this.#replacedFor;
    if (replaced && (member !== replaced.member || epoch > replaced.epoch)) this.#replacedFor = undefined;
    const ended = this.#endedFor;
    if (ended) {
      if (licenceState !== undefined && licenceState !== 'valid' && licenceState !== 'grace')
        ended.verdict = true;
      else if (ended.verdict || member !== ended.member || epoch > ended.epoch) this.#endedFor = undefined;
    }
    if (licenceState === 'invalid') {
      this.#set('signed_out', 'the Gatekeeper rejected the licence — run overlay-daemon login again');
      return;
    }
    if (this.#endedFor) return this.#set('signed_out', ENDED_WHY);
    if (this.#replacedFor) return this.#set('replaced');
    const generation = ++this.#generation;
    if (this.#state !== 'backoff') this.#set('checking');
    const answer = await this.#link.status(token);
    if (generation !== this.#generation) return;
    if (answer.ok) {
      this.#linked = answer.value.connected;
      if (!answer.value.connected) {
        this.#channel = undefined;
        this.#set('not_connected');
        this.#retry = this.#ctx.timers.setTimeout(() => void this.#check(), KICK_STATUS_RECHECK_MS);
        return;
      }
      this.#channel = answer.value.channel;
      this.#refreshedFor = undefined;
      this.#linkedFor = member;
      this.#open(token, member);
      return;
    }
    if (answer.kind === 'http' && answer.status === 401) return this.#refused(token);
    if (answer.kind === 'http' && answer.status === 403) {
      this.#linked = false;
      this.#set('not_connected', `the Gatekeeper refused the licence (${answer.message})`);
      this.#retry = this.#ctx.timers.setTimeout(() => void this.#check(), KICK_STATUS_RECHECK_MS);
      return;
    }
    this.#backoff(answer.kind === 'http' ? `HTTP ${answer.status}: ${answer.message}` : answer.message);
  }

  /** 401: a fresh licence from the Gatekeeper, then at once; a second 401 with the same one waits. */
  #refused(token: string): void {
    if (this.#refreshedFor === token) {
      this.#backoff('the Gatekeeper refused the licence');
      return;
    }
    this.#refreshedFor = token;
    this.#set('checking');
    this.#checkAfterRefresh();
  }

  /** Asks the Gatekeeper about the licence, then looks again, unless the feed moved on meanwhile. */
  #checkAfterRefresh(): void {
    const generation = this.#generation;
    void this.#ctx.licence
      .refresh()
      .catch(() => undefined)
      .then(() => {
        if (generation === this.#generation && this.#state !== 'stopped' && !this.#retry) void this.#check();
      });
  }

  #open(token: string, member: string): void {
    const generation = ++this.#generation;
    this.#set('connecting');
    const base = this.#link.baseUrl.replace(/^http/i, 'ws');
    const ws = new WebSocket(`${base}/kick/events?after=${this.#last}`, {
      headers: { Authorization: `Bearer ${token}` },
      maxPayload: MAX_INCOMING_BYTES,
      handshakeTimeout: 15_000,
      perMessageDeflate: false,
    });
    this.#ws = ws;
    let ended = false;
    const end = (
      why: string,
      refused?: 'licence' | 'not_connected' | 'expired' | 'signed_out' | 'replaced',
    ) => {
      if (ended) return;
      ended = true;
      if (generation !== this.#generation) return;
      this.#ws = undefined;
      const lasted = this.#connectedAt === undefined ? 0 : this.#ctx.timers.now() - this.#connectedAt;
      this.#connectedAt = undefined;
      if (lasted >= STABLE_MS) this.#attempt = 0;
      const quickBefore = this.#quickExpiry;
      this.#quickExpiry = refused === 'expired' && lasted < EXPIRED_QUICK_MS;
      if (refused === 'expired') return this.#expired(token, member, quickBefore && this.#quickExpiry);
      if (refused === 'signed_out') return this.#ended(token, member);
      if (refused === 'replaced') return this.#replaced(token, member);
      if (refused === 'licence') return this.#refused(token);
      if (refused === 'not_connected') {
        this.#channel = undefined;
        this.#linked = false;
        void this.#check();
        return;
      }
      this.#backoff(why);
    };
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      ws.terminate();
      if (status === 401) end('the Gatekeeper refused the licence (HTTP 401)', 'licence');
      else if (status === 404 || status === 409) end(`HTTP ${status}`, 'not_connected');
      else end(`the Gatekeeper answered HTTP ${status}`);
    });
    ws.on('error', (err) => end(redact(errorMessage(err), [token])));
    ws.on('open', () => {
      if (generation !== this.#generation) return;
      this.#connectedAt = this.#ctx.timers.now();
      this.#set('connected');
    });
    ws.on('close', (code, reason) => {
      const why = `closed (${code}${reason.length > 0 ? `: ${reason}` : ''})`;
      if (code === KICK_FEED_CLOSE.licenceExpired) end(why, 'expired');
      else if (code === KICK_FEED_CLOSE.signedOut) end(why, 'signed_out');
      else if (code === KICK_FEED_CLOSE.replaced) end(why, 'replaced');
      else end(why);
    });
    ws.on('message', (data, isBinary) => {
      if (generation !== this.#generation) return;
      if (isBinary) {
        this.#ctx.log('[kick] the Gatekeeper sent a binary frame on the events socket: ignored');
        return;
      }
      this.#onFrame(String(data), member);
    });
  }

  /**
   * 4401, the licence's `exp` passed: at once with the licence renewed meanwhile (or one asked for now).
   * No newer licence, or sockets closed as fast as they open: the backoff.
   */
  #expired(used: string, member: string, quick: boolean): void {
    this.#renewing = true;
    this.#set('connecting');
    const generation = this.#generation;
    const licence = this.#ctx.licence;
    void (licence.renewed?.(used) ?? licence.refresh())
      .catch(() => undefined)
      .then(() => {
        if (generation !== this.#generation || this.#state === 'stopped' || this.#retry) return;
        const fresh = this.token();
        if (fresh === undefined || fresh === used || quick) {
          this.#backoff('the licence expired and no fresh one came from the Gatekeeper yet');
          return;
        }
        if (decodeJwtPayload(fresh)?.sub === member) this.#open(fresh, member);
        else void this.#check();
      });
  }

  /**
   * 4403, signed out or no membership on record: no socket again before a new sign-in. The licence is
   * checked with the Gatekeeper now, so the daemon learns it was revoked and a sign-in is a change it hears.
   */
  #ended(used: string, member: string): void {
    this.#endedFor = { member, epoch: decodeJwtPayload(used)?.epoch ?? 1, verdict: false };
    this.#clearRetry();
    this.#set('signed_out', ENDED_WHY);
    // A sign-in that came before the close opens the feed again; the revoked licence does not.
    this.#checkAfterRefresh();
  }

  /** 4409, another daemon of this member took the feed: not taken back by itself (they would take turns). */
  #replaced(used: string, member: string): void {
    this.#replacedFor = { member, epoch: decodeJwtPayload(used)?.epoch ?? 1 };
    this.#clearRetry();
    this.#set('replaced');
  }

  #onFrame(text: string, member: string): void {
    const parsed = parseJsonWith(KickEventsFrame, text);
    if (!parsed.ok) {
      this.#ctx.log(
        `[kick] the Gatekeeper sent an events frame that is not understood (${parsed.error}): ignored`,
      );
      return;
    }
    const frame = parsed.value;
    if (frame.type === 'gap') {
      const lost = frame.from - 1 - this.#last;
      if (lost >= 0)
        this.#ctx.log(
          `[kick] ${lost > 0 ? `${lost} Kick event${lost === 1 ? ' was' : 's were'}` : 'some Kick events were'} lost before this daemon took them (the Gatekeeper keeps Kick events for 24 hours, at most 10,000): going on with the oldest it still has`,
        );
      else
        this.#ctx.log(
          `[kick] the Gatekeeper's numbers of Kick events are behind this daemon's (${this.#last}; another Gatekeeper, or its store was reset): taking its events from ${frame.from} on`,
        );
      // From here on the Gatekeeper's numbers are the ones to follow (asked again, it would say the same).
      if (frame.from - 1 !== this.#last) this.#remember(member, frame.from - 1);
      return;
    }
    // Already taken (a replay overlapping what arrived live, or a crash before the seq was written).
    if (frame.seq <= this.#last) return;
    try {
      this.#ctx.deliver(frame.event, frame.at);
    } catch (err) {
      this.#ctx.log(`[kick] a ${frame.event.type} event could not be handled: ${errorMessage(err)}`);
    }
    // Written after the event is journaled: a crash in between replays it rather than loses it.
    this.#remember(member, frame.seq);
  }

  #remember(member: string, seq: number): void {
    this.#last = seq;
    try {
      this.#ctx.seq.set(member, seq);
    } catch (err) {
      this.#ctx.log(`[kick] could not remember where the Kick events stand: ${errorMessage(err)}`);
    }
  }

  #backoff(why: string): void {
    this.#attempt += 1;
    const delay = backoffDelay(this.#attempt, KICK_EDGE_BACKOFF, this.#ctx.random ?? Math.random);
    this.#set('backoff', `${why}; again in ${formatWait(delay)}`);
    this.#clearRetry();
    this.#retry = this.#ctx.timers.setTimeout(() => void this.#check(), delay);
  }
}
