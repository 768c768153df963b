// The journal's routes: events after a seq, stream sessions with their totals, one session as CSV
// (streamed), its minutes, leaderboards, and the removal of test events. Queries are checked by one
// schema each; a bad one names its field.
import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Polka } from 'polka';
import * as v from 'valibot';
import {
  type CaughtUpEvents,
  type EventPage,
  LEADERBOARD_METRICS,
  parseWith,
  type SessionMinutes,
  type SessionSummary,
  STREAM_EVENT_TYPES,
  type StreamEvent,
} from '../../../shared/protocol/index.js';
import type { Journal } from '../journal/journal.js';
import { pageLimit, queryOf, wholeNumber } from './query.js';
import { sendError, sendJson } from './responses.js';

/** The most caught-up events the dashboard lists. */
const CAUGHT_UP_LISTED = 200;

const EventsQuery = v.object({
  after: v.optional(wholeNumber(Number.MAX_SAFE_INTEGER), '0'),
  limit: v.optional(pageLimit(500), '100'),
  type: v.optional(v.picklist(STREAM_EVENT_TYPES, `must be one of ${STREAM_EVENT_TYPES.join(', ')}`)),
});

const LeaderboardQuery = v.object({
  scope: v.optional(v.picklist(['session', 'all'], 'must be session or all'), 'session'),
  metric: v.optional(
    v.picklist(LEADERBOARD_METRICS, `must be one of ${LEADERBOARD_METRICS.join(', ')}`),
    'diamonds',
  ),
  limit: v.optional(pageLimit(100), '10'),
});

/** A CSV cell: quoted when needed, and never read as a formula by a spreadsheet. */
function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const CSV_COLUMNS = [
  'seq',
  'time',
  'platform',
  'type',
  'uniqueId',
  'nickname',
  'giftName',
  'repeatCount',
  'diamonds',
  'likeCount',
  'comment',
  'viewerCount',
] as const;

function csvRow(seq: number, at: string, event: StreamEvent): string {
  const data = event.data as Record<string, unknown>;
  const diamonds =
    event.type === 'gift' ? (event.data.diamondCount ?? 0) * event.data.repeatCount : undefined;
  return [
    seq,
    at,
    event.platform,
    event.type,
    event.user.uniqueId,
    event.user.nickname,
    data.giftName,
    data.repeatCount,
    diamonds,
    data.likeCount,
    data.comment,
    data.viewerCount,
  ]
    .map(cell)
    .join(',');
}

/** Rows read from the journal at a time for a CSV; the daemon serves others between two reads. */
const CSV_PAGE_ROWS = 2000;

/** `session-12-2026-11-25T20-31Z.csv`: the session and the time it started (UTC), so two never collide. */
export function csvFileName(id: number, startedAt: number): string {
  return `session-${id}-${new Date(startedAt).toISOString().slice(0, 16).replace(':', '-')}Z.csv`;
}

/** Resolves once the response can take more (or is gone). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * A session's CSV, streamed: a page of rows at a time, waiting while the client has not taken what was
 * written (so a million events are never held in memory), and letting other requests in between pages.
 */
async function streamCsv(res: ServerResponse, journal: Journal, id: number): Promise<void> {
  let after = 0;
  let text = `${CSV_COLUMNS.join(',')}\r\n`;
  for (;;) {
    if (res.destroyed) return;
    const rows = journal.sessionEvents(id, after, CSV_PAGE_ROWS);
    for (const row of rows) text += `${csvRow(row.seq, row.at, row.event)}\r\n`;
    if (rows.length < CSV_PAGE_ROWS) break;
    after = rows.at(-1)?.seq ?? after;
    if (res.write(text)) await nextTurn();
    else await drained(res);
    text = '';
  }
  res.end(text);
}

export function mountHistory(app: Polka, journal: Journal): void {
  app.get('/api/events', (req, res) => {
    const query = parseWith(EventsQuery, queryOf(req));
    if (!query.ok) return sendError(res, 'bad_request', query.error);
    const page: EventPage = journal.events({
      after: query.value.after,
      limit: query.value.limit,
      type: query.value.type,
    });
    sendJson(res, 200, page);
  });

  // What came in late (caught up) in the last day, for the dashboard's "while you were away".
  app.get('/api/events/caught-up', (_req, res) =>
    sendJson(res, 200, { events: journal.caughtUp(CAUGHT_UP_LISTED) } satisfies CaughtUpEvents),
  );

  app.get('/api/sessions', (_req, res) => sendJson(res, 200, journal.sessions() satisfies SessionSummary[]));

  app.get('/api/sessions/:id/events.csv', (req, res: ServerResponse) => {
    const id = req.params.id ?? '';
    const startedAt = /^\d{1,15}$/.test(id) ? journal.sessionStartedAt(Number(id)) : undefined;
    if (startedAt === undefined) return sendError(res, 'not_found', 'No session has that id');
    res.writeHead(200, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${csvFileName(Number(id), startedAt)}"`,
      'Cache-Control': 'no-store',
    });
    streamCsv(res, journal, Number(id)).catch((err: unknown) => {
      // Headers are out: the client sees a cut-off file rather than a complete-looking one.
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });

  // Test events (the test panel, the `event` command) count nowhere; this removes them from the journal.
  app.delete('/api/test-events', (_req, res) => {
    sendJson(res, 200, { removed: journal.removeTestEvents() });
  });

  app.get('/api/sessions/:id/minutes', (req, res) => {
    const id = req.params.id ?? '';
    if (!/^\d{1,15}$/.test(id) || !journal.hasSession(Number(id)))
      return sendError(res, 'not_found', 'No session has that id');
    sendJson(res, 200, journal.minutes(Number(id)) satisfies SessionMinutes);
  });

  app.get('/api/leaderboard', (req, res) => {
    const query = parseWith(LeaderboardQuery, queryOf(req));
    if (!query.ok) return sendError(res, 'bad_request', query.error);
    sendJson(res, 200, journal.leaderboard(query.value.scope, query.value.metric, query.value.limit));
  });
}
