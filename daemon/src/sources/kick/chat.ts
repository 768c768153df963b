// Kick chat, read anonymously over Kick's Pusher socket: the chatroom's channel (chat, hosts,
// subscriptions) and the channel's own (the end of a stream). Each event goes through map.ts; what is
// not an event we know, or not JSON at all, is one log line per kind and minute, and nothing else.
import type { StreamEvent } from '../../../../shared/protocol/index.js';
import type { Timers } from '../../timers.js';
import { mapKickEvent } from './map.js';
import { type PusherProblem, PusherSocket, type PusherState } from './pusher.js';

/** How often one kind of odd frame may be logged. */
export const PROBLEM_LOG_INTERVAL_MS = 60_000;

export interface KickChatOptions {
  /** `ws[s]://host[:port]/app/<app key>`. */
  url: string;
  chatroomId: number;
  /** Without it only the chatroom is read (the ids were given by hand). */
  channelId?: number;
  timers: Timers;
  random?: () => number;
  pingMs?: number;
  staleMs?: number;
  retryMs?: number;
  retryMaxMs?: number;
  /** `[kick] slug:` */
  prefix: string;
  deliver(event: StreamEvent, kickMessageId?: string): void;
  /** True while the Gatekeeper's feed brings Kick's subscription webhooks: the socket's notices are left out. */
  feedCoversSubscriptions?(): boolean;
  streamEnded(): void;
  onState(state: PusherState, detail?: string): void;
  log(line: string): void;
}

/** The channels of a chatroom and a channel, as Kick's page subscribes to them. */
export function kickChannels(chatroomId: number, channelId?: number): string[] {
  return [`chatrooms.${chatroomId}.v2`, ...(channelId !== undefined ? [`channel.${channelId}`] : [])];
}

/** Logs each kind at most once per interval: a socket that sends garbage in a loop fills no log. */
export class OncePerInterval {
  readonly #last = new Map<string, number>();

  constructor(
    private readonly timers: Pick<Timers, 'now'>,
    private readonly intervalMs = PROBLEM_LOG_INTERVAL_MS,
  ) {}

  /** True when `kind` was not let through within the interval (and remembers now). */
  allow(kind: string): boolean {
    const now = this.timers.now();
    const last = this.#last.get(kind);
    if (last !== undefined && now - last < this.intervalMs) return false;
    this.#last.set(kind, now);
    // Bounded: kinds are event names a server chooses.
    if (this.#last.size > 200) {
      const oldest = this.#last.keys().next();
      if (!oldest.done) this.#last.delete(oldest.value);
    }
    return true;
  }
}

export class KickChat {
  readonly #socket: PusherSocket;
  readonly #once: OncePerInterval;

  /** Throws (in words) when the socket's address is not one Pusher's can be. */
  constructor(private readonly options: KickChatOptions) {
    this.#once = new OncePerInterval(options.timers);
    this.#socket = new PusherSocket({
      url: options.url,
      channels: kickChannels(options.chatroomId, options.channelId),
      timers: options.timers,
      random: options.random,
      pingMs: options.pingMs,
      staleMs: options.staleMs,
      retryMs: options.retryMs,
      retryMaxMs: options.retryMaxMs,
      onEvent: (_channel, event, data) => this.#event(event, data),
      onState: options.onState,
      onProblem: (problem) => this.#problem(problem),
    });
  }

  start(): void {
    this.#socket.start();
  }

  stop(): void {
    this.#socket.stop();
  }

  #event(name: string, data: unknown): void {
    const result = mapKickEvent(name, data);
    if ('event' in result) {
      // Counted once: by the official webhook when the feed brings those, else by the socket's notice.
      if (result.subscription && this.options.feedCoversSubscriptions?.()) return;
      this.options.deliver(result.event, result.messageId);
      return;
    }
    if ('streamEnded' in result) {
      this.options.streamEnded();
      return;
    }
    if ('ignored' in result) return;
    if ('unknown' in result) {
      if (this.#once.allow(`unknown:${name}`))
        this.#line(`an event Kick's chat socket sent is not one we know: ${name}; ignored`);
      return;
    }
    if (this.#once.allow(`drop:${name}`)) this.#line(`${result.drop}; ignored`);
  }

  #problem(problem: PusherProblem): void {
    if (!this.#once.allow(problem.kind)) return;
    this.#line(
      problem.kind === 'server-error'
        ? problem.line
        : `${problem.line} came from Kick's chat socket; ignored`,
    );
  }

  #line(text: string): void {
    this.options.log(`${this.options.prefix} ${text.slice(0, 300)}`);
  }
}
