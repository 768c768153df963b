// Twitch chat, read anonymously through @twurple/chat's ChatClient (no sign-in needed to read a
// channel's chat): it connects to IRC over WebSocket, joins the channel, reconnects by itself and
// rejoins. Each message goes through chat-map.ts; duplicates (by the `id` tag) are dropped.
import type { ChatClient } from '@twurple/chat';
import type { StreamEvent } from '../../../../shared/protocol/index.js';
import { errorMessage } from '../../errors.js';
import { RecentIds } from '../recent-ids.js';
import { type ChatMapResult, type EventSubCoverage, mapChatMessage, mapUserNotice } from './chat-map.js';

export type ChatState = 'connecting' | 'connected' | 'reconnecting' | 'error';

export interface TwitchChatOptions {
  /** The channel's login, lowercase, without `#`. */
  channel: string;
  /** `ws[s]://host:port` (OVERLAY_TWITCH_IRC_URL). */
  ircUrl: string;
  onEvent(event: StreamEvent): void;
  onState(state: ChatState, detail?: string): void;
  log(line: string): void;
  /** What EventSub delivers right now: chat leaves those out. */
  coverage(): EventSubCoverage;
}

/**
 * ChatClient takes a host name and whether to use TLS, and builds `ws[s]://<hostName>:<443|80>`. A
 * server on another port is reached by giving `host:port/` as the host name: the default port then
 * lands in the path, which an IRC-over-WebSocket server ignores.
 */
export function chatClientTarget(ircUrl: string): { hostName: string; ssl: boolean } {
  const url = new URL(ircUrl);
  const ssl = url.protocol === 'wss:';
  const defaultPort = ssl ? '443' : '80';
  const port = url.port || defaultPort;
  return { hostName: port === defaultPort ? url.hostname : `${url.hostname}:${port}/`, ssl };
}

/**
 * The library is loaded when a Twitch source first starts: a daemon without one never carries it (it
 * is most of what Twitch adds to the daemon's memory).
 */
let chatModule: Promise<typeof import('@twurple/chat')> | undefined;

export class TwitchChat {
  #client: ChatClient | undefined;
  #starting = false;
  readonly #seen = new RecentIds(5000);

  constructor(private readonly options: TwitchChatOptions) {}

  start(): void {
    if (this.#client || this.#starting) return;
    this.#starting = true;
    this.options.onState('connecting');
    chatModule ??= import('@twurple/chat');
    chatModule.then(
      ({ ChatClient }) => {
        // stop() came first.
        if (!this.#starting) return;
        this.#starting = false;
        this.#connect(new ChatClient(this.#clientOptions()));
      },
      (err: unknown) => {
        this.#starting = false;
        this.options.onState('error', `the Twitch chat library did not load: ${errorMessage(err)}`);
      },
    );
  }

  #clientOptions(): ConstructorParameters<typeof ChatClient>[0] {
    const { channel, log } = this.options;
    return {
      ...chatClientTarget(this.options.ircUrl),
      channels: [channel],
      readOnly: true,
      // `channels` is joined again at every registration, reconnects included.
      rejoinChannelsOnReconnect: false,
      // The library's own lines go to the daemon's log, errors only; the source says the rest.
      logger: {
        minLevel: 'error',
        custom: (_level: number, message: string) => log(`[twitch] chat: ${message}`),
      },
    };
  }

  #connect(client: ChatClient): void {
    const { channel } = this.options;
    this.#client = client;
    // Whether chat was joined since the last drop: a drop without is a connect that failed.
    let joined = false;
    client.onJoin((to, user) => {
      if (to !== channel || !/^justinfan/.test(user)) return;
      joined = true;
      this.options.onState('connected');
    });
    client.onJoinFailure((failed, reason) => {
      if (failed === channel) this.options.onState('error', describeJoinFailure(reason, channel));
    });
    client.onDisconnect((manually, reason) => {
      if (manually || this.#client !== client) return;
      const why = reason
        ? errorMessage(reason)
            .replace(/^\[\d+\]\s*/, '')
            .trim()
        : '';
      // Never joined since the last try: Twitch is out of reach (offline, DNS, a firewall), as TikTok says.
      const what = joined ? 'chat connection lost' : 'cannot reach Twitch (is this computer online?)';
      joined = false;
      this.options.onState('reconnecting', `${what}${why ? `: ${why}` : ''}`);
    });
    client.onMessage((to, user, text, msg) => {
      if (to !== channel) return;
      this.#deliver(mapChatMessage(msg.tags, user, text, this.options.coverage()));
    });
    const notice = (_: string, __: string, ___: unknown, msg: { tags: Map<string, string>; text?: string }) =>
      this.#deliver(mapUserNotice(msg.tags, msg.text || undefined, this.options.coverage()));
    client.onSub(notice);
    client.onResub(notice);
    client.onSubGift(notice);
    client.onCommunitySub(notice);
    client.onRaid(notice);
    client.connect();
  }

  async stop(): Promise<void> {
    this.#starting = false;
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    try {
      client.quit();
    } catch (err) {
      this.options.log(`[twitch] chat: closing failed: ${errorMessage(err)}`);
    }
  }

  #deliver(result: ChatMapResult): void {
    if ('drop' in result) {
      // A cheer or sub that EventSub delivers is expected, not worth a line.
      if (!/EventSub delivers it|is not an event/.test(result.drop))
        this.options.log(`[twitch] chat message dropped: ${result.drop}`);
      return;
    }
    if (this.#seen.seen(result.id)) return;
    this.options.onEvent(result.event);
  }
}

function describeJoinFailure(reason: string, channel: string): string {
  if (/suspended|banned/i.test(reason)) return `Twitch channel ${channel} is suspended or closed`;
  if (/timeout/i.test(reason)) return `joining the chat of ${channel} timed out`;
  return `could not join the chat of ${channel}: ${reason}`;
}
