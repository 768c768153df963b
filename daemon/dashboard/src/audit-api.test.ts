import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, ControlApi } from './api.js';
import { auditPage, auditSince } from './audit-api.js';

const sent: { url: string; authorization: string | undefined }[] = [];
afterEach(() => {
  vi.unstubAllGlobals();
  sent.length = 0;
});

const entry = (id: number) => ({
  id,
  at: '2026-11-28T21:00:00.000Z',
  deviceId: 'd1',
  deviceName: 'Phone',
  method: 'POST',
  path: '/api/events',
  status: 202,
});

/** The daemon, stood in for by `fetch`, holding entries 1..`count` and answering as GET /api/audit does. */
function daemon(count: number, answer?: (url: URL) => Response | undefined): void {
  vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
    sent.push({ url, authorization: (init.headers as Record<string, string>).Authorization });
    const parsed = new URL(url, 'http://127.0.0.1');
    const given = answer?.(parsed);
    if (given) return given;
    const after = Number(parsed.searchParams.get('after') ?? '0');
    const limit = Number(parsed.searchParams.get('limit') ?? '100');
    const ids = Array.from({ length: count }, (_, i) => i + 1).filter((id) => id > after);
    const page = ids.slice(0, limit);
    const body = { entries: page.map(entry), next: ids.length > limit ? (page.at(-1) ?? null) : null };
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  });
}

describe('the audit client', () => {
  it('reads every entry, page after page with the admin key, and says where to go on from', async () => {
    daemon(1203);
    const read = await auditSince(new ControlApi('the-key'), undefined);
    expect(read.entries.map((e) => e.id)).toEqual(Array.from({ length: 1203 }, (_, i) => i + 1));
    expect(read.last).toBe(1203);
    expect(sent.map((s) => s.url)).toEqual([
      '/api/audit?limit=500',
      '/api/audit?limit=500&after=500',
      '/api/audit?limit=500&after=1000',
    ]);
    expect(sent.every((s) => s.authorization === 'Bearer the-key')).toBe(true);
  });

  it('asks only for what came since, and keeps its place when nothing did', async () => {
    daemon(1203);
    const since = await auditSince(new ControlApi('k'), 1200);
    expect(since.entries.map((e) => e.id)).toEqual([1201, 1202, 1203]);
    const none = await auditSince(new ControlApi('k'), 1203);
    expect(none).toEqual({ entries: [], last: 1203 });
  });

  it('refuses an answer that is not an audit page', async () => {
    daemon(0, () => new Response('{"entries":[{"id":"x"}],"next":null}', { status: 200 }));
    await expect(auditPage(new ControlApi('k'), undefined)).rejects.toBeInstanceOf(ApiError);
  });
});
