// Writing in a YouTube live chat as the streamer (decisions-3 §12): `liveChatMessages.insert` with the
// YouTube sign-in of youtube.json (`overlay-daemon connect youtube`), into the live chat the YouTube
// source is reading. The access token is renewed when it ends (or YouTube refuses it once); Google's
// refusals come back in words, a rate limit with the wait it asks for. Each insert costs 20 units of the
// day's quota of the Google client's project (the operator's), not of the API key the source polls with.
import * as v from 'valibot';
import type { RemoteConfig } from '../../../../shared/config.js';
import { parseWith } from '../../../../shared/protocol/index.js';
import { type ChatDestination, ChatSendError, type ChatSender, type ChatSent } from '../../chat/types.js';
import { errorMessage } from '../../errors.js';
import { FetchError, fetchJson, redact, retryAfter } from '../../http-client/fetch-json.js';
import type { FileWatcher } from '../../store/file-watcher.js';
import type { ConfigArrival } from '../credentials.js';
import type { PlatformUrls } from '../platform-urls.js';
import type { EventSource } from '../source.js';
import {
  CONNECT_YOUTUBE,
  canWriteChat,
  DEFAULT_GOOGLE_AUTH_URL,
  endsSoon,
  GoogleAuthError,
  googleClientOf,
  noGoogleClient,
  refreshYouTubeTokens,
} from './sign-in.js';
import { YouTubeSource } from './source.js';
import { writeYouTubeTokens, YouTubeTokenFile, type YouTubeTokens } from './token-file.js';

/** What one liveChatMessages.insert costs of the day's quota (Google's reference for the method). */
export const INSERT_QUOTA_UNITS = 20;
/** The wait after a rate limit when YouTube names none. */
const RATE_LIMIT_WAIT_MS = 5000;
const REQUEST_TIMEOUT_MS = 10_000;

/** A live chat the daemon reads, and the channel it belongs to. */
export interface WatchedLiveChat {
  channelId?: string | undefined;
  liveChatId: string;
}

/** The live chats the running YouTube sources read now, in the order they run. */
export function watchedLiveChats(sources: { running(): readonly EventSource[] }): WatchedLiveChat[] {
  const chats: WatchedLiveChat[] = [];
  for (const source of sources.running()) {
    if (!(source instanceof YouTubeSource)) continue;
    const chat = source.liveChat();
    if (chat) chats.push(chat);
  }
  return chats;
}

export interface YouTubeChatSenderOptions {
  /** Where youtube.json is. */
  dataDir: string;
  /** The daemon's file watcher: youtube.json is read again once it says the file changed. */
  files: Pick<FileWatcher, 'watch'>;
  /** The Data API root (OVERLAY_YOUTUBE_API_URL) and Google's sign-in service (OVERLAY_GOOGLE_AUTH_URL). */
  urls: Pick<PlatformUrls, 'youtubeApi' | 'googleAuth'>;
  /** The Gatekeeper's configuration in force: its Google client renews the sign-in. */
  remoteConfig(): RemoteConfig | undefined;
  /** Whether that configuration arrived yet (`arrived` when not given). */
  configArrival?(): ConfigArrival;
  /** The live chats being read now (`watchedLiveChats(sources)`). */
  liveChats(): readonly WatchedLiveChat[];
  log?(line: string): void;
  fetch?: typeof fetch;
}

const Inserted = v.looseObject({ id: v.pipe(v.string(), v.minLength(1)) });
const ErrorEnvelope = v.looseObject({
  error: v.looseObject({
    code: v.optional(v.number()),
    message: v.optional(v.string()),
    errors: v.optional(v.array(v.looseObject({ reason: v.optional(v.string()) }))),
  }),
});

/** A refusal of liveChatMessages.insert, in words the streamer acts on. */
function refusalWords(status: number, reason: string | undefined, message: string): string {
  const tag = reason ? ` (${reason})` : ` (HTTP ${status})`;
  switch (reason) {
    case 'liveChatEnded':
      return `the YouTube live chat has ended${tag}`;
    case 'liveChatDisabled':
      return `the live chat of this YouTube stream is turned off${tag}`;
    case 'liveChatNotFound':
      return `YouTube no longer knows this live chat${tag}: the stream may have ended`;
    case 'forbidden':
      return `YouTube refused: the signed-in account may not write in this live chat${tag}; sign in with the channel's Google account (${CONNECT_YOUTUBE})`;
    case 'quotaExceeded':
    case 'dailyLimitExceeded':
      return `the day's YouTube quota of the Gatekeeper's Google client is used up${tag}; Google resets it at midnight Pacific time`;
    case 'insufficientPermissions':
    case 'ACCESS_TOKEN_SCOPE_INSUFFICIENT':
      return `the YouTube sign-in does not allow writing in chat${tag}: ${CONNECT_YOUTUBE} again`;
    case 'accessNotConfigured':
      return `the project of the Gatekeeper's Google client has not enabled the YouTube Data API v3${tag}: its operator enables it`;
    case 'messageTextInvalid':
    case 'messageTextRequired':
      return `YouTube refused the text of the message${tag}`;
  }
  const said = message ? `: ${message.slice(0, 200)}` : '';
  return `YouTube refused the message${tag}${said}`;
}

