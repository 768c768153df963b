// Chat sent as the member to their own Kick channel, through Kick's public chat API.
import type { KickChatAnswer } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { KickApiError, postChat } from './api.js';
import { withKickToken } from './tokens.js';

/** When Kick says "too many" without saying for how long: its chat limit is counted over 30 s. */
const DEFAULT_RETRY_AFTER_SECONDS = 30;

/**
 * Sends `content` (already checked: 1–500 code points, no control characters) with `type: "user"` to the
 * broadcaster user id of the member's link. Kick's 401 means one refresh and one more try (tokens.ts);
 * its 429 is passed on with Retry-After; anything else Kick refuses is a 502 naming its status.
 */
export async function sendKickChat(
  env: GatekeeperEnv,
  member: string,
  content: string,
): Promise<KickChatAnswer> {
  let answer: { sent: boolean; messageId?: string };
  try {
    answer = await withKickToken(env, member, (token, link) =>
      postChat(env, token, link.broadcaster_user_id, content),
    );
  } catch (err) {
    if (!(err instanceof KickApiError)) throw err;
    if (err.status === 429) {
      throw new ApiError(
        'rate_limited',
        'Kick refused the message: too many chat messages; try again later',
        {
          'Retry-After': String(err.retryAfter ?? DEFAULT_RETRY_AFTER_SECONDS),
        },
      );
    }
    console.error(`kick: chat of ${member} failed: ${err.message}`);
    throw new ApiError(
      'upstream_error',
      err.status === 0 ? 'Kick did not answer; try again' : `Kick refused the message (HTTP ${err.status})`,
    );
  }
  if (!answer.sent) throw new ApiError('upstream_error', 'Kick did not send the message');
  return { sent: true, ...(answer.messageId ? { messageId: answer.messageId } : {}) };
}
