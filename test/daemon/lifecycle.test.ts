// One lifecycle: the daemon started and stopped again and again in one process leaves nothing behind —
// no timer, socket, watcher or file handle — so a restart (or a test suite) never accumulates them.
import { createHook } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../daemon/src/daemon.js';
import { startRemoteAccess } from '../../daemon/src/remote-access.js';
import { api, makeDataDir, subscribe, UNREACHABLE_PLATFORMS, waitFor } from '../support/daemon.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** What the process holds open, counted by kind (Timeout, TCPServerWrap, FSReqCallback, …). */
function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** A TikTok connection that never answers: the source keeps its connect timeout and retry running. */
class SilentConnection extends EventEmitter {
  connect(): Promise<unknown> {
    return new Promise(() => {});
  }
  async disconnect(): Promise<void> {}
}

function daemonOptions(dataDir: string, logs: string[]) {
  return {
    port: 0,
    host: '127.0.0.1',
    dataDir,
    watchSettleMs: 50,
    platformUrls: UNREACHABLE_PLATFORMS,
    // A live source as `--tiktok` starts one, without the network.
    sources: [{ platform: 'tiktok' as const, channel: 'someone', enabled: true }],
    platforms: { tiktok: { createConnection: () => new SilentConnection() } },
    log: (line: string) => logs.push(line),
  };
}

/** A start that uses every part: a client subscribed, an event through ingest, the journal, then stop. */
async function startAndStop(dataDir: string): Promise<void> {
  const logs: string[] = [];
  const daemon = await startDaemon(daemonOptions(dataDir, logs));
  // Remote access on top, as `overlay-daemon start` runs it (a Gatekeeper at a closed port): the
  // daemon's close closes it first.
  const remote = await startRemoteAccess(daemon, {
    gatekeeper: 'http://127.0.0.1:9',
    log: (line) => logs.push(line),
  });
  daemon.onClose(() => remote.close(), 'remote access');
  const client = await subscribe(daemon, daemon.overlays.list()[0]!.id);
  const res = await api(daemon, 'POST', '/api/events', {
    type: 'gift',
    user: { uniqueId: 'fan', nickname: 'Fan' },
    data: { giftName: 'Rose', repeatCount: 1 },
  });
  expect(res.status).toBe(202);
  await client.next((m) => m.type === 'stream-event');
  expect((await fetch(`${daemon.url}/status`)).status).toBe(200);
  await daemon.close();
  client.close();
  expect(logs.filter((line) => line.includes('failed'))).toEqual([]);
}

/** The kinds that hold more than they did in `baseline`. */
function grownSince(baseline: Record<string, number>): Record<string, number> {
  const grown: Record<string, number> = {};
  for (const [kind, count] of Object.entries(activeResources()))
    if (count > (baseline[kind] ?? 0)) grown[kind] = count - (baseline[kind] ?? 0);
  return grown;
}

/**
 * Handles made while it runs and not yet closed, by kind and where they were made, unref'd timers and
 * watchers included (which process.getActiveResourcesInfo() leaves out: an interval left behind still
 * runs, an unref'd watcher still polls). The poller's own timers are not counted.
 */
function trackHandles(): { open(): Record<string, number>; stop(): void } {
  const kinds = new Set([
    'Timeout',
    'TCPWRAP',
    'TCPSERVERWRAP',
    'PIPEWRAP',
    'STATWATCHER',
    'FSEVENTWRAP',
    'WORKER',
    'MESSAGEPORT',
  ]);
  const alive = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (!kinds.has(type)) return;
      const frames = (new Error().stack ?? '').split('\n').slice(1);
      if (frames.some((frame) => frame.includes('test/support/wait.ts'))) return;
      const origin = frames.find((frame) => !/\(node:|lifecycle\.test/.test(frame));
      alive.set(id, `${type} ${origin?.trim() ?? ''}`);
    },
    destroy(id) {
      alive.delete(id);
    },
  }).enable();
  return {
    open() {
      const counts: Record<string, number> = {};
      for (const what of alive.values()) counts[what] = (counts[what] ?? 0) + 1;
      return counts;
    },
    stop: () => hook.disable(),
  };
}

/** Open file descriptors (files, sockets, watchers), where the system lists them. */
function openDescriptors(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

/**
 * Nothing the starts made is still open: no resource kind grew since `before`, no tracked handle is
 * open, no file descriptor more. A socket's last callback may still be ending, so it waits a moment first.
 */
async function expectNothingLeftOpen(
  before: ReturnType<typeof activeResources>,
  descriptors: number | undefined,
  made: ReturnType<typeof trackHandles>,
): Promise<void> {
  const closed = () =>
    Object.keys(grownSince(before)).length === 0 &&
    Object.keys(made.open()).length === 0 &&
    (openDescriptors() ?? 0) <= (descriptors ?? 0);
  await waitFor(closed, 5000, 'the handles to close').catch(() => undefined);
  made.stop();
  expect(grownSince(before)).toEqual({});
  expect(made.open()).toEqual({});
  expect(openDescriptors()).toBeLessThanOrEqual(descriptors ?? Number.POSITIVE_INFINITY);
}

describe('the daemon lifecycle', () => {
  it('leaves no timer, socket or file handle behind after 20 starts and stops', async () => {
    const dataDir = await makeDataDir();
    dirs.push(dataDir);
    // Warm-up: modules load, vitest's and undici's own handles settle; the baseline is taken after it.
    await startAndStop(dataDir);
    const before = activeResources();
    const descriptors = openDescriptors();
    const made = trackHandles();
    for (let i = 0; i < 20; i++) await startAndStop(dataDir);
    // A socket's last callback, or a library's one-off timer, may still be ending: they go by
    // themselves. Anything a start left open stays, 20 times over.
    await expectNothingLeftOpen(before, descriptors, made);
  }, 120_000);

  it('closes what started before a part that fails to start, and frees the data directory', async () => {
    const dataDir = await makeDataDir();
    dirs.push(dataDir);
    await startAndStop(dataDir);
    const before = activeResources();
    const descriptors = openDescriptors();
    const made = trackHandles();
    // The sources, the last part but one, fail to start: every part before them (stores, journal, hub,
    // actions, the listening server) is closed again and the start fails with their error.
    const failing = Object.defineProperty(daemonOptions(dataDir, []), 'sources', {
      get() {
        throw new Error('the sources could not start');
      },
    });
    for (let i = 0; i < 5; i++)
      await expect(startDaemon(failing)).rejects.toThrow('the sources could not start');
    await expectNothingLeftOpen(before, descriptors, made);
    // The lock and daemon.json went with them: the next start takes the folder.
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);
    await startAndStop(dataDir);
  }, 60_000);
});