class YouTubeChatSender implements ChatSender {
  readonly platform = 'youtube' as const;
  readonly #file: YouTubeTokenFile;
  readonly #fetch: typeof fetch;
  readonly #log: (line: string) => void;
  /** Tokens renewed here, kept even when writing them back failed (by the refresh token they came from). */
  #renewed: { from: string; tokens: YouTubeTokens } | undefined;
  /** A refresh token Google no longer accepts: until a new sign-in, nothing is sent. */
  #goneRefreshToken: string | undefined;
  #renewing: Promise<YouTubeTokens> | undefined;

  constructor(private readonly options: YouTubeChatSenderOptions) {
    this.#file = new YouTubeTokenFile(options.dataDir, options.files);
    this.#fetch = options.fetch ?? fetch;
    this.#log = options.log ?? (() => {});
  }

  unavailable(): string | undefined {
    const config = this.options.remoteConfig();
    const client = googleClientOf(config);
    if (!client) return noGoogleClient(this.options.configArrival?.() ?? 'arrived', config);
    const file = this.#file.current();
    if (file.state === 'none') return `no YouTube sign-in to write in chat with: ${CONNECT_YOUTUBE}`;
    if (file.state === 'unreadable')
      return `the YouTube sign-in cannot be read (${file.error}): ${CONNECT_YOUTUBE} again`;
    const tokens = file.tokens;
    if (tokens.refreshToken === this.#goneRefreshToken)
      return `the YouTube sign-in has ended (revoked at Google, or unused for too long): ${CONNECT_YOUTUBE} again`;
    if (tokens.clientId !== client.clientId)
      return `the YouTube sign-in was made with another Google client than the Gatekeeper's configuration names now: ${CONNECT_YOUTUBE} again`;
    if (!canWriteChat(tokens))
      return `the YouTube sign-in does not allow writing in chat (it lacks youtube.force-ssl): ${CONNECT_YOUTUBE} again`;
    if (this.options.liveChats().length === 0)
      return 'no YouTube live chat is being read now (the YouTube source is not live, or none is set up)';
    return undefined;
  }

  /** Stops following youtube.json. */
  close(): void {
    this.#file.close();
  }

  senderName(): string | undefined {
    const file = this.#file.current();
    return file.state === 'ok' ? file.tokens.channelTitle : undefined;
  }

  async send(text: string, destination: ChatDestination): Promise<ChatSent> {
    const why = this.unavailable();
    if (why) throw new ChatSendError(why, 0);
    let tokens = await this.#tokens(false);
    const liveChatId = this.#chatFor(destination, tokens);
    let answer = await this.#insert(tokens, liveChatId, text);
    if (answer.kind === 'refused') {
      // Refused although it had not ended by the clock: renew once and try again.
      tokens = await this.#tokens(true);
      answer = await this.#insert(tokens, liveChatId, text);
      if (answer.kind === 'refused')
        throw new ChatSendError(
          `YouTube refused the sign-in even after renewing it: ${CONNECT_YOUTUBE} again`,
          401,
        );
    }
    if (answer.kind === 'failed') throw answer.error;
    return { messageId: answer.messageId };
  }

  /** The live chat a message goes to: the signed-in channel's own for `own` when it is read, else the first read. */
  #chatFor(destination: ChatDestination, tokens: YouTubeTokens): string {
    const chats = this.options.liveChats();
    const own = tokens.channelId ? chats.find((chat) => chat.channelId === tokens.channelId) : undefined;
    const chat = destination === 'own' ? (own ?? chats[0]) : chats[0];
    if (!chat)
      throw new ChatSendError(
        'no YouTube live chat is being read now (the YouTube source is not live, or none is set up)',
        0,
      );
    return chat.liveChatId;
  }

