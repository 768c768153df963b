// Each platform's send limit (the platform table's), kept by the daemon (decisions-3 §12): Twitch 20 per
// 30 s, Kick 20 per 30 s, YouTube 1 per 2 s. A burst sends what the window allows at once, one message after the other as the
// platform answers; behind those at most 20 per platform wait for the window (the oldest of them dropped
// past that), a send that waited more than 60 s is dropped, and a 429 pauses that platform's queue for as
// long as the platform asked. Each send settles when it was sent or dropped, which is when its log entry is written.
import { type ChatLimits, PLATFORM_NAMES, PLATFORM_TABLE } from '../../../shared/platforms.js';
import type { TimerHandle, Timers } from '../../../shared/timers.js';
import { errorMessage } from '../errors.js';
import type { ChatEcho } from './echo.js';
import {
  type ChatDestination,
  type ChatPlatform,
  ChatSendError,
  type ChatSender,
  type ChatSent,
} from './types.js';

/** Sends allowed within `perMs`. */
type ChatSendLimit = ChatLimits['send'];

/** Messages one platform's queue holds waiting; past that the oldest is dropped. */
export const CHAT_QUEUE_SIZE = 20;
/** A message that waited longer than this is dropped: an answer a minute late answers nothing. */
export const CHAT_MAX_WAIT_MS = 60_000;

interface Waiting {
  sender: ChatSender;
  text: string;
  destination: ChatDestination;
  queuedAt: number;
  sent: (sent: ChatSent) => void;
  failed: (err: Error) => void;
}

interface PlatformQueue {
  platform: ChatPlatform;
  limit: ChatSendLimit;
  waiting: Waiting[];
  /** When the sends within the last window started, oldest first. */
  sentAt: number[];
  /** A send is under way: the next waits for its answer (a 429 puts it back first). */
  busy: boolean;
  /** No send before this (a 429's wait). */
  pausedUntil: number;
  timer: TimerHandle | undefined;
}

interface ChatSendQueueOptions {
  timers: Timers;
  log?: ((line: string) => void) | undefined;
  /** Told of every message as it is sent, so its echo is recognised. */
  echo?: ChatEcho | undefined;
  /** The send limits, the platform table's unless given (tests may shorten them). */
  limits?: { readonly [P in ChatPlatform]: ChatSendLimit } | undefined;
}

export class ChatSendQueue {
  readonly #clock: Timers;
  readonly #log: (line: string) => void;
  readonly #echo: ChatEcho | undefined;
  readonly #queues = new Map<ChatPlatform, PlatformQueue>();
  readonly #limits: { readonly [P in ChatPlatform]: ChatSendLimit } | undefined;
  #closed = false;

  constructor(options: ChatSendQueueOptions) {
    this.#clock = options.timers;
    this.#log = options.log ?? (() => {});
    this.#echo = options.echo;
    this.#limits = options.limits;
  }

  /**
   * Sends `text` (already cut) with `sender` once its platform's limit allows: resolves with the
   * platform's answer, rejects with the platform's refusal (a ChatSendError) or with `dropped: …`.
   */
  send(sender: ChatSender, text: string, destination: ChatDestination): Promise<ChatSent> {
    const name = PLATFORM_NAMES[sender.platform];
    if (this.#closed) return Promise.reject(new Error('not sent: the daemon is stopping'));
    const queue = this.#queue(sender.platform);
    return new Promise<ChatSent>((sent, failed) => {
      queue.waiting.push({ sender, text, destination, queuedAt: this.#clock.now(), sent, failed });
      // The first `budget` messages go within the current window, one after the other as the platform
      // answers: they are not "waiting for the limit". Of those behind them at most 20 wait, the oldest
      // of them dropped past that.
      const budget = queue.pausedUntil > this.#clock.now() ? 0 : this.#windowRoom(queue);
      const { count, perMs } = queue.limit;
      while (queue.waiting.length > budget + CHAT_QUEUE_SIZE) {
        const [oldest] = queue.waiting.splice(budget, 1);
        this.#drop(
          oldest,
          `more than ${CHAT_QUEUE_SIZE} ${name} messages were waiting beyond its send limit ` +
            `(${count} per ${perMs / 1000} s)`,
        );
      }
      this.#pump(queue);
    });
  }

  /** How many messages wait for `platform`. */
  waiting(platform: ChatPlatform): number {
    return this.#queues.get(platform)?.waiting.length ?? 0;
  }

  /** Shutdown: every waiting message is dropped, nothing more is sent. */
  close(): void {
    this.#closed = true;
    for (const queue of this.#queues.values()) {
      if (queue.timer) this.#clock.clearTimeout(queue.timer);
      queue.timer = undefined;
      for (const waiting of queue.waiting.splice(0))
        waiting.failed(new Error('not sent: the daemon is stopping'));
    }
  }

  #queue(platform: ChatPlatform): PlatformQueue {
    let queue = this.#queues.get(platform);
    if (!queue) {
      queue = {
        platform,
        limit: this.#limits?.[platform] ?? PLATFORM_TABLE[platform].chat.send,
        waiting: [],
        sentAt: [],
        busy: false,
        pausedUntil: 0,
        timer: undefined,
      };
      this.#queues.set(platform, queue);
    }
    return queue;
  }

  /** How many more sends the platform's window allows now. */
  #windowRoom(queue: PlatformQueue): number {
    const now = this.#clock.now();
    const { count, perMs } = queue.limit;
    while (queue.sentAt.length > 0 && now - (queue.sentAt[0] ?? now) >= perMs) queue.sentAt.shift();
    return Math.max(0, count - queue.sentAt.length);
  }

