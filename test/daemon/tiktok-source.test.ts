// The TikTok source inside the real daemon, as the daemon runs it (set up in settings.json, built by the
// source manager, a fake connection, no network): /status follows its state, its events reach clients.
import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killCliProcesses, spawnCli } from '../support/cli.js';
import { api, makeDataDir, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';

/** Stands in for TikTokLiveConnection: connect() settles when the test says so. */
class FakeConnection extends EventEmitter {
  private settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  connect(): Promise<unknown> {
    return new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }
  async disconnect(): Promise<void> {}
  accept(): void {
    this.settle?.resolve();
  }
}

let daemon: TestDaemon;
const connections: FakeConnection[] = [];
const latest = () => connections[connections.length - 1]!;

interface TikTokStatus {
  state: string;
  username: string;
  lastError?: string;
  attempts: number;
}

interface Status {
  tiktok?: TikTokStatus;
  sources?: { platform: string; channel: string; state: string }[];
}

async function status(): Promise<Status> {
  return (await (await fetch(`${daemon.url}/status`)).json()) as Status;
}

async function tiktokStatus(): Promise<TikTokStatus> {
  return (await status()).tiktok!;
}

/** The Sources view's save: settings.json's `sources` replaced. */
async function putSources(sources: { platform: string; channel: string; enabled: boolean }[]): Promise<void> {
  const current = (await (await api(daemon, 'GET', '/api/settings')).json()) as Record<string, unknown>;
  const res = await api(daemon, 'PUT', '/api/settings', { ...current, sources });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  daemon = await startTestDaemon({
    platforms: {
      tiktok: {
        createConnection: () => {
          const c = new FakeConnection();
          connections.push(c);
          return c;
        },
        // Retry at once, so the test need not wait out the real backoff.
        source: { backoff: { initialMs: 10, maxMs: 10 }, random: () => 0.5 },
      },
    },
  });
});
afterAll(() => daemon?.stop());

describe('TikTok source in the daemon', () => {
  it('shows its state in GET /status and the log, and its events reach subscribed clients', async () => {
    const overlayId = daemon.overlays.list()[0]!.id;
    const client = await subscribe(daemon, overlayId);
    await putSources([{ platform: 'tiktok', channel: '@streamer', enabled: true }]);
    expect(await tiktokStatus()).toMatchObject({ state: 'connecting', username: 'streamer' });

    latest().accept();
    await waitFor(async () => (await tiktokStatus()).state === 'connected', 3000, 'connected');
    latest().emit('chat', {
      common: { msgId: '1' },
      comment: 'hi there',
      user: { userId: '14', uniqueId: 'chatty', nickname: 'Chatty' },
    });
    expect(await client.next((m) => m.type === 'stream-event')).toEqual({
      type: 'stream-event',
      seq: expect.any(Number),
      at: expect.any(Number),
      event: {
        type: 'chat',
        platform: 'tiktok',
        user: { uniqueId: 'chatty', nickname: 'Chatty' },
        data: { comment: 'hi there' },
      },
    });

    latest().emit('disconnected', { code: 1006, reason: 'gone' });
    await waitFor(async () => (await tiktokStatus()).state === 'reconnecting', 3000, 'reconnecting');
    expect((await tiktokStatus()).lastError).toBeTruthy();
    await waitFor(() => connections.length === 2, 3000, 'a second attempt');
    latest().accept();
    await waitFor(async () => (await tiktokStatus()).state === 'connected', 3000, 'connected again');

    // Turned off in the Sources view: it disconnects, and /status says it is off.
    await putSources([{ platform: 'tiktok', channel: '@streamer', enabled: false }]);
    await waitFor(() => daemon.logs.includes('[tiktok] @streamer is now disconnected'), 3000, 'disconnected');
    expect((await status()).sources).toEqual([
      expect.objectContaining({ platform: 'tiktok', channel: 'streamer', state: 'off' }),
    ]);
    const lines = daemon.logs.filter((l) => l.startsWith('[tiktok] @streamer is now '));
    expect(lines.map((l) => /is now (\w+)/.exec(l)?.[1])).toEqual([
      'connecting',
      'connected',
      'reconnecting',
      'connected',
      'disconnected',
    ]);
    client.close();
  });
});

describe('overlay-daemon start --tiktok', () => {
  let dir: string | undefined;
  afterEach(async () => {
    killCliProcesses();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts the source, reports it in /status, and stops with the server', async () => {
    dir = await makeDataDir();
    const r = spawnCli(['start', '--port', '0', '--data-dir', dir, '--tiktok', 'some.streamer']);
    await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(r.stdout()), 15_000, 'listening');
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(r.stdout())![1];
    const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as {
      tiktok: TikTokStatus;
    };
    // No network here: it is trying (connecting, or reconnecting after a failure), never silently absent.
    expect(status.tiktok).toMatchObject({ source: 'tiktok', username: 'some.streamer' });
    expect(['connecting', 'reconnecting', 'offline']).toContain(status.tiktok.state);
    await waitFor(
      () => r.stderr().includes('[tiktok] @some.streamer is now '),
      5000,
      'a state line in the log',
    );
    // A connect still under way (no network here) must not hold the process: it used to take about 8 s.
    const stopAt = Date.now();
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(Date.now() - stopAt).toBeLessThan(5000);
  });

  it('refuses a username TikTok cannot have, with exit 2', async () => {
    const r = spawnCli(['start', '--port', '0', '--tiktok', 'not a name!']);
    expect(await r.exited).toBe(2);
    expect(r.stderr()).toContain('--tiktok must be a TikTok username');
  });
});
