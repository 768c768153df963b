// Chat sent as the member to their own Kick channel (decisions-3 §12): through the Gatekeeper,
// `POST /kick/chat {content}` with the licence, which holds the Kick link and calls Kick's chat API.
// Nothing is tried without a licence or while the events feed knows Kick is not linked.
import { ErrorBody } from '../../../../shared/protocol/errors.js';
import { parseWith } from '../../../../shared/protocol/index.js';
import { KickChatAnswer } from '../../../../shared/protocol/kick-account.js';
import { formatWait } from '../../../../shared/timers.js';
import { chatText } from '../../chat/cut.js';
import { type ChatDestination, ChatSendError, type ChatSender, type ChatSent } from '../../chat/types.js';
import { FetchError, fetchJson, redact } from '../../http-client/fetch-json.js';
import type { KickEdgeLicence, KickEdgeStatus } from './edge-events.js';

export interface KickChatSenderOptions {
  /** The Gatekeeper's origin (the one licences are validated with). */
  gatekeeperUrl: string;
  /** The licence in force (any tier): its JWT is the Bearer of every send. */
  licence: Pick<KickEdgeLicence, 'record' | 'refresh' | 'status'>;
  /**
   * The Kick link as the events feed last learnt it (parts/kick-edge.ts's `feed.status()`). Without it,
   * the Gatekeeper's answer to each send says whether Kick is linked.
   */
  link?: () => Pick<KickEdgeStatus, 'state' | 'channel'> | undefined;
  fetch?: typeof fetch;
  /** Per request (default 15 s). */
  timeoutMs?: number;
}

/** When the Gatekeeper says "too many" without Retry-After: Kick's chat limit is counted over 30 s. */
const DEFAULT_RETRY_AFTER_MS = 30_000;
const LINK_KICK = 'link Kick in Sources (overlay-daemon connect kick)';
const SIGN_IN = 'sign in (overlay-daemon login)';

export function createKickChatSender(options: KickChatSenderOptions): ChatSender {
  const url = `${options.gatekeeperUrl.replace(/\/+$/, '')}/kick/chat`;

  function unavailable(): string | undefined {
    if (!options.licence.record()?.token) return `no licence: ${SIGN_IN}, then ${LINK_KICK}`;
    if (options.licence.status?.().state === 'invalid')
      return `the Gatekeeper rejected the licence: ${SIGN_IN} again`;
    const state = options.link?.()?.state;
    if (state === 'not_connected') return `Kick is not linked: ${LINK_KICK}`;
    return undefined;
  }

  async function post(token: string, content: string): Promise<KickChatAnswer> {
    const answer = await fetchJson(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      json: { content },
      schema: KickChatAnswer,
      timeoutMs: options.timeoutMs ?? 15_000,
      secrets: [token],
      service: 'the Gatekeeper',
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    return answer.value;
  }

  async function send(text: string, _destination: ChatDestination): Promise<ChatSent> {
    // Kick takes one line without control characters: the chat action's own cut makes it so, here too
    // for a caller that did not cut.
    const content = chatText(text, 'kick');
    if (!content) throw new ChatSendError('the message is empty', 0);
    const reason = unavailable();
    if (reason) throw new ChatSendError(reason, 0);
    let token = options.licence.record()?.token as string;
    let refreshed = false;
    for (;;) {
      try {
        const answer = await post(token, content);
        return answer.messageId ? { messageId: answer.messageId } : {};
      } catch (err) {
        if (!(err instanceof FetchError)) throw err;
        if (err.status === 401 && !refreshed) {
          // A licence the Gatekeeper no longer takes: a fresh one, then once more.
          refreshed = true;
          await options.licence.refresh().catch(() => undefined);
          const fresh = options.licence.record()?.token;
          if (fresh && fresh !== token) {
            token = fresh;
            continue;
          }
        }
        throw failure(err, token);
      }
    }
  }

  return {
    platform: 'kick',
    unavailable,
    senderName: () => options.link?.()?.channel,
    send,
  };
}

/** The Gatekeeper's refusal in words a streamer acts on. */
function failure(err: FetchError, token: string): ChatSendError {
  const status = err.status;
  if (status === undefined || err.code === 'bad_response') return new ChatSendError(err.message, status ?? 0);
  const parsed = parseWith(ErrorBody, err.body);
  const said = parsed.ok ? redact(parsed.value.error.message, [token]) : `HTTP ${status}`;
  switch (status) {
    case 401:
      return new ChatSendError(`the Gatekeeper refused the licence (${said}): ${SIGN_IN} again`, 401);
    case 403:
      return new ChatSendError(`the Gatekeeper does not let this licence send Kick chat: ${said}`, 403);
    case 409:
      return new ChatSendError(
        `Kick is not linked or no longer accepts the link (${said}): ${LINK_KICK}`,
        409,
      );
    case 429: {
      const waitMs = err.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
      return new ChatSendError(
        `Kick's chat limit is used up: the next message may go in ${formatWait(waitMs)}`,
        429,
        waitMs,
      );
    }
    case 400:
      return new ChatSendError(`the Gatekeeper refused the message: ${said}`, 400);
    default:
      return new ChatSendError(
        status >= 500
          ? `Kick did not take the message (HTTP ${status}): ${said}`
          : `the Gatekeeper answered HTTP ${status}: ${said}`,
        status,
      );
  }
}
