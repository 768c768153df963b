// Stream events through the real daemon: rules fire overlay-commands, widget state follows events (coalesced, persisted), reset, demo.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RuleEngine } from '../../daemon/src/rules/engine.js';
import { withStoredValues } from '../../daemon/src/widget-state/live-values-store.js';
import { LiveValuesFile } from '../../shared/live-values.js';
import {
  type Overlay,
  parseJsonWith,
  type ServerMessage,
  type StreamEvent,
  type Widget,
} from '../../shared/protocol/index.js';
import { api, makeDataDir, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';
import type { TestWsClient } from '../support/ws.js';

let daemon: TestDaemon;
const clients: TestWsClient[] = [];

const widgets = [
  { id: 'alerts', type: 'alert', x: 0, y: 0 },
  { id: 'goal', type: 'goal', x: 0, y: 0, title: 'Likes', source: 'likes', target: 1000, current: 0 },
  { id: 'follows', type: 'counter', x: 0, y: 0, label: 'Follows', source: 'follows', value: 0 },
  { id: 'top', type: 'top-gifters', x: 0, y: 0, maxEntries: 3, entries: [] },
  { id: 'title', type: 'text', x: 0, y: 0, content: 'Hi' },
];

const user = (name: string) => ({ uniqueId: name.toLowerCase(), nickname: name });
const gift = (name: string, giftName: string, repeatCount: number, diamondCount = 1): StreamEvent => ({
  type: 'gift',
  platform: 'api',
  user: user(name),
  data: { giftName, repeatCount, diamondCount },
});
const like = (likeCount: number): StreamEvent => ({
  type: 'like',
  platform: 'api',
  user: user('Fan'),
  data: { likeCount },
});

async function newOverlay(name: string): Promise<string> {
  const res = await api(daemon, 'POST', '/api/overlays', { name, width: 1920, height: 1080, widgets });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function client(overlayId: string): Promise<TestWsClient> {
  const c = await subscribe(daemon, overlayId);
  clients.push(c);
  return c;
}

async function postEvent(event: unknown): Promise<{ status: number; body: unknown }> {
  const res = await api(daemon, 'POST', '/api/events', event);
  return { status: res.status, body: await res.json() };
}

async function putRules(rules: unknown): Promise<void> {
  expect((await api(daemon, 'PUT', '/api/rules', rules)).status).toBe(200);
}

function widgetOf(message: ServerMessage | undefined, id: string): Widget | undefined {
  if (!message || (message.type !== 'overlay-update' && message.type !== 'init')) return undefined;
  return message.widgets.find((w) => w.id === id);
}

const goalOf = (m: ServerMessage | undefined) => {
  const w = widgetOf(m, 'goal');
  return w?.type === 'goal' ? w.current : undefined;
};

/**
 * An overlay's widgets as the data directory holds them: the layout of overlays/<id>.json with the values
 * kept from events in live-values.json (events never rewrite the overlay file).
 */
async function storedWidgets(overlayId: string, root = daemon.dataDir.root): Promise<Widget[]> {
  const layout = JSON.parse(await readFile(join(root, 'overlays', `${overlayId}.json`), 'utf8')) as Overlay;
  const live = parseJsonWith(
    LiveValuesFile,
    await readFile(join(root, 'live-values.json'), 'utf8').catch(() => '{"overlays":{}}'),
  );
  return live.ok ? withStoredValues(layout, live.value).widgets : layout.widgets;
}

async function fileGoal(overlayId: string, root?: string): Promise<number | undefined> {
  const goal = (await storedWidgets(overlayId, root)).find((w) => w.id === 'goal');
  return goal?.type === 'goal' ? goal.current : undefined;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(() => daemon?.stop());
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await putRules([]);
});

describe('rules', () => {
  it('fires a gift rule: stream-event first, then the templated show-alert; 202 names the rule', async () => {
    const overlayId = await newOverlay('Rules');
    const c = await client(overlayId);
    await putRules([
      { id: 'roses', trigger: 'gift', conditions: { giftName: 'rose' }, actions: [alertAction(overlayId)] },
      { id: 'lions', trigger: 'gift', conditions: { giftName: 'lion' }, actions: [alertAction(overlayId)] },
    ]);
    const answer = await postEvent(gift('Alice', 'Rose', 5));
    expect(answer).toEqual({ status: 202, body: { accepted: true, firedRules: ['roses'] } });
    await c.next((m) => m.type === 'overlay-command');
    const order = c.received.filter((m) => m.type === 'stream-event' || m.type === 'overlay-command');
    expect(order.map((m) => m.type)).toEqual(['stream-event', 'overlay-command']);
    expect(order[1]).toEqual({
      type: 'overlay-command',
      seq: expect.any(Number),
      at: expect.any(Number),
      command: 'show-alert',
      widgetId: 'alerts',
      payload: { text: 'Alice sent 5 × Rose', duration: 1500 },
    });
    expect(await postEvent(like(3))).toEqual({ status: 202, body: { accepted: true, firedRules: [] } });
  });

  it('an event posted with an `at` over 5 minutes old is caught up: kept at its time and counted, no rule fires', async () => {
    const overlayId = await newOverlay('Late');
    const c = await client(overlayId);
    await putRules([{ id: 'roses', trigger: 'gift', actions: [alertAction(overlayId)] }]);
    const at = Date.now() - 3 * 3_600_000;
    const res = await api(
      daemon,
      'POST',
      `/api/events?at=${new Date(at).toISOString()}`,
      gift('Late', 'Rose', 2),
    );
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: true, firedRules: [] });
    // Four minutes old is still live.
    const recent = await api(
      daemon,
      'POST',
      `/api/events?at=${Date.now() - 4 * 60_000}`,
      gift('Soon', 'Rose', 1),
    );
    expect(await recent.json()).toEqual({ accepted: true, firedRules: ['roses'] });
    await c.next((m) => m.type === 'overlay-command');
    const late = daemon.journal
      .events({ after: 0, limit: 1000 })
      .events.find((e) => e.event.user.uniqueId === 'late');
    expect(late).toMatchObject({ at: new Date(at).toISOString(), caughtUp: true });
    // Counted all the same: the top gifters have it.
    await waitFor(
      () =>
        (
          daemon.overlays.get(overlayId)?.widgets.find((w) => w.id === 'top') as
            | { entries?: { uniqueId: string }[] }
            | undefined
        )?.entries?.some((e) => e.uniqueId === 'late') === true,
    );
    expect(c.received.filter((m) => m.type === 'overlay-command')).toHaveLength(1);
    const bad = await api(daemon, 'POST', '/api/events?at=yesterday', gift('Bad', 'Rose', 1));
    expect(bad.status).toBe(400);
  });

  it('answers an event before the actions it fired start, and starts them right after, in firing order', async () => {
    const overlayId = await newOverlay('After the answer');
    await putRules([
      { id: 'first', trigger: 'gift', actions: [alertAction(overlayId)] },
      { id: 'second', trigger: 'gift', actions: [{ ...alertAction(overlayId), widgetId: 'title' }] },
    ]);
    const sent: string[] = [];
    const stop = daemon.hub.onCommand((_id, command) => sent.push(command.widgetId));
    try {
      const report = daemon.ingest(gift('Bo', 'Rose', 1));
      expect(report.firedRules).toEqual(['first', 'second']);
      expect(sent).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(sent).toEqual(['alerts', 'title']);
    } finally {
      stop();
    }
  });

  it('compiles the rules once per change, not once per event', async () => {
    const overlayId = await newOverlay('Compile');
    await putRules([{ id: 'r', trigger: 'chat', actions: [alertAction(overlayId)] }]);
    const load = vi.spyOn(RuleEngine.prototype, 'load');
    try {
      for (let i = 0; i < 20; i++)
        await postEvent({ type: 'chat', platform: 'api', user: user('C'), data: { comment: `hi ${i}` } });
      expect(load).toHaveBeenCalledTimes(1);
      await putRules([{ id: 'r2', trigger: 'chat', actions: [alertAction(overlayId)] }]);
      const { body } = await postEvent({
        type: 'chat',
        platform: 'api',
        user: user('C'),
        data: { comment: 'again' },
      });
      expect(body).toEqual({ accepted: true, firedRules: ['r2'] });
      expect(load).toHaveBeenCalledTimes(2);
    } finally {
      load.mockRestore();
    }
  });
});

