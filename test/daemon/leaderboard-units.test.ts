// Boards ranked from the event journal name each viewer's gift value in the unit of the platform it came
// from, as the classic top-gifters widget does: bits for Twitch cheers, the Super Chat's currency for
// YouTube, diamonds for TikTok, and the figure alone for a viewer whose gifts came in several units.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal, MIGRATIONS } from '../../daemon/src/journal/journal.js';
import { giftValueText } from '../../shared/money.js';
import type { ServerMessage, ViewerFigures, Widget } from '../../shared/protocol/index.js';
import { api, makeDataDir, startTestDaemon, subscribe, type TestDaemon } from '../support/daemon.js';
import { until } from '../support/wait.js';
import type { TestWsClient } from '../support/ws.js';

type Entry = { uniqueId: string; diamonds: number; platform?: string; currency?: string };

const user = (uniqueId: string) => ({ uniqueId, nickname: uniqueId.toUpperCase() });
const cheer = (who: string, bits: number) => ({
  type: 'gift',
  platform: 'twitch',
  user: user(who),
  data: { giftName: 'Bits', repeatCount: bits, diamondCount: 1 },
});
const superChat = (who: string, cents: number, currency: string) => ({
  type: 'gift',
  platform: 'youtube',
  user: user(who),
  data: { giftName: 'Super Chat', repeatCount: 1, diamondCount: cents, currency },
});
const tiktokGift = (who: string, count: number, diamonds: number) => ({
  type: 'gift',
  platform: 'tiktok',
  user: user(who),
  data: { giftName: 'Rose', repeatCount: count, diamondCount: diamonds },
});

/** The lines a board shows, as the overlay page writes them (overlay-view.ts). */
const labels = (entries: readonly Entry[]) =>
  entries.map((e) => `${e.uniqueId}: ${giftValueText(e.platform as never, e.diamonds, e.currency)}`);

const EXPECTED = ['tik: 1,000 diamonds', 'yt: €7.50', 'both: 305', 'twi: 300 bits'];

describe('a journal-ranked top-gifters board', () => {
  let daemon: TestDaemon;
  let page: TestWsClient;
  let id: string;
  beforeAll(async () => {
    daemon = await startTestDaemon();
    const created = await api(daemon, 'POST', '/api/overlays', {
      name: 'Units',
      width: 800,
      height: 600,
      widgets: [
        { id: 'session', type: 'top-gifters', x: 0, y: 0, scope: 'session', maxEntries: 10 },
        { id: 'all', type: 'top-gifters', x: 0, y: 300, scope: 'all', metric: 'diamonds', maxEntries: 10 },
        { id: 'classic', type: 'top-gifters', x: 400, y: 0, maxEntries: 10 },
      ],
    });
    id = ((await created.json()) as { id: string }).id;
    page = await subscribe(daemon, id);
    for (const event of [
      cheer('twi', 100),
      cheer('twi', 200),
      superChat('yt', 500, 'EUR'),
      superChat('yt', 250, 'EUR'),
      tiktokGift('tik', 10, 100),
      // One viewer, two units: bits and diamonds add up to no unit.
      cheer('both', 5),
      tiktokGift('both', 300, 1),
    ]) {
      const res = await api(daemon, 'POST', '/api/events', event);
      expect(res.status).toBe(202);
    }
  });
  afterAll(async () => {
    page?.close();
    await daemon?.stop();
  });

  it('names each viewer’s value in its platform’s unit on the page, as the classic board does', async () => {
    const boards = (m: ServerMessage) =>
      m.type === 'overlay-update' || m.type === 'init' ? m.widgets : undefined;
    const entriesOf = (widgets: Widget[] | undefined, wid: string) =>
      (widgets?.find((w) => w.id === wid) as { entries?: Entry[] } | undefined)?.entries;
    // The page's latest word on each board (an update may carry only the widgets that changed).
    const seen = new Map<string, Entry[]>();
    await until(() => {
      seen.clear();
      for (const m of page.received)
        for (const wid of ['session', 'all', 'classic']) {
          const entries = entriesOf(boards(m), wid);
          if (entries) seen.set(wid, entries);
        }
      return ['session', 'all', 'classic'].every((wid) => seen.get(wid)?.length === 4) || undefined;
    }, 'every board with four viewers');
    expect(labels(seen.get('classic') ?? [])).toEqual(EXPECTED);
    expect(labels(seen.get('session') ?? [])).toEqual(EXPECTED);
    expect(labels(seen.get('all') ?? [])).toEqual(EXPECTED);
  });

  it('keeps the unit in the overlay’s state, GET /api/leaderboard and the sessions’ top gifters', async () => {
    const overlay = (await (await api(daemon, 'GET', `/api/overlays/${id}`)).json()) as {
      widgets: { id: string; entries: Entry[] }[];
    };
    expect(labels(overlay.widgets.find((w) => w.id === 'session')?.entries ?? [])).toEqual(EXPECTED);
    for (const scope of ['session', 'all']) {
      const res = await api(daemon, 'GET', `/api/leaderboard?scope=${scope}&metric=diamonds`);
      expect(res.status).toBe(200);
      const board = (await res.json()) as ViewerFigures[];
      expect(labels(board), scope).toEqual(EXPECTED);
      expect(board.find((v) => v.uniqueId === 'yt')).toMatchObject({ platform: 'youtube', currency: 'EUR' });
      expect(board.find((v) => v.uniqueId === 'both')).toMatchObject({ platform: 'mixed' });
      expect(board.find((v) => v.uniqueId === 'both')).not.toHaveProperty('currency');
    }
    const sessions = (await (await api(daemon, 'GET', '/api/sessions')).json()) as {
      topGifters: ViewerFigures[];
    }[];
    expect(labels(sessions[0]?.topGifters ?? [])).toEqual(EXPECTED);
  });
});

describe('a journal from the version before units', () => {
  it('gets each viewer’s unit from the gift events it keeps when first opened', async () => {
    const dir = await makeDataDir();
    const path = join(dir, 'events.db');
    // The journal as the previous version wrote it: two schema versions, events without platform.
    const old = new Database(path);
    for (const sql of MIGRATIONS.slice(0, 2)) old.exec(sql);
    old.pragma('user_version = 2');
    old.prepare('INSERT INTO sessions (first_seq, last_seq, started_at, last_at) VALUES (1, 1, 0, 0)').run();
    const insert = old.prepare(
      `INSERT INTO events (seq, at, source, type, session, user_id, nickname, gifts, diamonds, likes, chats,
         follows, shares, subscribes, viewers, points, event, test) VALUES (?, 0, 'api', 'gift', 1, ?, ?, 1, ?, 0, 0, 0, 0, 0, 0, ?, ?, 0)`,
    );
    [
      cheer('twi', 300),
      superChat('yt', 750, 'EUR'),
      tiktokGift('tik', 10, 100),
      cheer('both', 5),
      tiktokGift('both', 300, 1),
    ].forEach((event, i) => {
      const value = event.data.repeatCount * event.data.diamondCount;
      insert.run(i + 1, event.user.uniqueId, event.user.nickname, value, value, JSON.stringify(event));
    });
    old.close();

    const journal = Journal.open({ path, log: () => {} });
    try {
      expect(labels(journal.leaderboard('session', 'diamonds'))).toEqual(EXPECTED);
      expect(labels(journal.leaderboard('all', 'diamonds'))).toEqual(EXPECTED);
    } finally {
      journal.close();
    }
  });
});
