// The audit of paired devices (decisions-3 §11): `GET /api/audit?after=<id>&limit=<≤500>` (admin key),
// oldest first after `after`; a bad query names its field.
import type { Polka } from 'polka';
import * as v from 'valibot';
import { type AuditPage, parseWith } from '../../../shared/protocol/index.js';
import type { AuditLog } from '../devices/audit.js';
import { pageLimit, queryOf, wholeNumber } from './query.js';
import { sendError, sendJson } from './responses.js';

const AuditQuery = v.object({
  after: v.optional(wholeNumber(Number.MAX_SAFE_INTEGER)),
  limit: v.optional(pageLimit(500), '100'),
});

export function mountAuditRoutes(app: Polka, audit: AuditLog): void {
  app.get('/api/audit', (req, res) => {
    const query = parseWith(AuditQuery, queryOf(req));
    if (!query.ok) return sendError(res, 'bad_request', query.error);
    const page: AuditPage = audit.list(query.value.after, query.value.limit);
    sendJson(res, 200, page, { 'Cache-Control': 'no-store' });
  });
}