function alertAction(overlayId: string) {
  return {
    overlayId,
    widgetId: 'alerts',
    command: 'show-alert',
    payload: { text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: 1500 },
  };
}

describe('widget state', () => {
  it('moves the goal, the counter and the top gifters, broadcasts and persists them', async () => {
    const overlayId = await newOverlay('State');
    const c = await client(overlayId);
    await postEvent(like(7));
    await postEvent({ type: 'follow', platform: 'api', user: user('Newbie'), data: {} });
    await postEvent(gift('Whale', 'Lion', 2, 500));
    await postEvent(gift('Rosa', 'Rose', 10, 1));
    const last = () => [...c.received].reverse().find((m) => m.type === 'overlay-update');
    await waitFor(() => {
      const top = widgetOf(last(), 'top');
      return top?.type === 'top-gifters' && top.entries.length === 2;
    });
    expect(goalOf(last())).toBe(7);
    expect(widgetOf(last(), 'follows')).toMatchObject({ value: 1 });
    expect(widgetOf(last(), 'top')).toMatchObject({
      entries: [
        { uniqueId: 'whale', nickname: 'Whale', diamonds: 1000 },
        { uniqueId: 'rosa', nickname: 'Rosa', diamonds: 10 },
      ],
    });
    // The last broadcast state is the one on disk once its write lands.
    const broadcast = last();
    if (broadcast?.type !== 'overlay-update') throw new Error('no overlay-update');
    await waitFor(
      async () => JSON.stringify(await storedWidgets(overlayId)) === JSON.stringify(broadcast.widgets),
      3000,
      'the state on disk',
    );
    expect(daemon.overlays.get(overlayId)?.widgets.find((w) => w.id === 'top')).toMatchObject({
      entries: [{ diamonds: 1000 }, { diamonds: 10 }],
    });
  });

  it('turns a flood of likes into at most one overlay-update per 100 ms, and loses none', async () => {
    const overlayId = await newOverlay('Flood');
    const c = await client(overlayId);
    const started = performance.now();
    for (let i = 0; i < 500; i++) daemon.ingest(like(2));
    await Promise.all(Array.from({ length: 50 }, () => postEvent(like(1))));
    const elapsed = performance.now() - started;
    const updates = () => c.received.filter((m) => m.type === 'overlay-update');
    await waitFor(() => goalOf(updates().at(-1)) === 1050, 3000, 'the final goal');
    // The first change goes out at once, then one trailing update per interval at most.
    expect(updates().length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2);
    expect(updates().length).toBeLessThan(20);
    await waitFor(async () => (await fileGoal(overlayId)) === 1050, 3000, 'the goal on disk');
    // Every event still reached the client as a stream-event.
    expect(c.received.filter((m) => m.type === 'stream-event')).toHaveLength(550);
  });

  it('keeps an edit saved while changes wait, and adds the waiting likes to it', async () => {
    const overlayId = await newOverlay('Edit');
    daemon.ingest(like(1)); // flushed at once
    daemon.ingest(like(4)); // waits for the interval
    // An editor's save in the same moment (in force at once, as a PUT is).
    const current = daemon.overlays.get(overlayId)!;
    const saved = daemon.overlays.update({
      ...current,
      widgets: current.widgets.map((w) => (w.type === 'text' ? { ...w, content: 'Edited' } : w)),
    });
    expect((await saved).ok).toBe(true);
    await waitFor(async () => (await fileGoal(overlayId)) === 5, 3000, 'the waiting likes on disk');
    expect((await storedWidgets(overlayId)).find((w) => w.id === 'title')).toMatchObject({
      content: 'Edited',
    });
  });

  it('picks up a hand edit of the overlay file within a second during a flood of likes, and keeps it on disk', async () => {
    // Files settle for 150 ms before they are read, as they do by default: longer than the 100 ms between
    // two writes of the goal, so the daemon writes again before the watcher reports the edit.
    const flooded = await startTestDaemon({ watchSettleMs: 150 });
    try {
      const created = await api(flooded, 'POST', '/api/overlays', {
        name: 'Flooded',
        width: 1920,
        height: 1080,
        widgets,
      });
      const overlayId = ((await created.json()) as { id: string }).id;
      const file = join(flooded.dataDir.overlaysDir, `${overlayId}.json`);
      const onDisk = async () =>
        JSON.parse(await readFile(file, 'utf8')) as { name: string; widgets: Widget[] };
      const goalOnDisk = () => fileGoal(overlayId, flooded.dataDir.root);
      const c = await subscribe(flooded, overlayId);
      clients.push(c);
      // Likes every 10 ms for 2 s: the goal is written every 100 ms all along. The pause paces the flood,
      // it waits for nothing: a real daemon's file watcher and writes run on the real clock, so the flood
      // has to span real time for the hand edit to land among the writes (no fake clock reaches them).
      let flooding = true;
      const flood = (async () => {
        for (let i = 0; i < 200 && flooding; i++) {
          flooded.ingest(like(1));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      try {
        // Once the moving goal is on disk (live-values.json: events never write the overlay file), another
        // program saves the overlay file in place, as an editor does.
        const update = await c.next((m) => m.type === 'overlay-update' && (goalOf(m) ?? 0) > 5);
        await waitFor(
          async () => ((await goalOnDisk()) ?? 0) >= (goalOf(update) ?? 0),
          3000,
          'that goal on disk',
        );
        await writeFile(file, JSON.stringify({ ...(await onDisk()), name: 'Renamed by hand' }, null, 2));
        const editedAt = Date.now();
        await c.next((m) => m.type === 'overlay-update' && m.overlay.name === 'Renamed by hand', 1000);
        expect(Date.now() - editedAt).toBeLessThanOrEqual(1000);
        await flood;
      } finally {
        flooding = false;
        await flood;
      }
      // The likes after the edit count on top of it (all 200 of the flood, once its trailing update is out),
      // and the edit is still on disk once the flood is over.
      const lastUpdate = () => c.received.filter((m) => m.type === 'overlay-update').at(-1);
      await waitFor(() => goalOf(lastUpdate()) === 200, 3000, 'the last update');
      const last = lastUpdate();
      expect(last).toMatchObject({ overlay: { name: 'Renamed by hand' } });
      await waitFor(async () => (await goalOnDisk()) === goalOf(last), 10_000, 'the last goal on disk');
      expect(await onDisk()).toMatchObject({ name: 'Renamed by hand' });
      expect(flooded.overlays.get(overlayId)?.name).toBe('Renamed by hand');
    } finally {
      await flooded.stop();
    }
  });

  it('resets kept state by API command and by rule, after the changes queued before it', async () => {
    const overlayId = await newOverlay('Reset');
    const c = await client(overlayId);
    daemon.ingest(like(10));
    daemon.ingest(like(5));
    const res = await api(daemon, 'POST', `/api/overlays/${overlayId}/commands`, {
      command: 'reset',
      widgetId: 'goal',
    });
    expect(res.status).toBe(202);
    await c.next((m) => m.type === 'overlay-command' && m.command === 'reset');
    await waitFor(async () => (await fileGoal(overlayId)) === 0, 3000, 'the reset goal on disk');
    const updates = () => c.received.filter((m) => m.type === 'overlay-update');
    await waitFor(() => goalOf(updates().at(-1)) === 0, 3000, 'the reset broadcast');

    await postEvent(like(3));
    await postEvent(gift('Whale', 'Lion', 1, 100));
    await waitFor(() => goalOf(updates().at(-1)) === 3, 3000, 'likes after the reset');
    await putRules([
      {
        id: 'reset-top',
        trigger: 'chat',
        conditions: { chatIncludes: '!reset' },
        actions: [{ overlayId, widgetId: 'top', command: 'reset' }],
      },
    ]);
    expect(
      (await postEvent({ type: 'chat', platform: 'api', user: user('Mod'), data: { comment: '!RESET' } }))
        .body,
    ).toEqual({
      accepted: true,
      firedRules: ['reset-top'],
    });
    await waitFor(() => {
      const top = widgetOf(updates().at(-1), 'top');
      return top?.type === 'top-gifters' && top.entries.length === 0;
    });
    expect(goalOf(updates().at(-1))).toBe(3);
  });

  it('writes the last waiting change on shutdown', async () => {
    const dir = await makeDataDir();
    try {
      const own = await startTestDaemon({ dataDir: dir });
      const created = await api(own, 'POST', '/api/overlays', {
        name: 'S',
        width: 100,
        height: 100,
        widgets,
      });
      const { id } = (await created.json()) as { id: string };
      own.ingest(like(1));
      own.ingest(like(2));
      own.ingest(like(3));
      await own.stop();
      const goal = (await storedWidgets(id, dir)).find((w) => w.id === 'goal');
      expect(goal).toMatchObject({ current: 6 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('first start', () => {
  it('creates the demo overlay with a gift rule that alerts on it; an existing rules.json is left alone', async () => {
    const dir = await makeDataDir();
    try {
      const demo = await startTestDaemon({ dataDir: dir });
      const overlay = demo.overlays.list()[0]!;
      expect(overlay.widgets.map((w) => `${w.id}:${w.type}`)).toEqual([
        'welcome:text',
        'alerts:alert',
        'like-goal:goal',
        'chat:chat',
        'top-gifters:top-gifters',
      ]);
      const c = await subscribe(demo, overlay.id);
      const res = await api(demo, 'POST', '/api/events', gift('Alice', 'Rose', 5));
      expect(await res.json()).toEqual({ accepted: true, firedRules: ['demo-gift-alert'] });
      expect(await c.next((m) => m.type === 'overlay-command')).toMatchObject({
        command: 'show-alert',
        widgetId: 'alerts',
        payload: { text: 'Alice sent 5 × Rose', duration: 5000 },
      });
      c.close();
      await demo.stop();

      // A later start with rules of the streamer's own keeps them.
      await writeFile(join(dir, 'rules.json'), '[]\n');
      const again = await startTestDaemon({ dataDir: dir });
      expect(again.rules.current()).toEqual([]);
      expect(again.overlays.list()).toHaveLength(1);
      await again.stop();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes no demo rule into a data directory that already has overlays', async () => {
    const dir = await makeDataDir();
    try {
      const first = await startTestDaemon({ dataDir: dir });
      await first.stop();
      await rm(join(dir, 'rules.json'));
      const second = await startTestDaemon({ dataDir: dir });
      expect(second.rules.current()).toEqual([]);
      await second.stop();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
