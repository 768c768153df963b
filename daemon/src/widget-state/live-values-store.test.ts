import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Overlay, OverlayCommandInput, StreamEvent } from '../../../shared/protocol/index.js';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { LiveValuesStore } from './live-values-store.js';

const ID = '8a0c3f9e-5b1d-4c2a-9e7f-1d2c3b4a5f60';
const layout: Overlay = {
  id: ID,
  name: 'Live',
  public: false,
  width: 1280,
  height: 720,
  widgets: [
    { id: 'goal', type: 'goal', x: 0, y: 0, title: 'Likes', source: 'likes', target: 1000, current: 4 },
    { id: 'count', type: 'counter', x: 0, y: 0, label: '', source: 'likes', value: 0 },
    { id: 'title', type: 'text', x: 0, y: 0, content: 'Hi' },
  ],
};
const like: StreamEvent = {
  type: 'like',
  platform: 'api',
  user: { uniqueId: 'fan', nickname: 'Fan' },
  data: { likeCount: 1 },
};

const goalOf = (overlay: Overlay | undefined) => {
  const goal = overlay?.widgets.find((w) => w.id === 'goal');
  return goal?.type === 'goal' ? goal.current : undefined;
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'live-values-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A store started as the daemon starts it, over one overlay held in a map (the overlay store's part). */
async function setup() {
  const timers = new FakeTimers();
  const path = join(dir, 'live-values.json');
  const store = new LiveValuesStore({ path, log: () => {}, timers });
  await store.load();
  const inForce = new Map<string, Overlay>([[ID, store.adopt(layout)]]);
  await store.settle(inForce.keys());
  const shown: Overlay[] = [];
  let commandListener: ((overlayId: string, command: OverlayCommandInput) => void) | undefined;
  store.attach({
    overlays: {
      get: (id) => inForce.get(id),
      list: () => [...inForce.values()],
      showLiveValues: (overlay) => {
        inForce.set(overlay.id, overlay);
        shown.push(overlay);
      },
    },
    commands: {
      onCommand: (listener) => {
        commandListener = listener;
        return () => {
          commandListener = undefined;
        };
      },
    },
  });
  const onDisk = async () => JSON.parse(await readFile(path, 'utf8')) as unknown;
  const command = (c: OverlayCommandInput) => commandListener?.(ID, c);
  return { timers, path, store, inForce, shown, onDisk, command };
}

describe('LiveValuesStore', () => {
  it('a first start takes the values the layout holds and writes them, private to the user', async () => {
    const { path, onDisk } = await setup();
    expect(await onDisk()).toEqual({
      overlays: { [ID]: { goal: { type: 'goal', current: 4 }, count: { type: 'counter', value: 0 } } },
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('a burst of likes: one update now, then one per interval; the file is written once, a second later', async () => {
    const { timers, store, inForce, shown, onDisk } = await setup();
    for (let i = 0; i < 300; i++) store.handleEvent(like);
    expect(shown.map(goalOf)).toEqual([5]);
    timers.advance(100);
    expect(shown.map(goalOf)).toEqual([5, 304]);
    expect(goalOf(inForce.get(ID))).toBe(304);
    // No write is due yet: the file still holds the values of the start.
    expect(await onDisk()).toMatchObject({ overlays: { [ID]: { goal: { current: 4 } } } });
    timers.advance(900);
    await store.flush();
    expect(await onDisk()).toMatchObject({ overlays: { [ID]: { goal: { current: 304 } } } });
  });

  it('writes moving values at most once per second, not per event', async () => {
    const { timers, store, onDisk } = await setup();
    store.handleEvent(like);
    timers.advance(500);
    store.handleEvent(like);
    timers.advance(100);
    // The first write is due 1 s after the first change.
    expect(await onDisk()).toMatchObject({ overlays: { [ID]: { goal: { current: 4 } } } });
    timers.advance(400);
    await store.flush();
    expect(await onDisk()).toMatchObject({ overlays: { [ID]: { goal: { current: 6 } } } });
  });

  it('a saved layout keeps the live values; a hand edit of a value sets it; a widget that leaves is forgotten', async () => {
    const { timers, store, onDisk } = await setup();
    store.handleEvent(like);
    store.handleEvent(like);
    timers.advance(100);
    // The editor's copy still says 4: the stream's 6 stays.
    const saved = store.adopt({ ...layout, name: 'Renamed' });
    expect(goalOf(saved)).toBe(6);
    // Another program wrote 50 where the file said 4: a person set it.
    const edited = {
      ...layout,
      widgets: layout.widgets.map((w) => (w.type === 'goal' ? { ...w, current: 50 } : w)),
    };
    expect(goalOf(store.adopt(edited, layout))).toBe(50);
    // The goal leaves the layout; back later under its id, it starts from the layout's value.
    store.adopt({ ...layout, widgets: layout.widgets.filter((w) => w.id !== 'goal') });
    expect(store.valueOf(ID, 'goal')).toBeUndefined();
    expect(goalOf(store.adopt(layout))).toBe(4);
    await store.flush();
    expect(await onDisk()).toMatchObject({ overlays: { [ID]: { goal: { current: 4 } } } });
  });

  it('reset zeroes a value after the changes queued before it; close writes what waits', async () => {
    const { timers, store, shown, command, path } = await setup();
    store.handleEvent(like);
    store.handleEvent(like);
    command({ command: 'reset', widgetId: 'goal', payload: {} });
    store.handleEvent(like);
    timers.advance(100);
    expect(shown.map(goalOf)).toEqual([5, 1]);
    store.handleEvent(like);
    store.handleEvent(like);
    await store.close();
    expect(shown.map(goalOf)).toEqual([5, 1, 3]);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      overlays: { [ID]: { goal: { current: 3 }, count: { value: 5 } } },
    });
  });

  it('an overlay removed leaves the file', async () => {
    const { store, onDisk } = await setup();
    store.forget(ID);
    await store.flush();
    expect(await onDisk()).toEqual({ overlays: {} });
  });
});
