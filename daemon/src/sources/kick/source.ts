// Kick as one of the daemon's sources. The channel's ids (its chatroom's and its own) are read from
// Kick's site (`/api/v2/channels/<slug>`), or the chatroom id is taken from the source's settings when
// the site refuses (Cloudflare often does); then chat, hosts and subscriptions are read anonymously over
// Kick's Pusher socket. Every event reaches the daemon through `deliver`, which lets each Kick message
// id through once, whichever way it came (the socket here, or the Gatekeeper's feed of Kick's webhooks).
import * as v from 'valibot';
import type { StreamEvent } from '../../../../shared/protocol/index.js';
import { backoffDelay, formatWait } from '../../../../shared/timers.js';
import { errorMessage } from '../../errors.js';
import { FetchError, fetchJson } from '../../http-client/fetch-json.js';
import type { TimerHandle } from '../../timers.js';
import { DEFAULT_PLATFORM_URLS } from '../platform-urls.js';
import { RecentIds } from '../recent-ids.js';
import { type EventSource, type SourceContext, type SourceReport, SourceStateTracker } from '../source.js';
import { KickChat } from './chat.js';
import type { PusherState } from './pusher.js';

export interface KickSourceOptions {
  /** The chatroom id from the source's settings: used when Kick's site refuses to give it. */
  chatroomId?: number;
  /** Nothing heard on the socket for this long: a ping (60 s). */
  pingMs?: number;
  /** Nothing heard for this long: the socket is opened again (180 s). */
  staleMs?: number;
  /** Reconnects and retries of the site: 1 s doubling to 60 s, with jitter. */
  retryMs?: number;
  retryMaxMs?: number;
  /** A channel that does not exist, or ids refused without a chatroom id: looked at again after this (5 min). */
  lookAgainMs?: number;
}

const positiveId = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
/** What the daemon reads of Kick's channel page: the two ids. */
const KickChannelPage = v.looseObject({
  id: positiveId,
  chatroom: v.looseObject({ id: positiveId }),
});

/** The ids the socket needs; `channelId` is missing when the chatroom id was given by hand. */
export interface KickIds {
  chatroomId: number;
  channelId?: number;
}

export class KickSource implements EventSource {
  readonly platform = 'kick';
  readonly #state: SourceStateTracker;
  readonly #seen = new RecentIds(10_000);
  readonly #options: Required<Omit<KickSourceOptions, 'chatroomId'>> & { chatroomId?: number };
  readonly #prefix: string;
  #running = false;
  #generation = 0;
  #timer: TimerHandle | undefined;
  #abort: AbortController | undefined;
  #chat: KickChat | undefined;
  #ids: KickIds | undefined;
  /** Why the chatroom id from the settings is in use (said beside the state). */
  #idsNote: string | undefined;
  #attempt = 0;
  #feedCoversSubscriptions = false;

  constructor(
    readonly channel: string,
    private readonly ctx: SourceContext,
    options: KickSourceOptions = {},
  ) {
    this.#prefix = `[kick] ${channel}:`;
    this.#state = new SourceStateTracker('kick', channel, ctx.timers, ctx.log);
    this.#options = {
      pingMs: 60_000,
      staleMs: 180_000,
      retryMs: 1000,
      retryMaxMs: 60_000,
      lookAgainMs: 5 * 60_000,
      ...options,
    };
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#state.set('connecting');
    this.#schedule(0, () => this.#resolve());
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#generation++;
    if (this.#timer) this.ctx.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#abort?.abort();
    this.#abort = undefined;
    this.#chat?.stop();
    this.#chat = undefined;
    this.#state.set('off');
  }

  report(): SourceReport {
    return this.#state.report();
  }

  /** The ids in use, once known. */
  ids(): KickIds | undefined {
    return this.#ids;
  }

  /** Whether it was started and not stopped: only then does `deliver` let events through. */
  get running(): boolean {
    return this.#running;
  }

