// The bounded feeds the overlay keeps (chat lines, event-list lines): newest last, oldest dropped.

/** Appends to a bounded feed, newest last; returns the trimmed list. */
export function pushBounded<T>(list: T[], item: T, max: number): T[] {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
  return list;
}
