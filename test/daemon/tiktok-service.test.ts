// The TikTok source inside the real daemon (a fake connection, no network): /status follows its state, its events reach clients.
import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTikTokService, type TikTokService } from '../../daemon/src/events/tiktok-service.js';
import { killCliProcesses, spawnCli } from '../support/cli.js';
import { makeDataDir, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';

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
let service: TikTokService | undefined;
const connections: FakeConnection[] = [];
const latest = () => connections[connections.length - 1]!;

interface TikTokStatus {
  state: string;
  username: string;
  lastError?: string;
  attempts: number;
}

async function tiktokStatus(): Promise<TikTokStatus> {
  const body = (await (await fetch(`${daemon.url}/status`)).json()) as { tiktok: TikTokStatus };
  return body.tiktok;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterEach(async () => {
  await service?.stop();
  service = undefined;
});
afterAll(() => daemon?.stop());

describe('TikTok source in the daemon', () => {
  it('shows its state in GET /status and the log, and its events reach subscribed clients', async () => {
    const overlayId = daemon.overlays.list()[0]!.id;
    const client = await subscribe(daemon, overlayId);
    service = startTikTokService(daemon, {
      username: '@streamer',
      createConnection: () => {
        const c = new FakeConnection();
        connections.push(c);
        return c;
      },
      log: (line) => daemon.logs.push(line),
      // Retry at once, so the test need not wait out the real backoff.
      source: { backoff: { initialMs: 10, maxMs: 10 }, random: () => 0.5 },
    });
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

    await service.stop();
    expect(await tiktokStatus()).toMatchObject({ state: 'disconnected' });
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
