// A chat message as a platform takes it (decisions-3 §12): one line without control characters, cut to the
// platform's limit in Unicode code points with `…` as its last one when cut.
import { type ChatPlatform, PLATFORM_TABLE } from '../../../shared/platforms.js';

/** Line breaks and tabs become spaces; every other control character (C0, DEL, C1) is removed. */
const LINE_BREAKS = /\r\n|[\r\n\t\v\f\u0085\u2028\u2029]/g;
const CONTROLS = /\p{Cc}/gu;

/** The text a platform would get, or '' when nothing is left to send. */
export function chatText(rendered: string, platform: ChatPlatform): string {
  return cutTo(rendered, PLATFORM_TABLE[platform].chat.maxLength);
}

/** `rendered` cleaned and trimmed, at most `limit` code points, the last one `…` when it was cut. */
export function cutTo(rendered: string, limit: number): string {
  const clean = rendered.replace(LINE_BREAKS, ' ').replace(CONTROLS, '').trim();
  // Code points, not UTF-16 units: an emoji is one and is never split in half.
  const points = Array.from(clean);
  if (points.length <= limit) return clean;
  return `${points
    .slice(0, limit - 1)
    .join('')
    .trimEnd()}…`;
}
