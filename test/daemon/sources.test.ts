// Several sources at once in the real daemon: `sources` in settings.json and the command
// line, started and stopped as the settings change, each state in /status, a failing source alone in its
// trouble, and every bad entry refused naming its field. The sources here are scripted stand-ins; the
// platforms' own sources are tested against their protocol fakes in twitch-*.test.ts and youtube-*.test.ts.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceFactory } from '../../daemon/src/sources/manager.js';
import { checkPlatformUrl, platformUrlsFromEnv } from '../../daemon/src/sources/platform-urls.js';
import type { EventSource, SourceContext } from '../../daemon/src/sources/source.js';
import { DEFAULT_CONFIG, type RemoteConfig } from '../../shared/config.js';
import type { SourceReport, StreamEvent } from '../../shared/protocol/index.js';
import { runCli } from '../support/cli.js';
import { api, makeDataDir, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';

/** A source the test drives: it reports what it is told and emits what it is given. */
class ScriptedSource implements EventSource {
  started = 0;
  stopped = 0;
  state: SourceReport['state'] = 'off';
  constructor(
    readonly platform: 'tiktok' | 'twitch' | 'youtube' | 'kick',
    readonly channel: string,
    readonly ctx: SourceContext,
  ) {}
  start(): void {
    this.started++;
    this.state = 'connected';
    if (this.channel === 'broken') throw new Error('the platform said no');
  }
  async stop(): Promise<void> {
    this.stopped++;
    this.state = 'off';
  }
  report(): SourceReport {
    return { platform: this.platform, channel: this.channel, state: this.state };
  }
  emit(event: Omit<StreamEvent, 'platform'>): void {
    this.ctx.emit({ ...event, platform: this.platform } as StreamEvent);
  }
}

let daemon: TestDaemon | undefined;
const built: ScriptedSource[] = [];
const factory: SourceFactory = (entry, ctx) => {
  const source = new ScriptedSource(entry.platform, entry.channel, ctx);
  built.push(source);
  return source;
};
const find = (platform: string, channel: string) =>
  built.filter((s) => s.platform === platform && s.channel === channel).at(-1);

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  built.length = 0;
});

async function settings(d: TestDaemon): Promise<Record<string, unknown>> {
  return (await (await api(d, 'GET', '/api/settings')).json()) as Record<string, unknown>;
}

async function statusSources(d: TestDaemon): Promise<SourceReport[]> {
  const body = (await (await fetch(`${d.url}/status`)).json()) as { sources?: SourceReport[] };
  return body.sources ?? [];
}