  #drop(waiting: Waiting | undefined, why: string): void {
    if (!waiting) return;
    const name = PLATFORM_NAMES[waiting.sender.platform];
    this.#log(`[chat] ${name}: a message was dropped unsent: ${why}`);
    waiting.failed(new Error(`dropped: ${why}`));
  }

  /** Sends the next message when the limit allows, else wakes up when it will (or when one expires). */
  #pump(queue: PlatformQueue): void {
    if (this.#closed) return;
    if (queue.timer) this.#clock.clearTimeout(queue.timer);
    queue.timer = undefined;
    const now = this.#clock.now();
    // Waiting messages are in the order they came, so those that waited too long are at the head.
    while (queue.waiting[0] && now - queue.waiting[0].queuedAt > CHAT_MAX_WAIT_MS)
      this.#drop(
        queue.waiting.shift(),
        `it waited more than ${CHAT_MAX_WAIT_MS / 1000} s for ${PLATFORM_NAMES[queue.platform]}'s send limit`,
      );
    const head = queue.waiting[0];
    if (!head) return;
    const expiresAt = head.queuedAt + CHAT_MAX_WAIT_MS + 1;
    const wake = (at: number) => {
      queue.timer = this.#clock.setTimeout(() => {
        queue.timer = undefined;
        this.#pump(queue);
      }, at - now);
    };
    // A send under way that takes long still lets the messages behind it go at 60 s.
    if (queue.busy) {
      wake(expiresAt);
      return;
    }
    const { perMs } = queue.limit;
    const windowFree = this.#windowRoom(queue) > 0 ? now : (queue.sentAt[0] ?? now) + perMs;
    const readyAt = Math.max(windowFree, queue.pausedUntil);
    if (readyAt > now) {
      wake(Math.min(readyAt, expiresAt));
      return;
    }
    queue.waiting.shift();
    queue.busy = true;
    queue.sentAt.push(now);
    void this.#sendOne(queue, head).finally(() => {
      queue.busy = false;
      this.#pump(queue);
    });
  }

  async #sendOne(queue: PlatformQueue, waiting: Waiting): Promise<void> {
    const { sender, text, destination } = waiting;
    let senderName: string | undefined;
    try {
      senderName = sender.senderName();
    } catch {
      senderName = undefined;
    }
    const mark = this.#echo?.sending(queue.platform, text, senderName);
    try {
      const sent = await sender.send(text, destination);
      mark?.sent(sent?.messageId);
      waiting.sent(sent ?? {});
    } catch (err) {
      mark?.failed();
      if (err instanceof ChatSendError && err.status === 429 && !this.#closed) {
        // The platform says to wait: this queue pauses, and the message goes first once it may.
        const waitMs = err.retryAfterMs ?? queue.limit.perMs;
        queue.pausedUntil = Math.max(queue.pausedUntil, this.#clock.now() + waitMs);
        this.#log(
          `[chat] ${PLATFORM_NAMES[queue.platform]} asked to wait ${Math.ceil(waitMs / 1000)} s before sending more`,
        );
        queue.waiting.unshift(waiting);
        return;
      }
      waiting.failed(err instanceof Error ? err : new Error(errorMessage(err)));
    }
  }
}
