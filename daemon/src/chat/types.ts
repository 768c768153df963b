// What a platform's chat sender offers the `chat` action (decisions-3 §12): whether it can send now, and one send.
// Which platforms the daemon can write in, and their limits, are the platform table's.
import type { ChatPlatform } from '../../../shared/platforms.js';

export { CHAT_PLATFORMS, type ChatPlatform } from '../../../shared/platforms.js';

/**
 * Where a message goes on its platform: `event` is the chat the event came from (the channel or live
 * chat the platform's source is watching), `own` the signed-in user's own channel.
 */
export type ChatDestination = 'event' | 'own';

/** What the platform answered to a message it took. */
export interface ChatSent {
  /** The platform's id of the message, when it gives one (used to recognise the echo). */
  messageId?: string | undefined;
}

/** One platform's way of sending chat as the streamer. */
export interface ChatSender {
  readonly platform: ChatPlatform;
  /**
   * Why nothing can be sent now, in words a streamer acts on ("sign in to Twitch again: the sign-in
   * predates chat sending (user:write:chat)"); undefined when a send may be tried.
   */
  unavailable(): string | undefined;
  /** The signed-in account's name as it appears in chat (to recognise the echo), when known. */
  senderName(): string | undefined;
  /** Sends `text` (already cut to the platform's limit); rejects with a ChatSendError. */
  send(text: string, destination: ChatDestination): Promise<ChatSent>;
}

/** A send the platform refused or that never arrived; `message` is in words, secrets never in it. */
export class ChatSendError extends Error {
  constructor(
    message: string,
    /** The HTTP status the platform answered, 0 when none arrived. */
    readonly status: number,
    /** On 429: how long the platform asked to wait before the next send. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ChatSendError';
  }
}
