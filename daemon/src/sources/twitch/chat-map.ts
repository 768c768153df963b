// Twitch chat (IRC) messages → stream events: a chat line is `chat`, a line with bits
// is a cheer (`gift {giftName: "Bits", repeatCount: bits, diamondCount: 1}`), USERNOTICE sub/resub/
// subgift/submysterygift is `subscribe`, raid is `share {viewers}`. The tags are read through one schema;
// a message that does not fit is dropped with its reason, never thrown.
import * as v from 'valibot';
import { parseWith, StreamEvent, type StreamUser } from '../../../../shared/protocol/index.js';
import { cutText } from '../../../../shared/text.js';

/** Tags every user message carries, as Twitch documents them (unknown ones pass). */
const UserTags = v.looseObject({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  'display-name': v.optional(v.string()),
  'user-id': v.optional(v.string()),
  login: v.optional(v.string()),
  bits: v.optional(v.pipe(v.string(), v.regex(/^\d{1,9}$/))),
  'msg-id': v.optional(v.string()),
});

export type ChatMapResult = { event: StreamEvent; id: string } | { drop: string };

/** What this channel's EventSub delivers: chat leaves those out, so nothing arrives twice. */
export interface EventSubCoverage {
  cheers: boolean;
  subscriptions: boolean;
  raids: boolean;
}

const NONE: EventSubCoverage = { cheers: false, subscriptions: false, raids: false };

function chatUser(login: string, displayName: string | undefined): StreamUser {
  const name = displayName?.trim() || login;
  return { uniqueId: cutText(login, 100), nickname: cutText(name, 100) };
}

/** A plan as EventSub spells it: `1000`, `2000`, `3000` (Prime counts as tier 1). */
function tier(plan: string | undefined): string | undefined {
  if (plan === 'Prime') return '1000';
  return plan && /^[123]000$/.test(plan) ? plan : undefined;
}

function count(value: string | undefined): number | undefined {
  if (!value || !/^\d{1,9}$/.test(value)) return undefined;
  const n = Number(value);
  return n > 0 ? n : undefined;
}

function finish(candidate: unknown, id: string): ChatMapResult {
  const parsed = parseWith(StreamEvent, candidate);
  return parsed.ok ? { event: parsed.value, id } : { drop: `not a valid event: ${parsed.error}` };
}

function readTags(tags: ReadonlyMap<string, string>): v.InferOutput<typeof UserTags> | string {
  const parsed = v.safeParse(UserTags, Object.fromEntries(tags));
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  return `tag ${v.getDotPath(issue) ?? '?'}: ${issue.message}`;
}

/** A PRIVMSG. A cheer is a gift from chat only while EventSub does not deliver cheers (never both). */
export function mapChatMessage(
  tags: ReadonlyMap<string, string>,
  login: string,
  text: string,
  coverage: EventSubCoverage = NONE,
): ChatMapResult {
  const read = readTags(tags);
  if (typeof read === 'string') return { drop: read };
  const user = chatUser(login, read['display-name']);
  const bits = count(read.bits);
  if (bits !== undefined) {
    if (coverage.cheers) return { drop: 'a cheer: EventSub delivers it' };
    return finish(
      {
        type: 'gift',
        platform: 'twitch',
        user,
        data: { giftName: 'Bits', repeatCount: bits, diamondCount: 1, comment: cutText(text, 500) },
      },
      read.id,
    );
  }
  return finish({ type: 'chat', platform: 'twitch', user, data: { comment: cutText(text, 500) } }, read.id);
}

/** A USERNOTICE: subs (new, resub, gifted, a gift bomb) and raids; other kinds are not events. */
export function mapUserNotice(
  tags: ReadonlyMap<string, string>,
  text: string | undefined,
  coverage: EventSubCoverage = NONE,
): ChatMapResult {
  const read = readTags(tags);
  if (typeof read === 'string') return { drop: read };
  const kind = read['msg-id'];
  const login = read.login ?? '';
  if (!login) return { drop: 'a USERNOTICE without a login tag' };
  const param = (name: string) => tags.get(`msg-param-${name}`);
  switch (kind) {
    case 'sub':
    case 'resub': {
      if (coverage.subscriptions) return { drop: 'a subscription: EventSub delivers it' };
      const months = count(param('cumulative-months'));
      const plan = tier(param('sub-plan'));
      return finish(
        {
          type: 'subscribe',
          platform: 'twitch',
          user: chatUser(login, read['display-name']),
          data: {
            ...(months ? { subMonth: months } : {}),
            ...(plan ? { tier: plan } : {}),
            ...(text ? { comment: cutText(text, 500) } : {}),
          },
        },
        read.id,
      );
    }
    case 'subgift': {
      if (coverage.subscriptions) return { drop: 'a gifted subscription: EventSub delivers it' };
      const recipient = param('recipient-user-name');
      if (!recipient) return { drop: 'a subgift without its recipient' };
      const plan = tier(param('sub-plan'));
      return finish(
        {
          type: 'subscribe',
          platform: 'twitch',
          user: chatUser(recipient, param('recipient-display-name')),
          data: { gifted: true, ...(plan ? { tier: plan } : {}) },
        },
        read.id,
      );
    }
    case 'submysterygift': {
      if (coverage.subscriptions) return { drop: 'a gift of subscriptions: EventSub delivers it' };
      const plan = tier(param('sub-plan'));
      const total = count(param('mass-gift-count'));
      const anonymous = login === 'ananonymousgifter';
      return finish(
        {
          type: 'subscribe',
          platform: 'twitch',
          user: anonymous
            ? { uniqueId: 'anonymous', nickname: 'Anonymous' }
            : chatUser(login, read['display-name']),
          data: { gifted: true, ...(total ? { giftCount: total } : {}), ...(plan ? { tier: plan } : {}) },
        },
        read.id,
      );
    }
    case 'raid': {
      if (coverage.raids) return { drop: 'a raid: EventSub delivers it' };
      const viewers = count(param('viewerCount')) ?? 0;
      return finish(
        {
          type: 'share',
          platform: 'twitch',
          user: chatUser(login, param('displayName') ?? read['display-name']),
          data: { viewers },
        },
        read.id,
      );
    }
    default:
      return { drop: `USERNOTICE ${kind ?? '(no msg-id)'} is not an event` };
  }
}
