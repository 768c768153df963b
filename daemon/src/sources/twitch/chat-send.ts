// Chat sent as the signed-in Twitch user (decisions-3 §12): Helix `POST /chat/messages` to the channel
// the Twitch source watches (`event`) or to the user's own channel (`own`), never as a threaded reply.
// The sign-in is twitch.json's, followed as it changes; one made before chat sending lacks the scope
// `user:write:chat` and is not tried: the sender says in words that it must be made again.
import { join } from 'node:path';
import * as v from 'valibot';
import { parseWith } from '../../../../shared/protocol/index.js';
import { formatWait } from '../../../../shared/timers.js';
import { type ChatDestination, ChatSendError, type ChatSender, type ChatSent } from '../../chat/types.js';
import { errorMessage } from '../../errors.js';
import { FetchError, fetchJson } from '../../http-client/fetch-json.js';
import type { FileWatcher } from '../../store/file-watcher.js';
import {
  chatScopeMissing,
  readTwitchTokens,
  TWITCH_FILE,
  TWITCH_RENEW_FOR_CHAT,
  TwitchAuth,
  type TwitchTokens,
} from './auth.js';
import { Helix, HelixError, type HelixUser } from './helix.js';

export interface TwitchChatSenderOptions {
  /** Including `/helix` (OVERLAY_TWITCH_API_URL). */
  apiUrl: string;
  /** Where the sign-in is renewed (OVERLAY_TWITCH_AUTH_URL, an origin). */
  authUrl: string;
  /** The data directory's root, where twitch.json is. */
  dataDir: string;
  /**
   * The channel (login) the Twitch source watches: where `event` messages go. Undefined when no Twitch
   * source runs: they go to the signed-in user's own channel then.
   */
  eventChannel(): string | undefined;
  fetch?: typeof fetch;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** Follows twitch.json (a new sign-in, a sign-out) through the daemon's file watcher; else `reload()` reads it. */
  files?: Pick<FileWatcher, 'watch'>;
  log?: (line: string) => void;
}

/** When Twitch says "too many" without saying until when: its chat limit is counted over 30 s. */
const DEFAULT_RETRY_AFTER_MS = 30_000;
const CONNECT = 'connect Twitch in Sources (overlay-daemon connect twitch)';
const SIGN_IN_AGAIN = 'sign in to Twitch again in Sources (overlay-daemon connect twitch)';

/** `{"data":[{"message_id":"…","is_sent":true}]}`; a dropped message names why (`drop_reason`). */
const SendAnswer = v.object({
  data: v.pipe(
    v.array(
      v.object({
        message_id: v.string(),
        is_sent: v.boolean(),
        drop_reason: v.nullish(v.object({ code: v.string(), message: v.string() })),
      }),
    ),
    v.minLength(1),
  ),
});
const ErrorAnswer = v.object({ message: v.string() });

/** Sends as the signed-in Twitch user; follows twitch.json until `close()`. */
export class TwitchChatSender implements ChatSender {
  readonly platform = 'twitch';
  /** Settles once twitch.json was read the first time. */
  readonly ready: Promise<void>;
  readonly #options: TwitchChatSenderOptions;
  readonly #apiUrl: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #log: (line: string) => void;
  /** Stops following twitch.json, when it is followed. */
  readonly #unwatch: (() => void) | undefined;
  /** twitch.json as last read: undefined when there is none. */
  #tokens: TwitchTokens | undefined;
  /** twitch.json could not be read, in words. */
  #unreadable: string | undefined;
  /** The sign-in ended (its renewal was refused) or Twitch said it lacks the scope: until a new sign-in. */
  #refused: string | undefined;
  #auth: TwitchAuth | undefined;
  /** Broadcaster ids of channel logins, looked up once each. */
  readonly #ids = new Map<string, string>();

  constructor(options: TwitchChatSenderOptions) {
    this.#options = options;
    this.#apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#log = options.log ?? (() => {});
    this.ready = this.reload();
    this.#unwatch = options.files?.watch(join(options.dataDir, TWITCH_FILE), () => void this.reload());
  }

