// Viewers' text as the platforms send it, made safe to keep and show: cut to a limit without splitting a
// character, and well-formed (no lone surrogate, which strict JSON readers refuse).

/**
 * At most `max` UTF-16 units (the unit the schemas' limits count), never splitting a character: a
 * surrogate pair (an emoji, most of them) is kept whole or left out whole.
 */
export function cutText(value: string, max: number): string {
  if (value.length <= max) return value;
  let end = Math.max(0, max);
  const last = value.charCodeAt(end - 1);
  // The first half of a pair whose second half falls beyond the limit goes with it.
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return value.slice(0, end);
}

/** A surrogate with no partner: a high one not followed by a low one, or a low one with no high before it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `value` with every lone surrogate replaced by U+FFFD (the replacement character). */
export function wellFormedText(value: string): string {
  return value.replace(LONE_SURROGATE, '\ufffd');
}

/**
 * `value` (a JSON value) with every string in it well-formed, keys included; the same object when there
 * was nothing to mend.
 */
export function wellFormedJson<T>(value: T): T {
  return mend(value) as T;
}

function mend(value: unknown): unknown {
  if (typeof value === 'string') return wellFormedText(value);
  if (Array.isArray(value)) {
    const items = value.map(mend);
    return items.every((item, i) => item === value[i]) ? value : items;
  }
  if (value !== null && typeof value === 'object') {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const next: [string, unknown] = [wellFormedText(key), mend(item)];
      if (next[0] !== key || next[1] !== item) changed = true;
      return next;
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}

/**
 * Whether a text made by `JSON.stringify` holds a lone surrogate: it writes one as a `\udXXX` escape,
 * and a character as itself. (A viewer who typed a backslash and `ud800` makes this say yes too; mending
 * such a text changes nothing.)
 */
export const jsonHasLoneSurrogate = (json: string): boolean => /\\ud[89a-f][0-9a-f]{2}/i.test(json);