  async #insert(
    tokens: YouTubeTokens,
    liveChatId: string,
    messageText: string,
  ): Promise<
    | { kind: 'sent'; messageId: string }
    /** 401: the access token was refused. */
    | { kind: 'refused' }
    | { kind: 'failed'; error: ChatSendError }
  > {
    const url = `${this.options.urls.youtubeApi.replace(/\/+$/, '')}/liveChat/messages?part=snippet`;
    try {
      const answer = await fetchJson(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${tokens.accessToken}` },
        json: { snippet: { liveChatId, type: 'textMessageEvent', textMessageDetails: { messageText } } },
        schema: Inserted,
        timeoutMs: REQUEST_TIMEOUT_MS,
        secrets: [tokens.accessToken],
        service: 'the YouTube Data API (liveChat/messages)',
        fetch: this.#fetch,
      });
      return { kind: 'sent', messageId: answer.value.id };
    } catch (err) {
      if (!(err instanceof FetchError)) throw err;
      if (err.status === undefined) {
        const why = err.code === 'timeout' ? `no answer in ${REQUEST_TIMEOUT_MS / 1000} s` : err.reason;
        return {
          kind: 'failed',
          error: new ChatSendError(`cannot reach YouTube to send the message: ${why}`, 0),
        };
      }
      if (err.code === 'bad_response')
        return {
          kind: 'failed',
          error: new ChatSendError(
            `YouTube's answer to the message is not understood: ${err.reason}`,
            err.status,
          ),
        };
      if (err.status === 401) return { kind: 'refused' };
      const envelope = parseWith(ErrorEnvelope, err.body);
      const reason = envelope.ok ? envelope.value.error.errors?.[0]?.reason : undefined;
      const message = redact(envelope.ok ? (envelope.value.error.message ?? '') : '', [tokens.accessToken]);
      if (err.status === 429 || reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded')
        return {
          kind: 'failed',
          error: new ChatSendError(
            `YouTube asks to send less often${reason ? ` (${reason})` : ''}`,
            err.status,
            err.retryAfterMs ?? retryAfter(err.headers?.get('retry-after') ?? null) ?? RATE_LIMIT_WAIT_MS,
          ),
        };
      return {
        kind: 'failed',
        error: new ChatSendError(refusalWords(err.status, reason, message), err.status),
      };
    }
  }

  /** The tokens to send with, renewed first when they end within 5 minutes or `force`. Throws ChatSendError. */
  async #tokens(force: boolean): Promise<YouTubeTokens> {
    const file = this.#file.current();
    if (file.state !== 'ok')
      throw new ChatSendError(`no YouTube sign-in to write in chat with: ${CONNECT_YOUTUBE}`, 0);
    const renewed = this.#renewed;
    const tokens =
      renewed && renewed.from === file.tokens.refreshToken && renewed.tokens.expiresAt > file.tokens.expiresAt
        ? renewed.tokens
        : file.tokens;
    if (!force && !endsSoon(tokens)) return tokens;
    this.#renewing ??= this.#renew(tokens).finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  async #renew(tokens: YouTubeTokens): Promise<YouTubeTokens> {
    const client = googleClientOf(this.options.remoteConfig());
    if (!client) throw new ChatSendError(noGoogleClient(this.options.configArrival?.() ?? 'arrived'), 0);
    let renewed: YouTubeTokens | undefined;
    try {
      renewed = await refreshYouTubeTokens(tokens, {
        authUrl: this.options.urls.googleAuth ?? DEFAULT_GOOGLE_AUTH_URL,
        client,
        fetch: this.#fetch,
      });
    } catch (err) {
      const words = err instanceof GoogleAuthError ? err.message : errorMessage(err);
      throw new ChatSendError(`the YouTube sign-in could not be renewed: ${words}`, 0);
    }
    if (!renewed) {
      this.#goneRefreshToken = tokens.refreshToken;
      const words = `the YouTube sign-in has ended (revoked at Google, or unused for too long): ${CONNECT_YOUTUBE} again`;
      this.#log(`[youtube] ${words}`);
      throw new ChatSendError(words, 401);
    }
    this.#renewed = { from: tokens.refreshToken, tokens: renewed };
    try {
      await writeYouTubeTokens(this.options.dataDir, renewed);
      this.#renewed = { from: renewed.refreshToken, tokens: renewed };
    } catch (err) {
      this.#log(
        `[youtube] the renewed sign-in could not be saved (${errorMessage(err)}); it is used until the daemon stops`,
      );
    }
    return renewed;
  }
}

/** The YouTube sender of the `chat` action. */
export function createYouTubeChatSender(options: YouTubeChatSenderOptions): ChatSender & { close(): void } {
  return new YouTubeChatSender(options);
}
