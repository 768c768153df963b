// `overlay-daemon connect youtube` and `disconnect youtube` as a streamer runs them, against the YouTube
// stand-in's sign-in service (Google's flow for limited-input devices) and a Gatekeeper stand-in whose
// configuration names the Google client: the code and the link shown, the waits Google asks for (and
// longer after slow_down), youtube.json written 0600 once allowed, nothing written when the streamer
// refuses or the code runs out, and what is missing said in words.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runYouTubeConnect } from '../../daemon/src/cli/connect-youtube.js';
import { DEFAULT_CONFIG } from '../../shared/config.js';
import { killCliProcesses, runCli, spawnCli } from '../support/cli.js';
import { makeDataDir } from '../support/daemon.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeGatekeeper, startFakeGatekeeper } from '../support/fakes/gatekeeper.js';
import { type FakeYouTube, startFakeYouTube } from '../support/fakes/youtube.js';
import { waitFor } from '../support/wait.js';

let youtube: FakeYouTube;
let gatekeeper: FakeGatekeeper;
let dataDir: string;

beforeEach(async () => {
  gatekeeper = await startFakeGatekeeper();
  await googleAt({ deviceIntervalS: 1 });
  dataDir = await makeDataDir();
});

/** The stand-in with these device-flow timings, its Google client named in the Gatekeeper's config. */
async function googleAt(options: { deviceIntervalS: number; deviceExpiresInS?: number }): Promise<void> {
  await youtube?.close();
  youtube = await startFakeYouTube(options);
  gatekeeper.config = {
    ...DEFAULT_CONFIG,
    platforms: {
      youtube: {
        oauth_client_id: youtube.googleClient.clientId,
        oauth_client_secret: youtube.googleClient.clientSecret,
      },
    },
  };
}

afterEach(async () => {
  killCliProcesses();
  await Promise.all([youtube.close(), gatekeeper.close()]);
});

const file = () => join(dataDir, 'youtube.json');
const polls = () => youtube.authRequests.filter((r) => r.path === 'token');

/** `connect youtube` in this process, on a fake clock. */
function connect(clock: FakeTimers) {
  let stdout = '';
  let stderr = '';
  const done = runYouTubeConnect(
    'connect',
    dataDir,
    gatekeeper.url,
    {
      out: (text) => {
        stdout += text;
      },
      err: (text) => {
        stderr += text;
      },
    },
    { urls: { youtubeApi: youtube.url, googleAuth: youtube.authUrl }, timers: clock },
  );
  return { done, stdout: () => stdout, stderr: () => stderr };
}

/** The flow is waiting on the clock again after `count` polls. */
async function waitingAfter(clock: FakeTimers, count: number): Promise<void> {
  await waitFor(() => polls().length === count && clock.size === 1, 5000, `${count} polls, then a wait`);
}

