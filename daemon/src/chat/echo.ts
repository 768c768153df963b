// Chat the daemon itself sent comes back from the platform as chat; it is not an event (decisions-3 §12):
// no rules, no points, no leaderboard. A message is recognised by the id the platform returned, else by
// its sender and text within 30 s of the send.
import type { StreamEvent } from '../../../shared/protocol/index.js';
import type { ChatPlatform } from './types.js';

/** How long a sent message is recognised by its sender and text. */
export const ECHO_TEXT_MS = 30_000;
/** How long a sent message is recognised by its id (a platform's delivery can lag). */
export const ECHO_ID_MS = 5 * 60_000;
/** Sent messages remembered at most (three platforms' send limits allow far fewer in five minutes). */
const KEPT = 500;

interface Sent {
  platform: ChatPlatform;
  messageId: string | undefined;
  /** The signed-in account's name, lowercased, when known. */
  sender: string | undefined;
  /** The text as sent, whitespace folded. */
  text: string;
  at: number;
}

/** A sent message, until its answer comes: `sent` adds the id the platform returned, `failed` forgets it. */
export interface EchoMark {
  sent(messageId: string | undefined): void;
  failed(): void;
}

/** Spaces folded, so the platform's own trimming and spacing do not hide the echo. */
function fold(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export class ChatEcho {
  readonly #now: () => number;
  /** Oldest first. */
  #sent: Sent[] = [];

  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * Remembers a message as it is sent: its echo can arrive before the platform's answer does, so it is
   * recognised by sender and text from now on, and by id once `sent` gives one.
   */
  sending(platform: ChatPlatform, text: string, sender: string | undefined): EchoMark {
    this.#forgetOld();
    const entry: Sent = {
      platform,
      messageId: undefined,
      sender: sender?.trim().toLowerCase() || undefined,
      text: fold(text),
      at: this.#now(),
    };
    this.#sent.push(entry);
    if (this.#sent.length > KEPT) this.#sent.shift();
    return {
      sent: (messageId) => {
        entry.messageId = messageId || undefined;
      },
      failed: () => {
        this.#sent = this.#sent.filter((e) => e !== entry);
      },
    };
  }

  /** Whether `event` is chat this daemon sent; an echo is recognised once. */
  isEcho(event: StreamEvent): boolean {
    if (event.type !== 'chat' || this.#sent.length === 0) return false;
    this.#forgetOld();
    const now = this.#now();
    const id = (event.data as { messageId?: unknown }).messageId;
    if (typeof id === 'string' && id !== '') {
      const byId = this.#sent.findIndex((e) => e.platform === event.platform && e.messageId === id);
      if (byId !== -1) {
        this.#sent.splice(byId, 1);
        return true;
      }
    }
    const comment = fold(event.data.comment);
    if (!comment) return false;
    const who = [event.user.uniqueId.toLowerCase(), event.user.nickname.trim().toLowerCase()];
    const byText = this.#sent.findIndex(
      (e) =>
        e.platform === event.platform &&
        now - e.at <= ECHO_TEXT_MS &&
        e.sender !== undefined &&
        who.includes(e.sender) &&
        // A source cuts comments at 500 UTF-16 units: the start of a longer message is its echo too.
        (e.text === comment || (comment.length >= 500 && e.text.startsWith(comment))),
    );
    if (byText === -1) return false;
    this.#sent.splice(byText, 1);
    return true;
  }

  #forgetOld(): void {
    const now = this.#now();
    let old = 0;
    while (old < this.#sent.length && now - (this.#sent[old]?.at ?? now) > ECHO_ID_MS) old++;
    if (old > 0) this.#sent.splice(0, old);
  }
}
