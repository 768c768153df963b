// A member's Kick account at the Gatekeeper: linking it (`POST /kick/connect`), where it stands
// (`GET /kick/status`) and chat sent as the member to their own channel (`POST /kick/chat`).
import * as v from 'valibot';

/** `POST /kick/connect` → the Kick page where the member allows the Gatekeeper in. */
export const KickConnectAnswer = v.object({ url: v.pipe(v.string(), v.url()) });
export type KickConnectAnswer = v.InferOutput<typeof KickConnectAnswer>;

/** `GET /kick/status`: the channel linked and since when (ISO 8601). */
export const KickStatus = v.object({
  connected: v.boolean(),
  channel: v.optional(v.string()),
  since: v.optional(v.pipe(v.string(), v.isoTimestamp())),
});
export type KickStatus = v.InferOutput<typeof KickStatus>;

/** Kick's own limit on one chat message, in Unicode code points. */
export const KICK_CHAT_MAX_CODE_POINTS = 500;
const CONTROL_CHARACTER = /\p{Cc}/u;
const codePoints = (text: string) => [...text].length;

/** `POST /kick/chat`: the text, trimmed, 1–500 code points, no control characters (no line breaks). */
export const KickChatRequest = v.object({
  content: v.pipe(
    v.string(),
    v.trim(),
    v.check((text) => codePoints(text) >= 1, 'must not be empty'),
    v.check(
      (text) => codePoints(text) <= KICK_CHAT_MAX_CODE_POINTS,
      `must be at most ${KICK_CHAT_MAX_CODE_POINTS} characters (Unicode code points)`,
    ),
    v.check((text) => !CONTROL_CHARACTER.test(text), 'must not contain control characters or line breaks'),
  ),
});
export type KickChatRequest = v.InferOutput<typeof KickChatRequest>;

/** `POST /kick/chat` → sent; Kick's id of the message when it gave one (the echo from chat carries it). */
export const KickChatAnswer = v.object({ sent: v.literal(true), messageId: v.optional(v.string()) });
export type KickChatAnswer = v.InferOutput<typeof KickChatAnswer>;
