// The words the overlay shows for a stream event (alert text, event-list line), and the bounded feed they go in.
export { describeEvent } from '../../../shared/describe-event.js';

/** Appends to a bounded feed, newest last; returns the trimmed list. */
export function pushBounded<T>(list: T[], item: T, max: number): T[] {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
  return list;
}
