// A stand-in for one platform's chat sender: records what it was asked to send, answers as the test says
// (a message id, a refusal, a 429 with a wait, a throw), and can say it cannot send now.
import {
  type ChatDestination,
  type ChatPlatform,
  ChatSendError,
  type ChatSender,
  type ChatSent,
} from '../../../daemon/src/chat/types.js';

export interface FakeChatSender extends ChatSender {
  /** Every text it was asked to send, in order. */
  sent: { text: string; destination: ChatDestination }[];
  /** Why it cannot send now (undefined: it can). */
  why: string | undefined;
  name: string | undefined;
  /** How it answers the next sends; by default a message id `m1`, `m2`, … */
  answer: (text: string, n: number) => Promise<ChatSent>;
}

export function fakeChatSender(
  platform: ChatPlatform,
  name: string | undefined = 'streamer',
): FakeChatSender {
  const sender: FakeChatSender = {
    platform,
    sent: [],
    why: undefined,
    name,
    answer: async (_text, n) => ({ messageId: `m${n}` }),
    unavailable: () => sender.why,
    senderName: () => sender.name,
    send(text, destination) {
      sender.sent.push({ text, destination });
      return sender.answer(text, sender.sent.length);
    },
  };
  return sender;
}

/** A platform's refusal, as a sender rejects with it. */
export function refusal(message: string, status = 400, retryAfterMs?: number): ChatSendError {
  return new ChatSendError(message, status, retryAfterMs);
}
