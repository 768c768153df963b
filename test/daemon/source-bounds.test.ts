// What a platform (or a viewer through it) can make the daemon do is bounded: a polling interval Twitch or
// YouTube gives never overflows the timer into a request every millisecond, Disconnect ends every Twitch
// sign-in under way, and a platform string cannot forge or recolour lines of the daemon's log.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { safeLogLine } from '../../daemon/src/log-line.js';
import type { SourceFactory } from '../../daemon/src/sources/manager.js';
import { DEFAULT_PLATFORM_URLS } from '../../daemon/src/sources/platform-urls.js';
import type { EventSource, SourceContext } from '../../daemon/src/sources/source.js';
import { startDeviceFlow } from '../../daemon/src/sources/twitch/auth.js';
import { TwitchSignInService } from '../../daemon/src/sources/twitch/sign-in.js';
import { YouTubeSource } from '../../daemon/src/sources/youtube/source.js';
import { MAX_TIMER_MS, POLL_MAX_MS, timerDelay } from '../../daemon/src/timers.js';
import type { SourceReport } from '../../shared/protocol/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeTwitch, startFakeTwitch } from '../support/fakes/twitch.js';
import { type FakeYouTube, startFakeYouTube } from '../support/fakes/youtube.js';
import { waitFor } from '../support/wait.js';

let dataDir: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'overlay-bounds-'));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rm(dataDir, { recursive: true, force: true });
});

describe('polling intervals a platform gives', () => {
  it('a huge YouTube pollingIntervalMillis waits at most 5 minutes, never a millisecond', async () => {
    const KEY = 'AIzaTestKey_0123456789';
    const CHANNEL = 'UCabcdefghijklmnopqrstuv';
    const youtube: FakeYouTube = await startFakeYouTube({ apiKey: KEY });
    cleanups.push(() => youtube.close());
    youtube.goLive(CHANNEL);
    youtube.setPollingIntervalMillis(1e12);
    const timers = new FakeTimers();
    const ctx: SourceContext = {
      emit: () => {},
      log: () => {},
      urls: { ...DEFAULT_PLATFORM_URLS, youtubeApi: youtube.url },
      timers,
      dataDir,
      twitchClientId: () => undefined,
      youtubeApiKey: () => KEY,
      streamEnded: () => {},
    };
    const source = new YouTubeSource(CHANNEL, ctx);
    cleanups.push(() => source.stop());
    source.start();
    timers.advance(0);
    await waitFor(() => source.report().state === 'connected');
    await waitFor(() => timers.nextDelay() !== undefined);
    const wait = timers.nextDelay() ?? 0;
    expect(wait).toBeGreaterThanOrEqual(1000);
    expect(wait).toBeLessThanOrEqual(POLL_MAX_MS);
  });

  it('a huge Twitch sign-in interval waits at most 5 minutes between polls', async () => {
    const twitch: FakeTwitch = await startFakeTwitch({ pollIntervalS: 1e9 });
    cleanups.push(() => twitch.close());
    const timers = new FakeTimers();
    const flow = await startDeviceFlow({ authUrl: twitch.urls.auth, clientId: twitch.clientId, timers });
    const abort = new AbortController();
    const waiting = flow.wait(abort.signal).catch(() => undefined);
    await waitFor(() => timers.nextDelay() !== undefined, 3000, 'the next poll scheduled');
    expect(timers.nextDelay()).toBeLessThanOrEqual(POLL_MAX_MS);
    abort.abort();
    await waiting;
  });

  it("the daemon's clock never hands Node a delay it would turn into 1 ms", () => {
    expect(timerDelay(1e12)).toBe(MAX_TIMER_MS);
    expect(timerDelay(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_MS);
    expect(timerDelay(Number.NaN)).toBe(MAX_TIMER_MS);
    expect(timerDelay(-5)).toBe(0);
    expect(timerDelay(1500)).toBe(1500);
  });
});

describe('the Twitch sign-in', () => {
  it('Disconnect ends every device-code poll, even of sign-ins started at the same time', async () => {
    const twitch: FakeTwitch = await startFakeTwitch({ pollIntervalS: 2 });
    cleanups.push(() => twitch.close());
    const timers = new FakeTimers();
    const service = new TwitchSignInService({
      authUrl: twitch.urls.auth,
      dataDir,
      clientId: () => twitch.clientId,
      log: () => {},
      timers,
    });
    cleanups.push(() => service.close());
    const polls = () => twitch.requests.filter((r) => r.path === '/oauth2/token').length;

    // Two clicks on "Connect Twitch" at once: one code, one poll.
    const [a, b] = await Promise.all([service.begin(), service.begin()]);
    expect(a).toMatchObject({ state: 'pending' });
    expect(b).toEqual(a);
    expect(twitch.requests.filter((r) => r.path === '/oauth2/device')).toHaveLength(1);
    timers.advance(2000);
    await waitFor(() => polls() === 1);

    await service.signOut();
    expect(service.polling).toBe(0);
    const before = polls();
    // No poll is left to wake up: nothing is scheduled, and five intervals later none was sent.
    expect(timers.size).toBe(0);
    timers.advance(5 * 2000);
    expect(polls()).toBe(before);
    expect(await service.state()).toEqual({ state: 'signed-out' });
  });
});

describe("the daemon's log", () => {
  it('escapes control characters: a channel name cannot forge a line or send terminal escapes', async () => {
    let ctx: SourceContext | undefined;
    const factory: SourceFactory = (entry, context) => {
      ctx = context;
      const source: EventSource = {
        platform: entry.platform,
        channel: entry.channel,
        start: () =>
          context.log(`[twitch] #${entry.channel}: joined\n[licence] premium tier, valid\u001b[2J`),
        stop: async () => {},
        report: (): SourceReport => ({
          platform: entry.platform,
          channel: entry.channel,
          state: 'connected',
        }),
      };
      return source;
    };
    const daemon: TestDaemon = await startTestDaemon({
      sourceFactory: factory,
      sources: [{ platform: 'twitch', channel: 'streamer', enabled: true }],
    });
    cleanups.push(() => daemon.stop());
    await waitFor(() => ctx !== undefined && daemon.logs.some((l) => l.startsWith('[twitch] #streamer')));
    const line = daemon.logs.find((l) => l.startsWith('[twitch] #streamer')) ?? '';
    expect(line).toBe('[twitch] #streamer: joined\\n[licence] premium tier, valid\\x1b[2J');
    expect(line.includes('\n') || line.includes('\u001b')).toBe(false);
  });

  it('writes each control character as an escape and leaves the rest alone', () => {
    expect(safeLogLine('a\r\nb\tc\u0000d\u0085e\u2028f\u202eg — ok ✓')).toBe(
      'a\\r\\nb\\tc\\x00d\\x85e\\u2028f\\u202eg — ok ✓',
    );
  });
});
