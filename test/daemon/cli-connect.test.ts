// `overlay-daemon connect twitch` and `disconnect twitch` as a streamer runs them, against the Twitch
// stand-ins: the code and the link shown, twitch.json written 0600 once approved, a running daemon's
// Twitch source taking the sign-in up by itself (EventSub subscribed), and the sign-in revoked and
// forgotten again. Also the dashboard's routes for the same flow.
import { existsSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killCliProcesses, runCli, spawnCli } from '../support/cli.js';
import { api, makeDataDir, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeTwitch, startFakeTwitch } from '../support/fakes/twitch.js';
import { type FakeTwitchIrc, startFakeTwitchIrc } from '../support/fakes/twitch-irc.js';

let twitch: FakeTwitch;
let irc: FakeTwitchIrc;
let daemon: TestDaemon | undefined;

beforeEach(async () => {
  [twitch, irc] = await Promise.all([startFakeTwitch({ pollIntervalS: 1 }), startFakeTwitchIrc()]);
});

afterEach(async () => {
  killCliProcesses();
  await daemon?.stop();
  daemon = undefined;
  await Promise.all([twitch.close(), irc.close()]);
});

/** Twitch at its stand-ins, YouTube at a closed port. */
const stands = () => ({
  twitchIrc: irc.url,
  twitchEventSub: twitch.urls.eventsub,
  twitchApi: twitch.urls.api,
  twitchAuth: twitch.urls.auth,
  youtubeApi: 'http://127.0.0.1:9/youtube/v3',
});
const env = () => ({
  OVERLAY_TWITCH_AUTH_URL: twitch.urls.auth,
  OVERLAY_GATEKEEPER_URL: 'http://127.0.0.1:9',
});

describe('connect twitch', () => {
  it('shows a code and a link, keeps the sign-in 0600 once approved, and a running daemon takes it up', async () => {
    const dataDir = await makeDataDir();
    await writeFile(join(dataDir, 'rules.json'), '[]\n');
    await writeFile(
      join(dataDir, 'settings.json'),
      JSON.stringify({
        twitch: { clientId: twitch.clientId },
        sources: [{ platform: 'twitch', channel: 'streamer' }],
      }),
    );
    daemon = await startTestDaemon({
      dataDir,
      platformUrls: stands(),
    });
    const status = async () =>
      (
        (await (await fetch(`${daemon!.url}/status`)).json()) as {
          sources: { state: string; detail?: string }[];
        }
      ).sources[0];
    await waitFor(async () => (await status())?.state === 'connected');
    expect((await status())?.detail).toMatch(/chat only/);

    const run = spawnCli(['connect', 'twitch', '--data-dir', dataDir], env());
    await waitFor(() => /enter the code/.test(run.stdout()), 10_000);
    const code = /\n\s{4}(\S+)\n/.exec(run.stdout())?.[1];
    expect(code).toBeTruthy();
    expect(run.stdout()).toContain(`${twitch.urls.auth}/activate`);
    twitch.approve();
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toMatch(/Connected Twitch as streamer/);
    const file = join(dataDir, 'twitch.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    // The running daemon noticed: its Twitch source subscribed over EventSub.
    await waitFor(() => twitch.activeSubscriptions().length === 6, 10_000);
    await waitFor(async () => (await status())?.detail === undefined, 5000);

    const out = await runCli(['disconnect', 'twitch', '--data-dir', dataDir], env());
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/Disconnected Twitch \(streamer\)/);
    expect(existsSync(file)).toBe(false);
    expect(twitch.revokedTokens.length).toBeGreaterThan(0);
    await waitFor(async () => /chat only/.test((await status())?.detail ?? ''), 10_000);
  }, 40_000);

  it('says what is missing without a client id, and refuses other platforms', async () => {
    const dataDir = await makeDataDir();
    const none = await runCli(['connect', 'twitch', '--data-dir', dataDir], env());
    expect(none.code).toBe(1);
    // The Gatekeeper (a closed port here) cannot be reached: said so, not blamed on its operator.
    expect(none.stderr).toMatch(/cannot reach the Gatekeeper, whose config may give the Twitch client id/);
    expect(none.stderr).not.toMatch(/operator/);
    const other = await runCli(['connect', 'tiktok', '--data-dir', dataDir], env());
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/works for twitch, kick and youtube only/);
  });
});

describe('the dashboard sign-in routes', () => {
  it('start the device flow, report it, and forget the sign-in', async () => {
    daemon = await startTestDaemon({
      platformUrls: stands(),
    });
    const d = daemon;
    expect(await (await api(d, 'GET', '/api/sources/twitch/sign-in')).json()).toEqual({
      state: 'signed-out',
    });
    const refused = await api(d, 'POST', '/api/sources/twitch/sign-in');
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    const settings = (await (await api(d, 'GET', '/api/settings')).json()) as Record<string, unknown>;
    await api(d, 'PUT', '/api/settings', { ...settings, twitch: { clientId: twitch.clientId } });
    const started = await api(d, 'POST', '/api/sources/twitch/sign-in');
    expect(started.status).toBe(202);
    const pending = (await started.json()) as { state: string; userCode: string; verificationUri: string };
    expect(pending.state).toBe('pending');
    expect(pending.userCode).toBeTruthy();
    twitch.approve();
    await waitFor(
      async () =>
        ((await (await api(d, 'GET', '/api/sources/twitch/sign-in')).json()) as { state: string }).state ===
        'signed-in',
      10_000,
    );
    expect(await (await api(d, 'GET', '/api/sources/twitch/sign-in')).json()).toEqual({
      state: 'signed-in',
      login: 'streamer',
    });
    expect((await api(d, 'DELETE', '/api/sources/twitch/sign-in')).status).toBe(204);
    expect(await (await api(d, 'GET', '/api/sources/twitch/sign-in')).json()).toEqual({
      state: 'signed-out',
    });
    expect(existsSync(join(d.dataDir.root, 'twitch.json'))).toBe(false);
  }, 20_000);
});
