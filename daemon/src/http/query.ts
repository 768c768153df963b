// The query string of a GET route, read for its valibot schema: one value per name, and the pieces the
// paged lists (`after`, `limit`) check their numbers with.
import type { Request } from 'polka';
import * as v from 'valibot';

/** A whole number in a query string. */
export const wholeNumber = (max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,15}$/, 'must be a whole number'),
    v.transform(Number),
    v.maxValue(max, `must be at most ${max}`),
  );

/** How many a page holds: a whole number from 1 to `max`. */
export const pageLimit = (max: number) => v.pipe(wholeNumber(max), v.minValue(1, 'must be at least 1'));

/** The query string as one value per name (a repeated name is refused by the schema's types). */
export function queryOf(req: Request): Record<string, unknown> {
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const out: Record<string, unknown> = {};
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    out[key] = all.length === 1 ? all[0] : all;
  }
  return out;
}
