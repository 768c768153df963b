// Twitch as one of the daemon's sources. Chat is always read, anonymously. With a
// sign-in (`overlay-daemon connect twitch`, kept in twitch.json) it also subscribes over EventSub
// WebSocket to follows, subscriptions, cheers and raids, and reads the viewer count from Helix at a
// polite interval. A cheer, a sub or a raid comes from EventSub when that type is subscribed, else
// from chat: never both.
import type { StreamEvent } from '../../../../shared/protocol/index.js';
import { errorMessage } from '../../errors.js';
import type { TimerHandle } from '../../timers.js';
import { type EventSource, type SourceContext, type SourceReport, SourceStateTracker } from '../source.js';
import { chatScopeMissing, TwitchAuth } from './auth.js';
import { type ChatState, TwitchChat } from './chat.js';
import type { EventSubCoverage } from './chat-map.js';
import { EventSubClient } from './eventsub.js';
import { Helix } from './helix.js';

export interface TwitchSourceOptions {
  /** How often the viewer count is read from Helix (default 60 s; Helix allows 800 requests a minute). */
  viewerIntervalMs?: number;
}

const SIGN_IN_HINT =
  'chat only: connect Twitch (Sources → Connect Twitch, or "overlay-daemon connect twitch") for follows, subscriptions, cheers, raids and viewer counts';

export class TwitchSource implements EventSource {
  readonly platform = 'twitch';
  readonly #state: SourceStateTracker;
  readonly #chat: TwitchChat;
  #chatState: ChatState = 'connecting';
  #chatDetail: string | undefined;
  /** What the signed-in part says: undefined while there is none. */
  #eventsDetail: string | undefined = SIGN_IN_HINT;
  /** The sign-in predates chat sending: it must be made again for the daemon to write in chat. */
  #renewDetail: string | undefined;
  #eventSub: EventSubClient | undefined;
  #viewerTimer: TimerHandle | undefined;
  #lastViewers: number | undefined;
  #running = false;
  /** Ends the signed-in start-up if stop() comes first. */
  #generation = 0;

  constructor(
    readonly channel: string,
    private readonly ctx: SourceContext,
    private readonly options: TwitchSourceOptions = {},
  ) {
    this.#state = new SourceStateTracker('twitch', channel, ctx.timers, ctx.log, `#${channel}`);
    this.#chat = new TwitchChat({
      channel,
      ircUrl: ctx.urls.twitchIrc,
      onEvent: (event) => this.#emit(event),
      onState: (state, detail) => {
        this.#chatState = state;
        this.#chatDetail = detail;
        this.#update();
      },
      log: ctx.log,
      coverage: () => this.coverage(),
    });
  }

  /** What EventSub delivers now (its subscriptions that succeeded). */
  coverage(): EventSubCoverage {
    const subscribed = this.#eventSub?.subscribed() ?? new Set<string>();
    return {
      cheers: subscribed.has('channel.cheer'),
      subscriptions: subscribed.has('channel.subscribe'),
      raids: subscribed.has('channel.raid'),
    };
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#state.set('connecting');
    this.#chat.start();
    void this.#startSignedIn(++this.#generation);
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#generation++;
    if (this.#viewerTimer) this.ctx.timers.clearTimeout(this.#viewerTimer);
    this.#viewerTimer = undefined;
    const eventSub = this.#eventSub;
    this.#eventSub = undefined;
    await Promise.all([this.#chat.stop(), eventSub?.stop()]);
    this.#state.set('off');
  }

  report(): SourceReport {
    return this.#state.report();
  }

  #emit(event: StreamEvent): void {
    if (this.#running) this.ctx.emit(event);
  }

  /** The source's state is chat's (events flow as long as chat does); the detail tells the rest. */
  #update(): void {
    if (!this.#running) return;
    // While chat is not connected, its trouble is what to act on: the sign-in's advice waits.
    const events =
      this.#chatState !== 'connected' && this.#eventsDetail === SIGN_IN_HINT ? undefined : this.#eventsDetail;
    const detail = [this.#chatDetail, events, this.#renewDetail].filter(Boolean).join('; ') || undefined;
    this.#state.set(this.#chatState, detail);
  }

  async #startSignedIn(generation: number): Promise<void> {
    const auth = new TwitchAuth({
      authUrl: this.ctx.urls.twitchAuth,
      dataDir: this.ctx.dataDir,
      log: this.ctx.log,
    });
    try {
      const tokens = await auth.accessToken();
      if (generation !== this.#generation) return;
      this.#renewDetail = tokens ? chatScopeMissing(tokens) : undefined;
      if (!tokens) {
        this.#eventsDetail = SIGN_IN_HINT;
        this.#update();
        return;
      }
      const helix = new Helix({
        baseUrl: this.ctx.urls.twitchApi,
        clientId: tokens.clientId,
        auth: {
          accessToken: async () => (await auth.accessToken())?.accessToken,
          invalidate: () => auth.invalidate(),
        },
      });
      const broadcaster = await helix.userByLogin(this.channel);
      if (generation !== this.#generation) return;
      if (!broadcaster) {
        this.#eventsDetail = `Twitch has no channel named ${this.channel}`;
        this.#update();
        return;
      }
      this.#eventsDetail = 'events: connecting';
      this.#update();
      this.#eventSub = new EventSubClient({
        url: this.ctx.urls.twitchEventSub,
        helix,
        broadcasterId: broadcaster.id,
        userId: tokens.userId,
        onEvent: (event) => this.#emit(event),
        onState: (state, detail) => {
          this.#eventsDetail =
            state === 'connected'
              ? detail
                ? `events: ${detail}`
                : undefined
              : `events ${state}${detail ? `: ${detail}` : ''}`;
          this.#update();
        },
        log: this.ctx.log,
        timers: this.ctx.timers,
        ...(this.ctx.random ? { random: this.ctx.random } : {}),
      });
      this.#eventSub.start();
      this.#pollViewers(helix, broadcaster.id, generation);
    } catch (err) {
      if (generation !== this.#generation) return;
      this.#eventsDetail = `follows, subscriptions, cheers and raids unavailable: ${errorMessage(err)}`;
      this.#update();
    }
  }

  /** The viewer count, read now and then every interval; an event only when it changed. */
  #pollViewers(helix: Helix, broadcasterId: string, generation: number): void {
    const read = async () => {
      try {
        const viewers = await helix.viewerCount(broadcasterId);
        if (generation !== this.#generation) return;
        if (viewers === undefined) {
          // The stream ended: its journal session too (unless another platform is still live).
          if (this.#lastViewers !== undefined) this.ctx.streamEnded();
          this.#lastViewers = undefined;
        } else if (viewers !== this.#lastViewers) {
          this.#lastViewers = viewers;
          this.#emit({
            type: 'viewer',
            platform: 'twitch',
            user: { uniqueId: this.channel, nickname: this.channel },
            data: { viewerCount: viewers },
          });
        }
      } catch (err) {
        this.ctx.log(`[twitch] #${this.channel}: reading the viewer count failed: ${errorMessage(err)}`);
      }
      if (generation !== this.#generation) return;
      this.#viewerTimer = this.ctx.timers.setTimeout(
        () => void read(),
        this.options.viewerIntervalMs ?? 60_000,
      );
    };
    void read();
  }
}
