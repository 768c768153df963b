// The chat senders the daemon has, one per platform: each platform's sign-in registers its sender, and the
// `chat` action asks here for the one of the platform it writes on.
import type { ChatPlatform, ChatSender } from './types.js';

export class ChatSenders {
  readonly #senders = new Map<ChatPlatform, ChatSender>();

  /** Makes `sender` its platform's (replacing the one before); the function returned takes it back. */
  register(sender: ChatSender): () => void {
    this.#senders.set(sender.platform, sender);
    return () => {
      if (this.#senders.get(sender.platform) === sender) this.#senders.delete(sender.platform);
    };
  }

  get(platform: ChatPlatform): ChatSender | undefined {
    return this.#senders.get(platform);
  }
}
