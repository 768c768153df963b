// The event journal against the real daemon and the real SQLite file: nothing lost to a
// kill -9 after the 202, history pages, sessions and their CSV, leaderboards and points, a corrupt file
// moved aside, and resuming a page with what it missed.
import { chmod, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { type IncomingMessage, request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../daemon/src/journal/journal.js';
import type { ServerMessage, StreamEvent } from '../../shared/protocol/index.js';
import { killCliProcesses, spawnCli } from '../support/cli.js';
import { api, makeDataDir, pageToken, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { until } from '../support/wait.js';
import { connectWs, type TestWsClient } from '../support/ws.js';

const user = (name: string) => ({ uniqueId: name.toLowerCase(), nickname: name });
const gift = (name: string, giftName: string, repeatCount: number, diamondCount: number) => ({
  type: 'gift',
  user: user(name),
  data: { giftName, repeatCount, diamondCount },
});
const chat = (name: string, comment: string) => ({ type: 'chat', user: user(name), data: { comment } });
const seqOf = (m: ServerMessage) => ('seq' in m ? (m.seq ?? -1) : -1);
/** An event as the journal takes it (checked, with its platform). */
const streamEvent = (event: object): StreamEvent => ({ platform: 'api', ...event }) as StreamEvent;

afterEach(() => killCliProcesses());

describe('a kill -9 right after the 202', () => {
  it('loses none of the accepted events', async () => {
    const dir = await makeDataDir();
    const run = spawnCli(['--port', '0', '--data-dir', dir]);
    const port = Number(
      (
        await until(
          () => /http:\/\/127\.0\.0\.1:(\d+)\/overlay\//.exec(run.stdout())?.[1],
          'the daemon to listen',
          15_000,
        )
      ).toString(),
    );
    const key = (await readFile(join(dir, 'admin.key'), 'utf8')).trim();
    const accepted: number[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/events`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(chat('Kim', `message ${i}`)),
      });
      if (res.status === 202) accepted.push(i);
    }
    // No goodbye: the process dies the moment the last 202 arrived.
    run.child.kill('SIGKILL');
    await run.exited;
    expect(accepted).toHaveLength(50);
    const db = new Database(join(dir, 'events.db'), { readonly: true });
    try {
      const rows = db.prepare("SELECT event FROM events WHERE type = 'chat' ORDER BY seq").all() as {
        event: string;
      }[];
      expect(rows.map((r) => (JSON.parse(r.event) as { data: { comment: string } }).data.comment)).toEqual(
        accepted.map((i) => `message ${i}`),
      );
    } finally {
      db.close();
    }
  }, 30_000);
});

describe('history', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('pages through the journal after a seq, by type, and names a bad query field', async () => {
    for (let i = 0; i < 7; i++) await api(daemon, 'POST', '/api/events', chat('Ann', `hello ${i}`));
    await api(daemon, 'POST', '/api/events', gift('Bob', 'Rose', 3, 1));
    const first = (await (await api(daemon, 'GET', '/api/events?limit=5')).json()) as {
      events: { seq: number; source: string; event: { type: string; platform: string } }[];
      next: number;
    };
    expect(first.events).toHaveLength(5);
    expect(first.events[0]).toMatchObject({ source: 'api', event: { type: 'chat', platform: 'api' } });
    const rest = (await (await api(daemon, 'GET', `/api/events?after=${first.next}&limit=500`)).json()) as {
      events: { seq: number }[];
      next: number | null;
    };
    expect(rest.events).toHaveLength(3);
    expect(rest.next).toBeNull();
    const seqs = [...first.events, ...rest.events].map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const gifts = (await (await api(daemon, 'GET', '/api/events?type=gift')).json()) as { events: unknown[] };
    expect(gifts.events).toHaveLength(1);
    for (const [query, field] of [
      ['limit=501', 'limit'],
      ['limit=0', 'limit'],
      ['after=-1', 'after'],
      ['type=raid', 'type'],
    ] as const) {
      const res = await api(daemon, 'GET', `/api/events?${query}`);
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        new RegExp(`^${field}: `),
      );
    }
  });

  it('keeps session totals and top gifters, and exports a session as CSV a spreadsheet reads safely', async () => {
    await api(daemon, 'POST', '/api/events', gift('Whale', 'Lion', 1, 29_999));
    await api(daemon, 'POST', '/api/events', { type: 'like', user: user('Ann'), data: { likeCount: 15 } });
    await api(daemon, 'POST', '/api/events', {
      type: 'viewer',
      user: user('Host'),
      data: { viewerCount: 321 },
    });
    await api(daemon, 'POST', '/api/events', chat('Mallory', '=HYPERLINK("http://evil.test","click")'));
    const [session] = (await (await api(daemon, 'GET', '/api/sessions')).json()) as {
      id: number;
      endedAt: string | null;
      totals: Record<string, number>;
      topGifters: { uniqueId: string; diamonds: number }[];
    }[];
    expect(session?.endedAt).toBeNull();
    expect(session?.totals).toEqual({
      gifts: 4,
      diamonds: 30_002,
      likes: 15,
      follows: 0,
      shares: 0,
      subscribes: 0,
      chats: 8,
      peakViewers: 321,
    });
    expect(session?.topGifters.map((g) => [g.uniqueId, g.diamonds])).toEqual([
      ['whale', 29_999],
      ['bob', 3],
    ]);
    const csv = await api(daemon, 'GET', `/api/sessions/${session?.id}/events.csv`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe(
      'seq,time,platform,type,uniqueId,nickname,giftName,repeatCount,diamonds,likeCount,comment,viewerCount',
    );
    expect(lines).toHaveLength(13);
    expect(lines.find((l) => l.includes('whale'))).toMatch(/,api,gift,whale,Whale,Lion,1,29999,,,$/);
    // A formula is written as text: quoted, with a leading apostrophe.
    expect(lines.at(-1)).toContain(`"'=HYPERLINK(""http://evil.test"",""click"")"`);
    expect((await api(daemon, 'GET', '/api/sessions/999/events.csv')).status).toBe(404);
  });

  it('ranks viewers by diamonds, likes, chats or points, with points from the settings', async () => {
    const top = (await (await api(daemon, 'GET', '/api/leaderboard?metric=diamonds')).json()) as {
      uniqueId: string;
      points: number;
    }[];
    expect(top.map((v) => v.uniqueId)).toEqual(['whale', 'bob']);
    // The default: a point per diamond.
    expect(top[0]?.points).toBe(29_999);
    const chats = (await (await api(daemon, 'GET', '/api/leaderboard?scope=all&metric=chats')).json()) as {
      uniqueId: string;
      chats: number;
    }[];
    expect(chats[0]).toMatchObject({ uniqueId: 'ann', chats: 7 });

    const settings = (await (await api(daemon, 'GET', '/api/settings')).json()) as Record<string, unknown>;
    const saved = await api(daemon, 'PUT', '/api/settings', {
      ...settings,
      points: { perDiamond: 0, perChat: 10, perLike: 1 },
    });
    expect(saved.status).toBe(200);
    await api(daemon, 'POST', '/api/events', chat('Newbie', 'first!'));
    const points = (await (await api(daemon, 'GET', '/api/leaderboard?metric=points&limit=100')).json()) as {
      uniqueId: string;
      points: number;
    }[];
    expect(points.find((v) => v.uniqueId === 'newbie')?.points).toBe(10);
    for (const query of ['metric=hearts', 'scope=forever', 'limit=101']) {
      expect((await api(daemon, 'GET', `/api/leaderboard?${query}`)).status, query).toBe(400);
    }
    const bad = await api(daemon, 'PUT', '/api/settings', { ...settings, points: { perChat: -1 } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(
      /^points\.perChat: /,
    );
  });
});

describe('a top-gifters widget ranked from the journal', () => {
  it('ranks by its metric over its scope, and the page gets the figures', async () => {
    const daemon = await startTestDaemon();
    try {
      const created = await api(daemon, 'POST', '/api/overlays', {
        name: 'Ranks',
        width: 800,
        height: 600,
        widgets: [
          { id: 'likers', type: 'top-gifters', x: 0, y: 0, scope: 'all', metric: 'likes', maxEntries: 2 },
          { id: 'classic', type: 'top-gifters', x: 0, y: 200 },
        ],
      });
      const { id } = (await created.json()) as { id: string };
      const like = (name: string, likeCount: number) => ({
        type: 'like',
        user: user(name),
        data: { likeCount },
      });
      await api(daemon, 'POST', '/api/events', like('Ann', 10));
      await api(daemon, 'POST', '/api/events', like('Bob', 30));
      await api(daemon, 'POST', '/api/events', like('Ann', 25));
      await api(daemon, 'POST', '/api/events', like('Cy', 1));
      const widgets = await until(async () => {
        const overlay = (await (await api(daemon, 'GET', `/api/overlays/${id}`)).json()) as {
          widgets: { id: string; entries: { uniqueId: string; value?: number }[] }[];
        };
        const likers = overlay.widgets.find((w) => w.id === 'likers');
        return likers?.entries.length === 2 && likers.entries[0]?.value === 35 ? overlay.widgets : undefined;
      }, 'the ranking');
      expect(widgets.find((w) => w.id === 'likers')?.entries.map((e) => [e.uniqueId, e.value])).toEqual([
        ['ann', 35],
        ['bob', 30],
      ]);
      // Without scope or metric, a widget counts gifts as before: likes leave it empty.
      expect(widgets.find((w) => w.id === 'classic')?.entries).toEqual([]);
    } finally {
      await daemon.stop();
    }
  });
});

describe('ties', () => {
  it('are ordered by name on the top-gifters widget as on the journal boards', async () => {
    const daemon = await startTestDaemon();
    try {
      const created = await api(daemon, 'POST', '/api/overlays', {
        name: 'Ties',
        width: 800,
        height: 600,
        widgets: [
          { id: 'live', type: 'top-gifters', x: 0, y: 0 },
          { id: 'board', type: 'top-gifters', x: 0, y: 200, scope: 'session', metric: 'diamonds' },
        ],
      });
      const { id } = (await created.json()) as { id: string };
      // Zed gives first; his id sorts first too: only the name puts Amy ahead.
      for (const [uniqueId, nickname] of [
        ['a1', 'Zed'],
        ['b2', 'Amy'],
      ] as const)
        await api(daemon, 'POST', '/api/events', {
          ...gift(nickname, 'Rose', 5, 1),
          user: { uniqueId, nickname },
        });
      const widgets = await until(async () => {
        const overlay = (await (await api(daemon, 'GET', `/api/overlays/${id}`)).json()) as {
          widgets: { id: string; entries: { nickname: string }[] }[];
        };
        return overlay.widgets.every((w) => w.entries.length === 2) ? overlay.widgets : undefined;
      }, 'both boards');
      for (const w of widgets)
        expect(
          w.entries.map((e) => e.nickname),
          w.id,
        ).toEqual(['Amy', 'Zed']);
    } finally {
      await daemon.stop();
    }
  });
});

describe('sessions', () => {
  it('start a new one after 30 minutes without events', async () => {
    const dir = await makeDataDir();
    let now = Date.parse('2026-11-20T20:00:00Z');
    const journal = Journal.open({ path: join(dir, 'events.db'), log: () => {}, now: () => now });
    try {
      journal.append({ type: 'follow', platform: 'tiktok', user: user('A'), data: {} }, 'tiktok');
      now += 29 * 60_000;
      journal.append({ type: 'follow', platform: 'tiktok', user: user('B'), data: {} }, 'tiktok');
      now += 31 * 60_000;
      journal.append({ type: 'follow', platform: 'tiktok', user: user('C'), data: {} }, 'tiktok');
      const sessions = journal.sessions();
      expect(sessions.map((s) => s.totals.follows)).toEqual([1, 2]);
      expect(sessions[1]?.endedAt).toBe('2026-11-20T20:29:00.000Z');
      expect(sessions[0]?.endedAt).toBeNull();
    } finally {
      journal.close();
    }
  });
});

describe('a corrupt events.db', () => {
  it('is moved aside with one clear line, and the daemon runs on with a new journal', async () => {
    const dir = await makeDataDir();
    await writeFile(join(dir, 'events.db'), 'this is not a database, it is a shopping list '.repeat(200));
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      const aside = (await readdir(dir)).filter((f) => f.startsWith('events.db.corrupt-'));
      expect(aside).toHaveLength(1);
      const lines = daemon.logs.filter((l) => l.startsWith('[journal]'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`moved aside to ${join(dir, aside[0] ?? '')}`);
      expect((await api(daemon, 'POST', '/api/events', chat('Ann', 'still here'))).status).toBe(202);
      const page = (await (await api(daemon, 'GET', '/api/events')).json()) as { events: unknown[] };
      expect(page.events).toHaveLength(1);
    } finally {
      await daemon.close();
    }
  });
});

describe('resume', () => {
  let daemon: TestDaemon;
  let overlayId: string;
  beforeAll(async () => {
    daemon = await startTestDaemon();
    overlayId = daemon.overlays.list()[0]!.id;
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  async function open(resumeFrom?: number): Promise<TestWsClient> {
    const token = await pageToken(daemon, overlayId);
    const client = await connectWs(`ws://127.0.0.1:${daemon.port}`);
    client.ws.send(
      JSON.stringify({
        action: 'init',
        overlayId,
        token,
        ...(resumeFrom !== undefined ? { resumeFrom } : {}),
      }),
    );
    await client.next((m) => m.type === 'init');
    return client;
  }

  it('replays what the page missed, in order, marked replayed, then says resumed, then goes live', async () => {
    const first = await open();
    await api(daemon, 'POST', '/api/events', chat('Ann', 'before'));
    const seen = seqOf(await first.next((m) => m.type === 'stream-event'));
    first.close();
    await first.closed;
    await api(daemon, 'POST', '/api/events', chat('Ann', 'missed 1'));
    await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, {
      command: 'set-text',
      widgetId: 'welcome',
      payload: { text: 'missed command' },
    });
    await api(daemon, 'POST', '/api/events', chat('Ann', 'missed 2'));

    const again = await open(seen);
    const resumed = await again.next((m) => m.type === 'resumed');
    const replayed = again.received.filter(
      (m) => (m.type === 'stream-event' || m.type === 'overlay-command') && m.replayed === true,
    );
    expect(replayed.map((m) => (m.type === 'stream-event' ? m.event.data.comment : m.type))).toEqual([
      'missed 1',
      'overlay-command',
      'missed 2',
    ]);
    const seqs = replayed.map(seqOf);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs[0]).toBeGreaterThan(seen);
    expect(resumed).toMatchObject({ type: 'resumed', from: seen, replayed: 3, gap: false });
    if (resumed.type === 'resumed') expect(resumed.to).toBeGreaterThanOrEqual(seqs.at(-1) ?? 0);

    await api(daemon, 'POST', '/api/events', chat('Ann', 'live'));
    const live = await again.next((m) => m.type === 'stream-event' && !m.replayed);
    expect(live.type === 'stream-event' && live.event.data.comment).toBe('live');
    again.close();
  });

  it('loses and doubles nothing when events keep arriving while a page resumes', async () => {
    const watcher = await open();
    await api(daemon, 'POST', '/api/events', chat('Load', 'start'));
    const from = seqOf(await watcher.next((m) => m.type === 'stream-event'));
    watcher.close();
    // Events go on arriving before, during and after the resume.
    let posting = true;
    let posted = 0;
    const poster = (async () => {
      while (posting) {
        const res = await api(daemon, 'POST', '/api/events', chat('Load', `n${posted}`));
        if (res.status === 202) posted++;
      }
    })();
    await until(() => (posted >= 20 ? true : undefined), '20 events before the resume');
    const resuming = await open(from);
    await until(() => (posted >= 60 ? true : undefined), '40 more during and after it');
    posting = false;
    await poster;
    await until(
      () => (resuming.received.filter((m) => m.type === 'stream-event').length >= posted ? true : undefined),
      'every event',
    );
    const events = resuming.received.filter((m) => m.type === 'stream-event');
    const comments = events.map((m) => (m.type === 'stream-event' ? m.event.data.comment : ''));
    expect(comments).toEqual(Array.from({ length: posted }, (_, i) => `n${i}`));
    const resumedAt = resuming.received.findIndex((m) => m.type === 'resumed');
    // Everything before `resumed` is replayed, everything after it live.
    expect(resuming.received.slice(1, resumedAt).every((m) => 'replayed' in m && m.replayed)).toBe(true);
    expect(resuming.received.slice(resumedAt + 1).some((m) => 'replayed' in m && m.replayed)).toBe(false);
    resuming.close();
  }, 20_000);

  /** A page of overlay `id` on `d` that resumes from `from`; answers its `resumed` and what came before. */
  async function resumeOn(d: TestDaemon, id: string, from: number) {
    const token = await pageToken(d, id);
    const client = await connectWs(`ws://127.0.0.1:${d.port}`);
    client.ws.send(JSON.stringify({ action: 'init', overlayId: id, token, resumeFrom: from }));
    const resumed = await client.next((m) => m.type === 'resumed');
    const replayed = client.received.filter(
      (m) => (m.type === 'stream-event' || m.type === 'overlay-command') && m.replayed === true,
    );
    client.close();
    return { resumed, replayed };
  }

  it('replays from the journal across a restart: the events and commands the page missed, no gap', async () => {
    const dir = await makeDataDir();
    const first = await startTestDaemon({ dataDir: dir });
    const id = first.overlays.list()[0]!.id;
    const page = await pageToken(first, id);
    const client = await connectWs(`ws://127.0.0.1:${first.port}`);
    client.ws.send(JSON.stringify({ action: 'init', overlayId: id, token: page }));
    await api(first, 'POST', '/api/events', chat('Ann', 'seen'));
    const seen = seqOf(await client.next((m) => m.type === 'stream-event'));
    client.close();
    await client.closed;
    await api(first, 'POST', '/api/events', chat('Ann', 'missed 1'));
    await api(first, 'POST', `/api/overlays/${id}/commands`, {
      command: 'set-text',
      widgetId: 'welcome',
      payload: { text: 'missed command' },
    });
    await first.close();
    // The daemon restarted; the page (an OBS source) comes back with the last seq it saw.
    const second = await startTestDaemon({ dataDir: dir });
    try {
      await api(second, 'POST', '/api/events', chat('Ann', 'after the restart'));
      const { resumed, replayed } = await resumeOn(second, id, seen);
      expect(
        replayed.map((m) =>
          m.type === 'stream-event' ? m.event.data.comment : m.type === 'overlay-command' ? m.payload : m,
        ),
      ).toEqual(['missed 1', { text: 'missed command' }, 'after the restart']);
      const seqs = replayed.map(seqOf);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(resumed).toMatchObject({ type: 'resumed', from: seen, replayed: 3, gap: false });
    } finally {
      await second.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says gap when the page resumes from before what the journal still has', async () => {
    const dir = await makeDataDir();
    let now = Date.parse('2026-01-01T20:00:00Z');
    const journal = Journal.open({ path: join(dir, 'events.db'), log: () => {}, now: () => now });
    const old = journal.append(streamEvent(chat('Ann', 'long ago')), 'api');
    now = Date.now();
    journal.append(streamEvent(chat('Ann', 'today')), 'api');
    // Retention removed the old one.
    expect(journal.prune(180)).toBe(1);
    journal.close();
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      const id = daemon.overlays.list()[0]!.id;
      const fromBefore = await resumeOn(daemon, id, old - 1);
      expect(fromBefore.resumed).toMatchObject({ gap: true, replayed: 1 });
      const fromIt = await resumeOn(daemon, id, old);
      expect(fromIt.resumed).toMatchObject({ gap: false, replayed: 1 });
    } finally {
      await daemon.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('never numbers backwards after a corrupt events.db is moved aside, and a resume from above the current seq is a gap', async () => {
    const dir = await makeDataDir();
    const first = await startTestDaemon({ dataDir: dir });
    const id = first.overlays.list()[0]!.id;
    for (let i = 0; i < 3; i++) await api(first, 'POST', '/api/events', chat('Ann', `before ${i}`));
    const before = ((await (await api(first, 'GET', '/api/events')).json()) as { events: { seq: number }[] })
      .events;
    const last = before.at(-1)!.seq;
    await first.close();
    for (const suffix of ['-wal', '-shm']) await rm(join(dir, `events.db${suffix}`), { force: true });
    await writeFile(join(dir, 'events.db'), 'not a database any more '.repeat(200));
    const second = await startTestDaemon({ dataDir: dir });
    try {
      expect(second.logs.some((l) => l.includes('moved aside'))).toBe(true);
      await api(second, 'POST', '/api/events', chat('Ann', 'after'));
      const after = (
        (await (await api(second, 'GET', '/api/events')).json()) as { events: { seq: number }[] }
      ).events;
      expect(after).toHaveLength(1);
      expect(after[0]!.seq).toBeGreaterThan(last);
      // The page saw `last`; what followed it was in the journal that was moved aside.
      expect((await resumeOn(second, id, last)).resumed).toMatchObject({ gap: true });
      // A number this daemon never reached belongs to another history.
      const ahead = await resumeOn(second, id, after[0]!.seq + 1_000_000);
      expect(ahead.resumed).toMatchObject({ gap: true, replayed: 0 });
    } finally {
      await second.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the CSV of a long session', () => {
  it('streams while the daemon answers others: chunked, first bytes before the last row is read', async () => {
    const dir = await makeDataDir();
    const journal = Journal.open({ path: join(dir, 'events.db'), log: () => {} });
    const total = 200_000;
    for (let i = 0; i < total; i += 10_000)
      journal.appendBatch(
        Array.from({ length: 10_000 }, (_, j) => ({
          event: streamEvent(chat(`Viewer${(i + j) % 50}`, `line ${i + j}`)),
          source: 'api',
        })),
      );
    const session = journal.currentSession();
    journal.close();
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      let rowsRead = 0;
      const read = daemon.journal.sessionEvents.bind(daemon.journal);
      daemon.journal.sessionEvents = (...args: Parameters<typeof read>) => {
        const rows = read(...args);
        rowsRead += rows.length;
        return rows;
      };
      const key = (await readFile(join(dir, 'admin.key'), 'utf8')).trim();
      const { response, firstChunk, readAtFirstChunk } = await new Promise<{
        response: IncomingMessage;
        firstChunk: Buffer;
        readAtFirstChunk: number;
      }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: daemon.port,
            path: `/api/sessions/${session}/events.csv`,
            headers: { Authorization: `Bearer ${key}` },
          },
          (res) => {
            res.once('data', (chunk: Buffer) => {
              // The reader takes nothing more for now: the daemon must wait, not buffer the rest.
              res.pause();
              resolve({ response: res, firstChunk: chunk, readAtFirstChunk: rowsRead });
            });
          },
        );
        req.on('error', reject);
        req.end();
      });
      expect(response.headers['transfer-encoding']).toBe('chunked');
      expect(response.headers['content-disposition']).toMatch(
        /^attachment; filename="session-\d+-\d{4}-\d\d-\d\dT\d\d-\d\dZ\.csv"$/,
      );
      expect(firstChunk.toString('utf8')).toMatch(/^seq,time,platform,type,/);
      expect(readAtFirstChunk).toBeLessThan(total);
      // Meanwhile the daemon answers, and has still not read the whole session.
      const other = await api(daemon, 'GET', '/api/sessions');
      expect(other.status).toBe(200);
      expect(rowsRead).toBeLessThan(total);
      const rest: Buffer[] = [firstChunk];
      response.on('data', (chunk: Buffer) => rest.push(chunk));
      const ended = new Promise((resolve) => response.on('end', resolve));
      response.resume();
      await ended;
      const lines = Buffer.concat(rest).toString('utf8').trim().split('\r\n');
      expect(lines).toHaveLength(total + 1);
      expect(lines[1]).toMatch(/,line 0,,?$/);
      expect(lines.at(-1)).toMatch(new RegExp(`,line ${total - 1},,?$`));
      expect(rowsRead).toBe(total);
    } finally {
      await daemon.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the journal files', () => {
  it('are 0600 (events.db, -wal, -shm, events.seq) in a data directory that is 0755', async () => {
    const dir = await makeDataDir();
    await chmod(dir, 0o755);
    // An older version left a readable events.db behind.
    const older = new Database(join(dir, 'events.db'));
    older.close();
    await chmod(join(dir, 'events.db'), 0o644);
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      expect((await api(daemon, 'POST', '/api/events', chat('Ann', 'private'))).status).toBe(202);
      for (const name of ['events.db', 'events.db-wal', 'events.db-shm', 'events.seq'])
        expect(((await stat(join(dir, name))).mode & 0o777).toString(8), name).toBe('600');
    } finally {
      await daemon.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('never give a seq that is not a number: a crafted sequence is repaired, a crafted row refused', async () => {
    const dir = await makeDataDir();
    const journal = Journal.open({ path: join(dir, 'events.db'), log: () => {} });
    const last = journal.append(streamEvent(chat('Ann', 'before')), 'api');
    journal.close();
    const db = new Database(join(dir, 'events.db'));
    db.prepare("UPDATE meta SET value = 'not a number' WHERE key = 'seq_reserved'").run();
    db.close();
    await rm(join(dir, 'events.seq'));
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      const id = daemon.overlays.list()[0]!.id;
      const token = await pageToken(daemon, id);
      const client = await connectWs(`ws://127.0.0.1:${daemon.port}`);
      client.sendInit(id, token);
      await client.next((m) => m.type === 'init');
      expect((await api(daemon, 'POST', '/api/events', chat('Ann', 'after'))).status).toBe(202);
      const live = await client.next((m) => m.type === 'stream-event');
      expect(Number.isSafeInteger(seqOf(live))).toBe(true);
      expect(seqOf(live)).toBeGreaterThan(last);
      client.close();
      expect(daemon.logs.some((l) => /stored sequence .* is not a number/.test(l))).toBe(true);
    } finally {
      await daemon.close();
    }
    // A row numbered past anything a journal hands out: the file is not this program's, it is set aside.
    const crafted = new Database(join(dir, 'events.db'));
    crafted.prepare('UPDATE events SET seq = 9007199254740993 WHERE seq = ?').run(last);
    crafted.close();
    const again = await startTestDaemon({ dataDir: dir });
    try {
      expect(again.logs.some((l) => l.includes('moved aside'))).toBe(true);
      await api(again, 'POST', '/api/events', chat('Ann', 'fresh'));
      const page = (await (await api(again, 'GET', '/api/events')).json()) as { events: { seq: number }[] };
      expect(page.events.map((e) => Number.isSafeInteger(e.seq) && e.seq > last)).toEqual([true]);
    } finally {
      await again.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('what History counts', () => {
  it('counts a cheer as one gift (its bits are the value)', async () => {
    const daemon = await startTestDaemon();
    try {
      for (let i = 0; i < 6; i++)
        await api(daemon, 'POST', '/api/events', {
          type: 'gift',
          platform: 'twitch',
          user: user('Cheerer'),
          data: { giftName: 'Bits', repeatCount: 100, diamondCount: 1 },
        });
      await api(daemon, 'POST', '/api/events', gift('Rosa', 'Rose', 3, 1));
      const [session] = (await (await api(daemon, 'GET', '/api/sessions')).json()) as {
        totals: { gifts: number; diamonds: number };
      }[];
      expect(session?.totals).toMatchObject({ gifts: 9, diamonds: 603 });
    } finally {
      await daemon.stop();
    }
  });

  it('marks test events, counts them nowhere, and removes them on request', async () => {
    const daemon = await startTestDaemon();
    try {
      await api(daemon, 'POST', '/api/events', gift('Real', 'Lion', 1, 500));
      expect(
        (await api(daemon, 'POST', '/api/events?test=true', gift('Tester', 'Lion', 1, 99_999))).status,
      ).toBe(202);
      expect((await api(daemon, 'POST', '/api/events?test=yes', gift('Tester', 'Lion', 1, 1))).status).toBe(
        400,
      );
      const page = (await (await api(daemon, 'GET', '/api/events')).json()) as {
        events: { test: boolean; event: { user: { uniqueId: string } } }[];
      };
      expect(page.events.map((e) => [e.event.user.uniqueId, e.test])).toEqual([
        ['real', false],
        ['tester', true],
      ]);
      const [session] = (await (await api(daemon, 'GET', '/api/sessions')).json()) as {
        id: number;
        totals: { gifts: number; diamonds: number };
        topGifters: { uniqueId: string }[];
        testEvents: number;
      }[];
      expect(session).toMatchObject({ totals: { gifts: 1, diamonds: 500 }, testEvents: 1 });
      expect(session?.topGifters.map((g) => g.uniqueId)).toEqual(['real']);
      for (const scope of ['session', 'all']) {
        const board = (await (await api(daemon, 'GET', `/api/leaderboard?scope=${scope}`)).json()) as {
          uniqueId: string;
        }[];
        expect(board.map((v) => v.uniqueId)).toEqual(['real']);
      }
      const csv = await (await api(daemon, 'GET', `/api/sessions/${session?.id}/events.csv`)).text();
      expect(csv).not.toContain('tester');
      const removed = await api(daemon, 'DELETE', '/api/test-events');
      expect(await removed.json()).toEqual({ removed: 1 });
      const after = (await (await api(daemon, 'GET', '/api/events')).json()) as { events: unknown[] };
      expect(after.events).toHaveLength(1);
      const [kept] = (await (await api(daemon, 'GET', '/api/sessions')).json()) as { testEvents: number }[];
      expect(kept?.testEvents).toBe(0);
    } finally {
      await daemon.stop();
    }
  });

  it('charts every minute of a session (quiet ones as zero) with its chats, and orders ties one way', async () => {
    const dir = await makeDataDir();
    let now = Date.parse('2026-11-20T20:00:10Z');
    const journal = Journal.open({ path: join(dir, 'events.db'), log: () => {}, now: () => now });
    try {
      // Ids in the reverse order of the names: a tie is broken by the name.
      journal.append(
        streamEvent({ ...gift('Zed', 'Rose', 5, 1), user: { uniqueId: 'a1', nickname: 'Zed' } }),
        'api',
      );
      journal.append(
        streamEvent({ ...gift('Amy', 'Rose', 5, 1), user: { uniqueId: 'b2', nickname: 'Amy' } }),
        'api',
      );
      journal.append(streamEvent(chat('Ann', 'hi')), 'api');
      now += 3 * 60_000;
      journal.append(streamEvent(chat('Ann', 'still here')), 'api');
      const session = journal.currentSession() as number;
      expect(journal.minutes(session)).toEqual([
        { minute: '2026-11-20T20:00:00.000Z', gifts: 10, diamonds: 10, likes: 0, chats: 1 },
        { minute: '2026-11-20T20:01:00.000Z', gifts: 0, diamonds: 0, likes: 0, chats: 0 },
        { minute: '2026-11-20T20:02:00.000Z', gifts: 0, diamonds: 0, likes: 0, chats: 0 },
        { minute: '2026-11-20T20:03:00.000Z', gifts: 0, diamonds: 0, likes: 0, chats: 1 },
      ]);
      const names = (list: { nickname: string }[]) => list.map((v) => v.nickname);
      expect(names(journal.leaderboard('session', 'diamonds'))).toEqual(['Amy', 'Zed']);
      expect(names(journal.leaderboard('all', 'diamonds'))).toEqual(['Amy', 'Zed']);
      expect(names(journal.sessions()[0]?.topGifters ?? [])).toEqual(['Amy', 'Zed']);
    } finally {
      journal.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