describe('the source manager', () => {
  it('runs the command line sources and the settings ones side by side, each in /status', async () => {
    const dataDir = await makeDataDir();
    await writeFile(join(dataDir, 'rules.json'), '[]\n');
    await writeFile(
      join(dataDir, 'settings.json'),
      JSON.stringify({
        sources: [
          { platform: 'youtube', channel: '@SomeChannel', enabled: true },
          { platform: 'twitch', channel: 'streamer', enabled: false },
        ],
      }),
    );
    daemon = await startTestDaemon({
      dataDir,
      sourceFactory: factory,
      sources: [{ platform: 'twitch', channel: 'otherchannel', enabled: true }],
    });
    expect(await statusSources(daemon)).toEqual([
      { platform: 'twitch', channel: 'otherchannel', state: 'connected' },
      // Handles are compared in lowercase: `@SomeChannel` and `@somechannel` are one channel.
      { platform: 'youtube', channel: '@somechannel', state: 'connected' },
      { platform: 'twitch', channel: 'streamer', state: 'off', detail: 'turned off' },
    ]);
    expect(built.map((s) => `${s.platform}:${s.channel}`)).toEqual([
      'twitch:otherchannel',
      'youtube:@somechannel',
    ]);
  });

  it('follows PUT /api/settings at once: new sources start, removed and turned-off ones stop, others are untouched', async () => {
    daemon = await startTestDaemon({ sourceFactory: factory });
    const current = await settings(daemon);
    const put = (sources: unknown) => api(daemon!, 'PUT', '/api/settings', { ...current, sources });
    expect(
      (
        await put([
          { platform: 'twitch', channel: 'Streamer' },
          { platform: 'tiktok', channel: '@dancer' },
        ])
      ).status,
    ).toBe(200);
    expect((await settings(daemon)).sources).toEqual([
      { platform: 'twitch', channel: 'streamer', enabled: true },
      { platform: 'tiktok', channel: 'dancer', enabled: true },
    ]);
    const twitch = find('twitch', 'streamer')!;
    expect(twitch.started).toBe(1);
    // TikTok's detailed part of /status follows its source.
    await put([
      { platform: 'twitch', channel: 'streamer' },
      { platform: 'tiktok', channel: 'dancer', enabled: false },
      { platform: 'youtube', channel: 'UC1234567890123456789012' },
    ]);
    await waitFor(() => find('tiktok', 'dancer')?.stopped === 1);
    expect(twitch.started).toBe(1);
    expect(twitch.stopped).toBe(0);
    expect((await statusSources(daemon)).map((s) => `${s.platform}:${s.state}`)).toEqual([
      'twitch:connected',
      'tiktok:off',
      'youtube:connected',
    ]);
    await put([]);
    await waitFor(() => twitch.stopped === 1);
    expect(await statusSources(daemon)).toEqual([]);
  });

  it('takes events from every platform through one seam, each with its platform, into the journal and to overlays', async () => {
    daemon = await startTestDaemon({
      sourceFactory: factory,
      sources: [
        { platform: 'twitch', channel: 'streamer', enabled: true },
        { platform: 'youtube', channel: '@streamer', enabled: true },
      ],
    });
    const client = await subscribe(daemon, daemon.overlays.list()[0]!.id);
    const user = { uniqueId: 'fan', nickname: 'Fan' };
    find('twitch', 'streamer')!.emit({ type: 'chat', user, data: { comment: 'hi from twitch' } });
    find('youtube', '@streamer')!.emit({ type: 'chat', user, data: { comment: 'hi from youtube' } });
    await waitFor(() => client.received.filter((m) => m.type === 'stream-event').length === 2);
    const received = client.received.filter((m) => m.type === 'stream-event');
    expect(received.map((m) => (m as { event: StreamEvent }).event.platform)).toEqual(['twitch', 'youtube']);
    const history = (await (await api(daemon, 'GET', '/api/events?type=chat')).json()) as {
      events: { source: string }[];
    };
    expect(history.events.map((e) => e.source).sort()).toEqual(['twitch', 'youtube']);
    client.close();
  });

  it("starts a platform's sources again when its key or client id changes, and only then", async () => {
    daemon = await startTestDaemon({
      sourceFactory: factory,
      sources: [
        { platform: 'youtube', channel: '@one', enabled: true },
        { platform: 'twitch', channel: 'two', enabled: true },
      ],
    });
    const current = await settings(daemon);
    await api(daemon, 'PUT', '/api/settings', { ...current, youtube: { apiKey: 'AIzaNewKey_1' } });
    await waitFor(() => built.filter((s) => s.platform === 'youtube').length === 2);
    expect(built.filter((s) => s.platform === 'twitch')).toHaveLength(1);
    await api(daemon, 'PUT', '/api/settings', {
      ...(await settings(daemon)),
      twitch: { clientId: 'newclient' },
    });
    await waitFor(() => built.filter((s) => s.platform === 'twitch').length === 2);
    // The same settings again: nothing restarts. The daemon puts saved settings in force before it answers
    // the PUT (the sources to restart are built then), so once it answered, a restart would show here.
    await api(daemon, 'PUT', '/api/settings', await settings(daemon));
    expect(built).toHaveLength(4);
  });

  it('says where the credentials come from, and "Connect Twitch" without network blames the unreachable Gatekeeper', async () => {
    let arrival: 'waiting' | 'arrived' | 'unreachable' = 'waiting';
    let config: RemoteConfig = DEFAULT_CONFIG;
    daemon = await startTestDaemon({
      sourceFactory: factory,
      remoteConfig: () => config,
      remoteConfigArrival: () => arrival,
    });
    const credentials = async () => (await api(daemon!, 'GET', '/api/sources/credentials')).json();
    expect(await credentials()).toEqual({ twitchClientId: 'waiting', youtubeApiKey: 'waiting' });
    const waiting = await api(daemon, 'POST', '/api/sources/twitch/sign-in');
    expect(waiting.status).toBe(503);
    expect(JSON.stringify(await waiting.json())).toMatch(/waiting for the Gatekeeper's config/);

    arrival = 'unreachable';
    expect(await credentials()).toEqual({ twitchClientId: 'unreachable', youtubeApiKey: 'unreachable' });
    const offline = await api(daemon, 'POST', '/api/sources/twitch/sign-in');
    expect(offline.status).toBe(503);
    const said = JSON.stringify(await offline.json());
    expect(said).toMatch(/cannot reach the Gatekeeper/);
    expect(said).not.toMatch(/operator/);

    arrival = 'arrived';
    config = { ...DEFAULT_CONFIG, platforms: { youtube: { api_key: 'AIzaFromTheGatekeeper_1' } } };
    expect(await credentials()).toEqual({ twitchClientId: 'none', youtubeApiKey: 'gatekeeper' });
    await api(daemon, 'PUT', '/api/settings', {
      ...(await settings(daemon)),
      twitch: { clientId: 'myclient' },
    });
    expect(await credentials()).toEqual({ twitchClientId: 'settings', youtubeApiKey: 'gatekeeper' });
  });

  it('keeps the others running when one source fails to start', async () => {
    daemon = await startTestDaemon({
      sourceFactory: factory,
      sources: [
        { platform: 'twitch', channel: 'broken', enabled: true },
        { platform: 'twitch', channel: 'fine', enabled: true },
      ],
    });
    expect(find('twitch', 'fine')!.started).toBe(1);
    expect(daemon.logs.join('\n')).toMatch(/twitch broken failed to start: the platform said no/);
    const status = (await (await fetch(`${daemon.url}/status`)).json()) as { running: boolean };
    expect(status.running).toBe(true);
  });

  it('stops every source when the daemon stops', async () => {
    daemon = await startTestDaemon({
      sourceFactory: factory,
      sources: [{ platform: 'youtube', channel: '@one', enabled: true }],
    });
    await daemon.stop();
    daemon = undefined;
    expect(find('youtube', '@one')!.stopped).toBe(1);
  });
});

describe('sources in settings.json', () => {
  it.each([
    ['an unknown platform', [{ platform: 'mixer', channel: 'x' }], /sources\.0\.platform/],
    ['a Twitch name with a space', [{ platform: 'twitch', channel: 'two words' }], /sources\.0\.channel/],
    [
      'a YouTube channel that is neither a handle nor an id',
      [{ platform: 'youtube', channel: 'name' }],
      /sources\.0\.channel/,
    ],
    [
      'the same channel twice',
      [
        { platform: 'twitch', channel: 'Same' },
        { platform: 'twitch', channel: 'same' },
      ],
      /sources.*once/,
    ],
    [
      'more than 20 sources',
      Array.from({ length: 21 }, (_, i) => ({ platform: 'twitch', channel: `channel${i}` })),
      /at most 20/,
    ],
  ])('refuses %s with a 400 naming the field, and changes nothing', async (_label, sources, message) => {
    daemon = await startTestDaemon({ sourceFactory: factory });
    const before = await readFile(daemon.settings.file, 'utf8').catch(() => 'none');
    const current = await settings(daemon);
    const res = await api(daemon, 'PUT', '/api/settings', { ...current, sources });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toMatch(message);
    expect(await readFile(daemon.settings.file, 'utf8').catch(() => 'none')).toBe(before);
    expect(built).toEqual([]);
  });

  it('keeps the YouTube API key secret: stored 0600, answered only as set or not', async () => {
    daemon = await startTestDaemon({ sourceFactory: factory });
    const current = await settings(daemon);
    expect(current.youtube).toEqual({ apiKey: { set: false } });
    await api(daemon, 'PUT', '/api/settings', {
      ...current,
      youtube: { apiKey: 'AIzaSyTestKey-123' },
      twitch: { clientId: 'abc123' },
    });
    const after = await settings(daemon);
    expect(after.youtube).toEqual({ apiKey: { set: true } });
    expect(after.twitch).toEqual({ clientId: 'abc123' });
    expect(JSON.stringify(after)).not.toContain('AIzaSyTestKey');
    const stored = JSON.parse(await readFile(daemon.settings.file, 'utf8')) as {
      youtube: { apiKey: string };
    };
    expect(stored.youtube.apiKey).toBe('AIzaSyTestKey-123');
    // Kept by {set: true}, cleared by null.
    await api(daemon, 'PUT', '/api/settings', after);
    expect((await settings(daemon)).youtube).toEqual({ apiKey: { set: true } });
    await api(daemon, 'PUT', '/api/settings', { ...after, youtube: { apiKey: null } });
    expect((await settings(daemon)).youtube).toEqual({ apiKey: { set: false } });
    const bad = await api(daemon, 'PUT', '/api/settings', {
      ...after,
      youtube: { apiKey: 'has spaces in it' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/youtube\.apiKey/);
  });

  it('reads a settings.json of an earlier version, whose `sources` was an empty object', async () => {
    const dataDir = await makeDataDir();
    await writeFile(join(dataDir, 'rules.json'), '[]\n');
    await writeFile(join(dataDir, 'settings.json'), JSON.stringify({ sources: {}, tts: { maxChars: 150 } }));
    daemon = await startTestDaemon({ dataDir, sourceFactory: factory });
    const current = await settings(daemon);
    expect(current.sources).toEqual([]);
    expect((current.tts as { maxChars: number }).maxChars).toBe(150);
  });
});

describe('where the platforms are reached', () => {
  it('takes each base URL from its variable, plain http and ws only on 127.0.0.0/8', () => {
    const urls = platformUrlsFromEnv({
      OVERLAY_TWITCH_IRC_URL: 'ws://127.0.0.1:4000',
      OVERLAY_TWITCH_API_URL: 'http://127.0.0.2:4001/helix/',
      OVERLAY_YOUTUBE_API_URL: 'https://yt.example.test/youtube/v3',
    });
    expect(urls.twitchIrc).toBe('ws://127.0.0.1:4000');
    expect(urls.twitchApi).toBe('http://127.0.0.2:4001/helix');
    expect(urls.youtubeApi).toBe('https://yt.example.test/youtube/v3');
    expect(urls.twitchEventSub).toBe('wss://eventsub.wss.twitch.tv/ws');
    expect(() => checkPlatformUrl('twitchApi', 'http://192.168.1.5/helix')).toThrow(
      /only on 127\.0\.0\.0\/8/,
    );
    expect(() => checkPlatformUrl('twitchIrc', 'ws://localhost:80')).toThrow(/OVERLAY_TWITCH_IRC_URL/);
    expect(() => checkPlatformUrl('twitchIrc', 'https://127.0.0.1')).toThrow(/must be a wss:\/\/ URL/);
    expect(() => checkPlatformUrl('youtubeApi', 'not a url')).toThrow(/not a URL/);
  });

  it('the command line refuses a bad channel or base URL before starting anything', async () => {
    const dataDir = await makeDataDir();
    const badChannel = await runCli(['--port', '0', '--data-dir', dataDir, '--twitch', 'no spaces please']);
    expect(badChannel.code).toBe(2);
    expect(badChannel.stderr).toMatch(/--twitch must be a Twitch channel name/);
    const badYoutube = await runCli(['--port', '0', '--data-dir', dataDir, '--youtube', 'plainname']);
    expect(badYoutube.code).toBe(2);
    expect(badYoutube.stderr).toMatch(/--youtube must be a YouTube handle/);
    const badUrl = await runCli(['--port', '0', '--data-dir', dataDir], {
      OVERLAY_TWITCH_API_URL: 'http://10.0.0.1/helix',
    });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/OVERLAY_TWITCH_API_URL may use http:\/\/ only on 127\.0\.0\.0\/8/);
  });
});
