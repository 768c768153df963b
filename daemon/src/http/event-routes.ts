// POST /api/events: a stream event from a tool or the test panel, through the ingest seam; answered once
// it is in the journal.
import type { Polka } from 'polka';
import * as v from 'valibot';
import { type EventReceipt, parseWith, StreamEvent } from '../../../shared/protocol/index.js';
import { type Ingest, type IngestReport, JournalWriteError } from '../ingest/ingest.js';
import { readJson } from './body.js';
import { sendError, sendJson } from './responses.js';

/** `?at=` of `POST /api/events`: milliseconds since the epoch, or an ISO 8601 time. */
const EventTimeQuery = v.pipe(
  v.string(),
  v.maxLength(64),
  v.transform((text) => (/^\d{1,15}$/.test(text) ? Number(text) : Date.parse(text))),
  v.check((ms) => Number.isFinite(ms), 'must be a time: milliseconds since the epoch or ISO 8601'),
);

export function mountEventRoutes(app: Polka, ctx: { ingest: Ingest }): void {
  app.post('/api/events', async (req, res) => {
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    // `?test=true`: a test event (the test panel, the `event` command), marked in the journal.
    const test = query.get('test');
    if (test !== null && test !== 'true') return sendError(res, 'bad_request', 'test: must be true');
    // `?at=`: when it happened (a tool passing on what it kept); one more than 5 minutes old is caught up.
    const atText = query.get('at');
    const at = atText === null ? undefined : parseWith(EventTimeQuery, atText);
    if (at && !at.ok) return sendError(res, 'bad_request', `at: ${at.error}`);
    const event = await readJson(req, res, StreamEvent);
    if (!event) return;
    let report: IngestReport;
    try {
      report = ctx.ingest(event, {
        requireJournal: true,
        test: test === 'true',
        ...(at?.ok ? { at: at.value } : {}),
      });
    } catch (err) {
      if (err instanceof JournalWriteError) return sendError(res, 'unavailable', err.message);
      throw err;
    }
    sendJson(res, 202, { accepted: true, ...report } satisfies EventReceipt);
  });
}
