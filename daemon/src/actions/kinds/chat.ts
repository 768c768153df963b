// `chat`: a message as the streamer on the event's platform (`same`), one platform, or every platform that
// can send now (`all`), cut to each platform's limit and sent through its send queue (decisions-3 §12).
// An action that cannot send is skipped in words, never failed; a platform that refused fails it.

import { PLATFORM_NAMES, PLATFORM_TABLE } from '../../../../shared/platforms.js';
import type { ChatPreview } from '../../../../shared/protocol/index.js';
import { chatText, cutTo } from '../../chat/cut.js';
import type { ChatSenders } from '../../chat/senders.js';
import { CHAT_PLATFORMS, type ChatPlatform, type ChatSender } from '../../chat/types.js';
import { errorMessage } from '../../errors.js';
import { type ActionOf, ActionSkipped, type ExecutorFactory } from './types.js';

export const NO_TIKTOK_CHAT = `${PLATFORM_NAMES.tiktok} does not allow sending chat`;
export const NO_CHAT_TO_ANSWER = 'this event has no chat to answer';
const EMPTY = 'the text is empty once filled in';
const TEST = 'a rule test sends no chat';

/** One platform a chat action writes on: its sender and the text cut for it, or why it cannot. */
interface Target {
  platform: ChatPlatform;
  text: string;
  sender?: ChatSender;
  skipped?: string;
}

/** Where a chat action goes: its targets, or why it goes nowhere. */
type Plan = { targets: Target[] } | { skipped: string };

function isChatPlatform(platform: string | undefined): platform is ChatPlatform {
  return (CHAT_PLATFORMS as readonly (string | undefined)[]).includes(platform);
}

/** Why `sender` cannot send now, in words; undefined when it may try. */
function unavailable(platform: ChatPlatform, sender: ChatSender | undefined): string | undefined {
  if (!sender) return `sending chat to ${PLATFORM_NAMES[platform]} is not set up`;
  try {
    return sender.unavailable();
  } catch (err) {
    return `${PLATFORM_NAMES[platform]} could not say whether it can send: ${errorMessage(err)}`;
  }
}

function target(platform: ChatPlatform, rendered: string, senders: ChatSenders | undefined): Target {
  const text = chatText(rendered, platform);
  const sender = senders?.get(platform);
  const why = text === '' ? EMPTY : unavailable(platform, sender);
  return why === undefined && sender ? { platform, text, sender } : { platform, text, skipped: why ?? EMPTY };
}

/** Resolves the platforms of `action` and cuts its text for each. */
export function planChat(action: ActionOf<'chat'>, senders: ChatSenders | undefined): Plan {
  const where = action.platform === 'same' ? action.from : action.platform;
  if (where === 'tiktok') return { skipped: NO_TIKTOK_CHAT };
  if (where !== 'all' && !isChatPlatform(where)) return { skipped: NO_CHAT_TO_ANSWER };
  if (where !== 'all') return { targets: [target(where, action.text, senders)] };
  // `all`: every platform whose sender can send now; the others are left out, not skipped.
  const all = CHAT_PLATFORMS.map((platform) => target(platform, action.text, senders));
  const ready = all.filter((t) => t.skipped === undefined);
  if (ready.length > 0) return { targets: ready };
  if (all.every((t) => t.skipped === EMPTY)) return { skipped: EMPTY };
  const reasons = all.filter((t) => senders?.get(t.platform)).map((t) => t.skipped);
  return {
    skipped:
      reasons.length === 0
        ? 'no platform is set up to send chat'
        : `no platform can send chat now: ${reasons.join('; ')}`,
  };
}

/** What a rule test shows of a chat action: the text each platform would get, and any skip. */
export function previewChat(action: ActionOf<'chat'>, senders: ChatSenders | undefined): ChatPreview[] {
  const plan = planChat(action, senders);
  if ('skipped' in plan) {
    // No platform to cut for: the text at the longest limit.
    const text = cutTo(action.text, Math.max(...CHAT_PLATFORMS.map((p) => PLATFORM_TABLE[p].chat.maxLength)));
    return [{ action: action.index, ...(text ? { text } : {}), skipped: plan.skipped }];
  }
  return plan.targets.map((t) => ({
    action: action.index,
    platform: t.platform,
    ...(t.text ? { text: t.text } : {}),
    ...(t.skipped !== undefined ? { skipped: t.skipped } : {}),
  }));
}

export const chat: ExecutorFactory<'chat'> = (services) => (action) => {
  if (action.preview) throw new ActionSkipped(TEST);
  const plan = planChat(action, services.chat?.senders);
  if ('skipped' in plan) throw new ActionSkipped(plan.skipped);
  const skipped = plan.targets.find((t) => t.skipped !== undefined);
  if (skipped?.skipped !== undefined) throw new ActionSkipped(skipped.skipped);
  const queue = services.chat?.queue;
  if (!queue) throw new ActionSkipped('sending chat is not set up');
  // `same` answers in the chat the event came from; a named platform or `all` writes in the streamer's own.
  const destination = action.platform === 'same' ? 'event' : 'own';
  const sends = plan.targets.map(({ platform, sender, text }) =>
    sender
      ? queue.send(sender, text, destination).then(
          () => undefined,
          (err: unknown) => `${PLATFORM_NAMES[platform]}: ${errorMessage(err)}`,
        )
      : undefined,
  );
  // The send waits for its platform's limit; the log entry is written once it was sent or dropped.
  const outcome = Promise.all(sends).then((results) => {
    const failed = results.filter((r): r is string => r !== undefined);
    if (failed.length > 0) throw new Error(failed.join('; '));
  });
  return { ended: Promise.resolve(), outcome };
};
