// A layout saved mid-stream keeps the live widget values: the editor's copy of goal progress, counters
// and top gifters is whatever it last saw, and stream events, not the save, own them.
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Overlay, Widget } from '../../shared/protocol/index.js';
import { api, makeDataDir, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';

let daemon: TestDaemon;
beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(() => daemon?.stop());

const viewer = { uniqueId: 'whale', nickname: 'Whale' };
const like = (likeCount: number) => ({ type: 'like', user: viewer, data: { likeCount } });
const gift = (diamondCount: number) => ({
  type: 'gift',
  user: viewer,
  data: { giftName: 'Rose', repeatCount: 1, diamondCount },
});

async function send(event: unknown): Promise<void> {
  expect((await api(daemon, 'POST', '/api/events', event)).status).toBe(202);
}

const widget = (overlay: Overlay | undefined, id: string) => overlay?.widgets.find((w) => w.id === id);
const goalOf = (overlay: Overlay | undefined) => (widget(overlay, 'goal') as { current?: number })?.current;

describe('a layout save during a stream', () => {
  it('keeps the goal, counter and top gifters that events raised since the editor loaded', async () => {
    const created = await api(daemon, 'POST', '/api/overlays', {
      name: 'Live',
      width: 1280,
      height: 720,
      widgets: [
        { id: 'goal', type: 'goal', x: 0, y: 0, title: 'Likes', source: 'likes', target: 100, current: 0 },
        { id: 'count', type: 'counter', x: 0, y: 100, label: 'Likes', source: 'likes', value: 0 },
        { id: 'top', type: 'top-gifters', x: 0, y: 200, entries: [] },
      ],
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as Overlay;
    const path = `/api/overlays/${id}`;
    const page = await subscribe(daemon, id);

    await send(like(2));
    await waitFor(() => goalOf(daemon.overlays.get(id)) === 2);
    // The editor opens now: its copy says 2.
    const loaded = await api(daemon, 'GET', path);
    const etag = loaded.headers.get('etag') ?? '';
    const { id: _id, ...stale } = (await loaded.json()) as Overlay;

    await send(like(3));
    await send(gift(50));
    await waitFor(() => goalOf(daemon.overlays.get(id)) === 5);
    await waitFor(
      () => (widget(daemon.overlays.get(id), 'top') as { entries: unknown[] }).entries.length === 1,
    );

    // The streamer renames the goal and adds a counter of their own; the save quotes the tag it loaded.
    const edited = {
      ...stale,
      widgets: [
        ...stale.widgets.map((w) => (w.id === 'goal' ? { ...w, title: 'Likes tonight' } : w)),
        { id: 'extra', type: 'counter', x: 0, y: 300, label: 'Since the save', value: 7 },
      ],
    };
    const saved = await fetch(`${daemon.url}${path}`, {
      method: 'PUT',
      headers: {
        Authorization: `Bearer ${daemon.adminKey}`,
        'Content-Type': 'application/json',
        'If-Match': etag,
      },
      body: JSON.stringify(edited),
    });
    expect(saved.status).toBe(200);
    const answer = (await saved.json()) as Overlay;
    const expected: Partial<Widget>[] = [
      { id: 'goal', title: 'Likes tonight', current: 5 },
      { id: 'count', value: 5 },
      { id: 'top', entries: [{ uniqueId: 'whale', nickname: 'Whale', diamonds: 50 }] },
      // A widget new to the layout starts where the layout says.
      { id: 'extra', value: 7 },
    ] as Partial<Widget>[];
    expect(answer.widgets).toMatchObject(expected);
    expect(daemon.overlays.get(id)?.widgets).toMatchObject(expected);

    // The OBS page is told the new layout with the live values, never the editor's 2.
    const update = await page.next(
      (m) => m.type === 'overlay-update' && field(m.widgets, 'title') === 'Likes tonight',
    );
    expect(update.type === 'overlay-update' && field(update.widgets, 'current')).toBe(5);

    await daemon.overlays.flush();
    const file = JSON.parse(
      await readFile(join(daemon.dataDir.overlaysDir, `${id}.json`), 'utf8'),
    ) as Overlay;
    expect(goalOf(file)).toBe(5);

    // And the stream goes on from there.
    await send(like(1));
    await waitFor(() => goalOf(daemon.overlays.get(id)) === 6);
    page.close();
  });
});

/** A field of the goal widget in a broadcast widget list. */
const field = (widgets: Widget[], name: 'title' | 'current') =>
  (widgets.find((w) => w.id === 'goal') as Record<string, unknown> | undefined)?.[name];

describe('live values apart from the layout', () => {
  const layout = {
    name: 'Storm',
    width: 1280,
    height: 720,
    widgets: [
      { id: 'goal', type: 'goal', x: 0, y: 0, title: 'Likes', source: 'likes', target: 1000, current: 0 },
      { id: 'count', type: 'counter', x: 0, y: 100, label: 'Likes', source: 'likes', value: 0 },
    ],
  };

  it('a like storm moves the page but never rewrites the overlay file; the values are back after a restart', async () => {
    const dir = await makeDataDir();
    try {
      const first = await startTestDaemon({ dataDir: dir });
      const created = await api(first, 'POST', '/api/overlays', layout);
      const { id } = (await created.json()) as Overlay;
      const path = `/api/overlays/${id}`;
      const etag = (await api(first, 'GET', path)).headers.get('etag');
      await first.overlays.flush();
      const file = join(first.dataDir.overlaysDir, `${id}.json`);
      const before = { text: await readFile(file, 'utf8'), mtimeMs: (await stat(file)).mtimeMs };
      const page = await subscribe(first, id);

      for (let i = 0; i < 300; i++)
        first.ingest({ type: 'like', platform: 'api', user: viewer, data: { likeCount: 1 } });
      await page.next((m) => m.type === 'overlay-update' && field(m.widgets, 'current') === 300);
      // The dashboard's GET follows the stream, under the same tag: the layout did not change.
      const got = await api(first, 'GET', path);
      expect(goalOf((await got.json()) as Overlay)).toBe(300);
      expect(got.headers.get('etag')).toBe(etag);
      await first.liveValues.flush();
      expect({ text: await readFile(file, 'utf8'), mtimeMs: (await stat(file)).mtimeMs }).toEqual(before);
      // The values are the user's alone, in their own file.
      expect((await stat(first.dataDir.liveValuesFile)).mode & 0o777).toBe(0o600);
      page.close();
      await first.stop();

      const again = await startTestDaemon({ dataDir: dir });
      try {
        expect(again.overlays.get(id)?.widgets).toMatchObject([
          { id: 'goal', current: 300 },
          { id: 'count', value: 300 },
        ]);
        const reopened = await subscribe(again, id);
        const init = reopened.received.find((m) => m.type === 'init');
        expect(init?.type === 'init' && field(init.widgets, 'current')).toBe(300);
        reopened.close();
      } finally {
        await again.stop();
      }
      expect(await readFile(file, 'utf8')).toBe(before.text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an overlay file holding values seeds them at the first start; a hand edit of a value sets it', async () => {
    const dir = await makeDataDir();
    try {
      const first = await startTestDaemon({ dataDir: dir });
      const { id } = (await (await api(first, 'POST', '/api/overlays', layout)).json()) as Overlay;
      await first.stop();
      // A data directory from before live-values.json: the values are in the overlay file.
      await rm(join(dir, 'live-values.json'), { force: true });
      const file = join(dir, 'overlays', `${id}.json`);
      const old = JSON.parse(await readFile(file, 'utf8')) as Overlay;
      const withValues = (goal: number) =>
        JSON.stringify(
          { ...old, widgets: old.widgets.map((w) => (w.id === 'goal' ? { ...w, current: goal } : w)) },
          null,
          2,
        );
      await writeFile(file, withValues(42));

      const daemon = await startTestDaemon({ dataDir: dir, watchSettleMs: 50 });
      try {
        expect(goalOf(daemon.overlays.get(id))).toBe(42);
        const stored = JSON.parse(await readFile(join(dir, 'live-values.json'), 'utf8'));
        expect(stored).toMatchObject({ overlays: { [id]: { goal: { type: 'goal', current: 42 } } } });
        daemon.ingest({ type: 'like', platform: 'api', user: viewer, data: { likeCount: 1 } });
        await waitFor(() => goalOf(daemon.overlays.get(id)) === 43);

        // Another program sets the goal in the overlay file: that value is in force, and the stream goes on.
        const page = await subscribe(daemon, id);
        await writeFile(file, withValues(7));
        await page.next((m) => m.type === 'overlay-update' && field(m.widgets, 'current') === 7);
        daemon.ingest({ type: 'like', platform: 'api', user: viewer, data: { likeCount: 1 } });
        await waitFor(() => goalOf(daemon.overlays.get(id)) === 8);
        page.close();
      } finally {
        await daemon.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('test events and the kept values', () => {
  it('a test gift reaches no goal, counter or top gifters, in force or in live-values.json', async () => {
    const created = await api(daemon, 'POST', '/api/overlays', {
      name: 'Tests',
      width: 1280,
      height: 720,
      widgets: [
        { id: 'goal', type: 'goal', x: 0, y: 0, title: 'Gifts', source: 'diamonds', target: 1000 },
        { id: 'count', type: 'counter', x: 0, y: 100, label: 'Gifts', source: 'gifts' },
        { id: 'top', type: 'top-gifters', x: 0, y: 200, entries: [] },
      ],
    });
    const { id } = (await created.json()) as Overlay;
    const faker = { uniqueId: 'faker', nickname: 'Faker' };
    const testGift = {
      type: 'gift',
      user: faker,
      data: { giftName: 'Lion', repeatCount: 1, diamondCount: 999 },
    };
    expect((await api(daemon, 'POST', '/api/events?test=true', testGift)).status).toBe(202);
    // A real gift after it: once that one shows, the test gift has had its turn.
    await send(gift(5));
    await waitFor(() => goalOf(daemon.overlays.get(id)) === 5);
    const overlay = daemon.overlays.get(id);
    expect((widget(overlay, 'count') as { value: number }).value).toBe(1);
    expect((widget(overlay, 'top') as { entries: unknown[] }).entries).toEqual([
      expect.objectContaining({ uniqueId: 'whale', diamonds: 5 }),
    ]);
    await daemon.liveValues.flush();
    const stored = await readFile(daemon.dataDir.liveValuesFile, 'utf8');
    expect(stored).toContain('whale');
    expect(stored).not.toContain('faker');
  });
});
