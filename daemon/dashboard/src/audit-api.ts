// Client of `GET /api/audit` (decisions-3 §11): the changes paired devices made, a page at a time.
import { type AuditEntry, AuditPage, parseWith } from '../../../shared/protocol/index.js';
import { ApiError, type ControlApi } from './api.js';

/** The most entries the daemon answers in one page. */
export const AUDIT_PAGE_MAX = 500;
/** The daemon keeps 10,000 entries: 20 full pages. A few more in case entries arrive while reading. */
const PAGES_MAX = 25;

/** One page: entries after the id `after` (from the oldest when undefined), oldest first. */
export async function auditPage(
  api: ControlApi,
  after: number | undefined,
  limit = AUDIT_PAGE_MAX,
): Promise<AuditPage> {
  const query = new URLSearchParams({ limit: String(limit) });
  if (after !== undefined) query.set('after', String(after));
  const parsed = parseWith(AuditPage, await api.request(`/api/audit?${query}`));
  if (!parsed.ok)
    throw new ApiError(0, 'unexpected_response', `Unexpected answer from /api/audit: ${parsed.error}`);
  return parsed.value;
}

/**
 * Every entry after `after` (all of them when undefined), oldest first, following each page's `next`;
 * `last` is the `after` that asks for what comes since.
 */
export async function auditSince(
  api: ControlApi,
  after: number | undefined,
): Promise<{ entries: AuditEntry[]; last: number | undefined }> {
  const entries: AuditEntry[] = [];
  let cursor = after;
  for (let pages = 0; pages < PAGES_MAX; pages++) {
    const page = await auditPage(api, cursor);
    entries.push(...page.entries);
    if (page.next === null) break;
    cursor = page.next;
  }
  return { entries, last: entries.at(-1)?.id ?? after };
}