  #makeAuth(): TwitchAuth {
    return new TwitchAuth({
      authUrl: this.#options.authUrl,
      dataDir: this.#options.dataDir,
      fetch: this.#fetch,
      log: this.#log,
    });
  }

  /** Reads twitch.json again now (a new sign-in, a sign-out). */
  async reload(): Promise<void> {
    let read: TwitchTokens | undefined;
    try {
      read = await readTwitchTokens(this.#options.dataDir);
      this.#unreadable = undefined;
    } catch (err) {
      read = undefined;
      this.#unreadable = errorMessage(err);
    }
    const tokens = this.#tokens;
    const sameSignIn =
      read !== undefined &&
      tokens !== undefined &&
      read.userId === tokens.userId &&
      read.clientId === tokens.clientId &&
      read.scopes.join(' ') === tokens.scopes.join(' ');
    if (!sameSignIn || read?.refreshToken !== tokens?.refreshToken) {
      // A renewal (ours or the Twitch source's) goes on with the sign-in in use; a new sign-in, or one
      // after Twitch refused the last, starts afresh.
      if (!sameSignIn || this.#refused !== undefined) this.#auth = read ? this.#makeAuth() : undefined;
      this.#refused = undefined;
    }
    if (read?.userId !== tokens?.userId) this.#ids.clear();
    this.#tokens = read;
  }

  unavailable(): string | undefined {
    if (this.#unreadable) return this.#unreadable;
    if (!this.#tokens) return `not signed in to Twitch: ${CONNECT}`;
    return this.#refused ?? chatScopeMissing(this.#tokens);
  }

  senderName(): string | undefined {
    return this.#tokens?.login;
  }

  /** Stops following twitch.json. */
  close(): void {
    this.#unwatch?.();
  }

  /** Where a message goes: the watched channel's broadcaster id, or the signed-in user's own. */
  async #broadcasterOf(signedIn: TwitchTokens, destination: ChatDestination): Promise<string> {
    const channel = destination === 'event' ? this.#options.eventChannel()?.toLowerCase() : undefined;
    if (!channel || channel === signedIn.login.toLowerCase()) return signedIn.userId;
    const known = this.#ids.get(channel);
    if (known) return known;
    const current = this.#auth ?? this.#makeAuth();
    const helix = new Helix({
      baseUrl: this.#apiUrl,
      clientId: signedIn.clientId,
      auth: {
        accessToken: async () => (await current.accessToken())?.accessToken,
        invalidate: () => current.invalidate(),
      },
      fetch: this.#fetch,
      timeoutMs: this.#timeoutMs,
    });
    let user: HelixUser | undefined;
    try {
      user = await helix.userByLogin(channel);
    } catch (err) {
      throw new ChatSendError(
        `could not look up the Twitch channel ${channel}: ${errorMessage(err)}`,
        err instanceof HelixError ? (err.status ?? 0) : 0,
      );
    }
    if (!user) throw new ChatSendError(`Twitch has no channel named ${channel}`, 404);
    this.#ids.set(channel, user.id);
    return user.id;
  }

  async send(text: string, destination: ChatDestination): Promise<ChatSent> {
    await this.ready;
    const reason = this.unavailable();
    if (reason) throw new ChatSendError(reason, 0);
    const current = this.#auth ?? this.#makeAuth();
    let renewed = false;
    for (;;) {
      let signedIn: TwitchTokens | undefined;
      try {
        signedIn = await current.accessToken();
      } catch (err) {
        throw new ChatSendError(`the Twitch sign-in could not be used: ${errorMessage(err)}`, 0);
      }
      if (!signedIn) {
        this.#refused = `the Twitch sign-in has ended (revoked, or unused for too long): ${SIGN_IN_AGAIN}`;
        throw new ChatSendError(this.#refused, 401);
      }
      const broadcasterId = await this.#broadcasterOf(signedIn, destination);
      const token = signedIn.accessToken;
      let sent: v.InferOutput<typeof SendAnswer>['data'][number];
      try {
        const answer = await fetchJson(`${this.#apiUrl}/chat/messages`, {
          method: 'POST',
          headers: { 'Client-Id': signedIn.clientId, Authorization: `Bearer ${token}` },
          json: { broadcaster_id: broadcasterId, sender_id: signedIn.userId, message: text },
          schema: SendAnswer,
          timeoutMs: this.#timeoutMs,
          secrets: [token],
          service: "Twitch's API",
          fetch: this.#fetch,
        });
        sent = answer.value.data[0] as (typeof answer.value.data)[number];
      } catch (err) {
        if (!(err instanceof FetchError)) throw err;
        if (err.status === 401 && !/missing scope/i.test(twitchReason(err)) && !renewed) {
          // An access token Twitch no longer takes: renewed once, then tried again.
          renewed = true;
          current.invalidate();
          continue;
        }
        throw this.#failure(err, signedIn, destination);
      }
      if (!sent.is_sent) {
        const drop = sent.drop_reason;
        throw new ChatSendError(
          `Twitch did not send the message: ${drop ? `${drop.message} (${drop.code})` : 'no reason given'}`,
          200,
        );
      }
      return sent.message_id ? { messageId: sent.message_id } : {};
    }
  }

  /** A refusal in words a streamer acts on. */
  #failure(err: FetchError, signedIn: TwitchTokens, destination: ChatDestination): ChatSendError {
    const status = err.status;
    const said = twitchReason(err);
    if (status === undefined) return new ChatSendError(err.message, 0);
    if (status === 401) {
      if (/missing scope/i.test(said)) {
        this.#refused = TWITCH_RENEW_FOR_CHAT;
        return new ChatSendError(TWITCH_RENEW_FOR_CHAT, 401);
      }
      return new ChatSendError(
        `Twitch refused the sign-in (expired or revoked: ${said}): ${SIGN_IN_AGAIN}`,
        401,
      );
    }
    if (status === 403) {
      const channel = this.#options.eventChannel();
      const where = destination === 'event' && channel ? `${channel}'s chat` : 'this chat';
      return new ChatSendError(
        `Twitch does not let ${signedIn.login} write in ${where} (banned or timed out there, or a scope is missing): ${said}`,
        403,
      );
    }
    if (status === 429) {
      const waitMs = rateLimitWait(err);
      return new ChatSendError(
        `Twitch's chat limit is used up: the next message may go in ${formatWait(waitMs)}`,
        429,
        waitMs,
      );
    }
    if (status === 422) return new ChatSendError(`Twitch refused the message as too long: ${said}`, 422);
    if (status >= 500) return new ChatSendError(`Twitch's API failed (HTTP ${status}): ${said}`, status);
    return new ChatSendError(`Twitch refused the message (HTTP ${status}): ${said}`, status);
  }
}

export function createTwitchChatSender(options: TwitchChatSenderOptions): TwitchChatSender {
  return new TwitchChatSender(options);
}

/** Twitch's own message in an error answer, else the status. */
function twitchReason(err: FetchError): string {
  const parsed = parseWith(ErrorAnswer, err.body);
  return parsed.ok && parsed.value.message ? parsed.value.message : `HTTP ${err.status}`;
}

/** How long a 429 asks to wait: Ratelimit-Reset (epoch seconds), else Retry-After, else 30 s. */
function rateLimitWait(err: FetchError): number {
  const reset = Number(err.headers?.get('ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - Date.now());
  return err.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
}
