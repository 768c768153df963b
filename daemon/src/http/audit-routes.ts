// The audit of paired devices (decisions-3 §11): `GET /api/audit?after=<id>&limit=<≤500>` (admin key),
// oldest first after `after`; a bad query names its field.
import type { Polka, Request } from 'polka';
import * as v from 'valibot';
import { type AuditPage, parseWith } from '../../../shared/protocol/index.js';
import type { AuditLog } from '../devices/audit.js';
import { sendError, sendJson } from './responses.js';

/** A whole number in a query string. */
const wholeNumber = (max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,15}$/, 'must be a whole number'),
    v.transform(Number),
    v.maxValue(max, `must be at most ${max}`),
  );

const AuditQuery = v.object({
  after: v.optional(wholeNumber(Number.MAX_SAFE_INTEGER)),
  limit: v.optional(v.pipe(wholeNumber(500), v.minValue(1, 'must be at least 1')), '100'),
});

/** The query string as one value per name (a repeated name is refused by the schema's types). */
function queryOf(req: Request): Record<string, unknown> {
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const out: Record<string, unknown> = {};
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    out[key] = all.length === 1 ? all[0] : all;
  }
  return out;
}

export function mountAuditRoutes(app: Polka, audit: AuditLog): void {
  app.get('/api/audit', (req, res) => {
    const query = parseWith(AuditQuery, queryOf(req));
    if (!query.ok) return sendError(res, 'bad_request', query.error);
    const page: AuditPage = audit.list(query.value.after, query.value.limit);
    sendJson(res, 200, page, { 'Cache-Control': 'no-store' });
  });
}