  /**
   * The one way a Kick event reaches the daemon: an event with Kick's message id is let through once
   * (the socket and the Gatekeeper's feed may both bring it). True when it was delivered. `at`: when it
   * happened, where the feed says so.
   */
  deliver(event: StreamEvent, kickMessageId?: string, at?: number): boolean {
    if (!this.#running) return false;
    if (kickMessageId && this.#seen.seen(kickMessageId)) return false;
    this.ctx.emit(event, at !== undefined ? { at } : undefined);
    return true;
  }

  /**
   * Whether the Gatekeeper's feed of Kick's webhooks is connected (it brings subscriptions and gifted
   * subscriptions): while it is, the socket's subscription notices are left out, so each counts once.
   */
  setFeedCoversSubscriptions(covers: boolean): void {
    this.#feedCoversSubscriptions = covers;
  }

  #schedule(ms: number, run: () => Promise<void> | void): void {
    if (!this.#running) return;
    const generation = this.#generation;
    if (this.#timer) this.ctx.timers.clearTimeout(this.#timer);
    this.#timer = this.ctx.timers.setTimeout(() => {
      this.#timer = undefined;
      if (generation !== this.#generation || !this.#running) return;
      Promise.resolve(run()).catch((err) => this.ctx.log(`${this.#prefix} ${errorMessage(err)}`));
    }, ms);
  }

  /** Reads the channel's ids from Kick's site; on a refusal, the chatroom id of the settings. */
  async #resolve(): Promise<void> {
    const site = this.ctx.urls.kickSite ?? DEFAULT_PLATFORM_URLS.kickSite ?? 'https://kick.com';
    const generation = this.#generation;
    this.#abort = new AbortController();
    try {
      const answer = await fetchJson(`${site}/api/v2/channels/${encodeURIComponent(this.channel)}`, {
        schema: KickChannelPage,
        service: "Kick's site",
        signal: this.#abort.signal,
        headers: { Accept: 'application/json' },
      });
      if (generation !== this.#generation) return;
      this.#idsNote = undefined;
      this.#connect({ chatroomId: answer.value.chatroom.id, channelId: answer.value.id });
    } catch (err) {
      if (generation !== this.#generation || !this.#running) return;
      this.#resolveFailed(err);
    }
  }

  #resolveFailed(err: unknown): void {
    const given = this.#options.chatroomId;
    const code = err instanceof FetchError ? err.code : undefined;
    const status = err instanceof FetchError && err.status ? ` (${err.status})` : '';
    const reason = err instanceof FetchError ? err.reason : errorMessage(err);
    if (given !== undefined) {
      // Refused or out of reach: the id given by hand is enough to read chat.
      const why =
        code === 'not_found'
          ? `Kick's site does not know the channel${status}`
          : code === 'forbidden' || code === 'unauthorized'
            ? `Kick's site refused to give the channel's ids${status}`
            : `Kick's site did not give the channel's ids: ${reason}`;
      this.#idsNote = `${why}; reading the chat of chatroom ${given} from the settings`;
      this.#connect({ chatroomId: given });
      return;
    }
    const where = `the "chatroom": {"id": …} of ${this.#siteOrigin()}/api/v2/channels/${this.channel} opened in a browser`;
    const addIt = `add its chatroom id to this source (the dashboard's Sources → Kick → Chatroom id; find it as ${where})`;
    const again = `looking again in ${formatWait(this.#options.lookAgainMs)}`;
    if (code === 'not_found') {
      this.#state.set(
        'error',
        `Kick has no channel "${this.channel}" (check the name as in kick.com/${this.channel}); if it exists, ${addIt}; ${again}`,
      );
      this.#schedule(this.#options.lookAgainMs, () => this.#resolve());
      return;
    }
    if (code === 'forbidden' || code === 'unauthorized' || code === 'redirected' || code === 'rejected') {
      this.#state.set(
        'error',
        `Kick's site refused to give the chatroom id of ${this.channel}${status}: ${addIt}; ${again}`,
      );
      this.#schedule(this.#options.lookAgainMs, () => this.#resolve());
      return;
    }
    // Out of reach, slow, busy or a page we could not read: tried again soon.
    const wait = backoffDelay(
      ++this.#attempt,
      { initialMs: this.#options.retryMs, maxMs: this.#options.retryMaxMs, jitter: 0.25 },
      this.ctx.random,
    );
    const what = code === 'bad_response' ? `Kick's site answered something unexpected: ${reason}` : reason;
    this.#state.set(
      code === 'rate_limited' ? 'backoff' : 'reconnecting',
      `cannot read the channel's ids from Kick's site: ${what}; trying again in ${formatWait(wait)}`,
    );
    this.#schedule(wait, () => this.#resolve());
  }

  #siteOrigin(): string {
    return this.ctx.urls.kickSite ?? DEFAULT_PLATFORM_URLS.kickSite ?? 'https://kick.com';
  }

  #connect(ids: KickIds): void {
    this.#attempt = 0;
    this.#ids = ids;
    const url = this.ctx.urls.kickPusher ?? DEFAULT_PLATFORM_URLS.kickPusher ?? '';
    try {
      this.#chat = new KickChat({
        url,
        ...ids,
        timers: this.ctx.timers,
        random: this.ctx.random,
        pingMs: this.#options.pingMs,
        staleMs: this.#options.staleMs,
        retryMs: this.#options.retryMs,
        retryMaxMs: this.#options.retryMaxMs,
        prefix: this.#prefix,
        deliver: (event, id) => this.deliver(event, id),
        feedCoversSubscriptions: () => this.#feedCoversSubscriptions,
        streamEnded: () => this.ctx.streamEnded(),
        onState: (state, detail) => this.#chatState(state, detail),
        log: this.ctx.log,
      });
    } catch (err) {
      this.#state.set('error', errorMessage(err));
      return;
    }
    this.#chat.start();
  }

  #chatState(state: PusherState, detail?: string): void {
    if (!this.#running) return;
    const parts = [detail, state === 'connected' || state === 'connecting' ? this.#idsNote : undefined];
    const said = parts.filter(Boolean).join('; ');
    this.#state.set(state, said || undefined);
  }
}