describe('connect youtube', () => {
  it('shows the link and the code, waits while pending, and keeps the sign-in 0600 once allowed', async () => {
    const env = {
      OVERLAY_GOOGLE_AUTH_URL: youtube.authUrl,
      OVERLAY_YOUTUBE_API_URL: youtube.url,
      OVERLAY_GATEKEEPER_URL: gatekeeper.url,
    };
    const run = spawnCli(['connect', 'youtube', '--data-dir', dataDir], env);
    await waitFor(() => /enter the code/.test(run.stdout()), 15_000);
    expect(run.stdout()).toContain(`${youtube.authUrl}/device`);
    const code = /\n\s{4}(\S+)\n/.exec(run.stdout())?.[1];
    expect(code).toMatch(/^[0-9A-F]{4}-[0-9A-F]{4}$/);
    // The streamer has not allowed it yet: Google answers authorization_pending, and it waits.
    await waitFor(() => polls().length >= 2, 10_000);
    expect(existsSync(file())).toBe(false);
    youtube.approve();
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toMatch(/Connected YouTube as Streamer/);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    const kept = JSON.parse(await readFile(file(), 'utf8')) as Record<string, unknown>;
    expect(kept).toMatchObject({
      clientId: youtube.googleClient.clientId,
      channelId: youtube.channel.id,
      channelTitle: 'Streamer',
      scopes: ['https://www.googleapis.com/auth/youtube.force-ssl'],
    });
    // The device code was asked for with the scope chat sending needs, the polls with the client's secret.
    const asked = youtube.authRequests.find((r) => r.path === 'device/code');
    expect(asked?.form.get('scope')).toBe('https://www.googleapis.com/auth/youtube.force-ssl');
    expect(polls()[0]?.form.get('client_secret')).toBe(youtube.googleClient.clientSecret);

    const out = await runCli(['disconnect', 'youtube', '--data-dir', dataDir], env);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/Disconnected YouTube \(Streamer\)/);
    expect(existsSync(file())).toBe(false);
    expect(youtube.revoked).toEqual([kept.refreshToken]);
  }, 60_000);

  it('waits as long as Google asks, 5 s longer after slow_down', async () => {
    await googleAt({ deviceIntervalS: 5 });
    const clock = new FakeTimers();
    const run = connect(clock);
    await waitingAfter(clock, 0);
    expect(clock.nextDelay()).toBe(5000);
    youtube.slowDownNext();
    clock.advance(5000);
    await waitingAfter(clock, 1);
    expect(clock.nextDelay()).toBe(10_000);
    clock.advance(10_000);
    await waitingAfter(clock, 2);
    // Still pending: the longer wait stays.
    expect(clock.nextDelay()).toBe(10_000);
    youtube.approve();
    clock.advance(10_000);
    expect(await run.done).toBe(0);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
  });

  it('writes nothing when the streamer refuses, and says so', async () => {
    const clock = new FakeTimers();
    const run = connect(clock);
    await waitingAfter(clock, 0);
    youtube.deny();
    clock.advance(1000);
    expect(await run.done).toBe(1);
    expect(run.stderr()).toBe(
      'overlay-daemon: YouTube sign-in did not complete: the sign-in was refused on Google; run "overlay-daemon connect youtube" again to retry\n',
    );
    expect(existsSync(file())).toBe(false);
  });

  it('writes nothing when the code runs out, by Google or by the clock', async () => {
    const clock = new FakeTimers();
    const byGoogle = connect(clock);
    await waitingAfter(clock, 0);
    youtube.expireCode();
    clock.advance(1000);
    expect(await byGoogle.done).toBe(1);
    expect(byGoogle.stderr()).toMatch(/the code expired before it was entered at Google/);
    expect(existsSync(file())).toBe(false);

    // A code that works for 12 s, polled every 5 s: after two polls the clock says it ran out.
    await googleAt({ deviceIntervalS: 5, deviceExpiresInS: 12 });
    const byClock = connect(clock);
    await waitingAfter(clock, 0);
    clock.advance(5000);
    await waitingAfter(clock, 1);
    clock.advance(5000);
    await waitingAfter(clock, 2);
    clock.advance(5000);
    expect(await byClock.done).toBe(1);
    expect(byClock.stderr()).toMatch(/the code expired before it was entered at Google/);
    expect(polls()).toHaveLength(2);
    expect(existsSync(file())).toBe(false);
  });

  it('says what is missing when the Gatekeeper names no Google client, or cannot be reached', async () => {
    gatekeeper.config = { ...DEFAULT_CONFIG, platforms: { youtube: { api_key: 'AIzaKey' } } };
    const none = connect(new FakeTimers());
    expect(await none.done).toBe(1);
    expect(none.stderr()).toBe(
      "overlay-daemon: the Gatekeeper's configuration names no Google client (platforms.youtube.oauth_client_id and oauth_client_secret): its operator sets one up (docs/platforms.md, YouTube chat sending)\n",
    );
    expect(youtube.authRequests).toHaveLength(0);

    const out = await runCli(['connect', 'youtube', '--data-dir', dataDir], {
      OVERLAY_GOOGLE_AUTH_URL: youtube.authUrl,
      OVERLAY_YOUTUBE_API_URL: youtube.url,
      OVERLAY_GATEKEEPER_URL: 'http://127.0.0.1:9',
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/cannot reach the Gatekeeper, whose configuration names the Google client/);
    expect(existsSync(file())).toBe(false);
  }, 30_000);
});
