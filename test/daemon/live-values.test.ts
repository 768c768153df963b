// A layout saved mid-stream keeps the live widget values: the editor's copy of goal progress, counters
// and top gifters is whatever it last saw, and stream events, not the save, own them.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Overlay, Widget } from '../../shared/protocol/index.js';
import { api, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';

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
