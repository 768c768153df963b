// TikTok, Twitch and YouTube at once in the real daemon, each through its own source against a stand-in
// that speaks the platform's protocol (TikTok through a connection stand-in, Twitch chat over IRC-over-
// WebSocket, EventSub and Helix, YouTube's Data API): one event model through the same rules, widgets
// and journal, each source's state in /status, and a source that fails leaving the others alone.
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import v3 from '../../daemon/src/sources/tiktok/fixtures/tiktok-v3.json' with { type: 'json' };
import { writeTwitchTokens } from '../../daemon/src/sources/twitch/auth.js';
import { DEFAULT_CONFIG } from '../../shared/config.js';
import type { ServerMessage, SourceReport, StreamEvent, Widget } from '../../shared/protocol/index.js';
import { api, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeTwitch, startFakeTwitch, storedTokens, twitchEvent } from '../support/fakes/twitch.js';
import { type FakeTwitchIrc, startFakeTwitchIrc } from '../support/fakes/twitch-irc.js';
import { type FakeYouTube, startFakeYouTube } from '../support/fakes/youtube.js';
import type { TestWsClient } from '../support/ws.js';

/** Stands in for tiktok-live-connector's connection: connects at once, emits what the test says. */
class FakeTikTok extends EventEmitter {
  async connect(): Promise<unknown> {
    return { roomId: '1' };
  }
  async disconnect(): Promise<void> {}
}

const YT_CHANNEL = 'UCplatformstest000000001';
let irc: FakeTwitchIrc;
let twitch: FakeTwitch;
let youtube: FakeYouTube;
let tiktok: FakeTikTok[];
let daemon: TestDaemon | undefined;
let client: TestWsClient | undefined;

beforeEach(async () => {
  [irc, twitch, youtube] = await Promise.all([
    startFakeTwitchIrc(),
    startFakeTwitch(),
    startFakeYouTube({ apiKey: 'gatekeeper-youtube-key' }),
  ]);
  tiktok = [];
});

afterEach(async () => {
  client?.close();
  client = undefined;
  await daemon?.stop();
  daemon = undefined;
  await Promise.all([irc.close(), twitch.close(), youtube.close()]);
});

async function startAll(): Promise<TestDaemon> {
  const d = await startTestDaemon({
    platformUrls: {
      twitchIrc: irc.url,
      twitchEventSub: twitch.urls.eventsub,
      twitchApi: twitch.urls.api,
      twitchAuth: twitch.urls.auth,
      youtubeApi: youtube.url,
    },
    // The YouTube key comes from the Gatekeeper's config: settings.json has none.
    remoteConfig: () => ({
      ...DEFAULT_CONFIG,
      platforms: { youtube: { api_key: 'gatekeeper-youtube-key' } },
    }),
    platforms: {
      tiktok: {
        createConnection: () => {
          const connection = new FakeTikTok();
          tiktok.push(connection);
          return connection;
        },
      },
    },
  });
  daemon = d;
  return d;
}

async function sources(d: TestDaemon): Promise<SourceReport[]> {
  const body = (await (await fetch(`${d.url}/status`)).json()) as { sources?: SourceReport[] };
  return body.sources ?? [];
}

const events = (c: TestWsClient) =>
  c.received
    .filter((m): m is Extract<ServerMessage, { type: 'stream-event' }> => m.type === 'stream-event')
    .map((m) => m.event as StreamEvent);

describe('three platforms through one daemon', () => {
  it('feed the same rules, widgets and journal, each event marked with its platform', async () => {
    const d = await startAll();
    // Signed in to Twitch as the broadcaster (what `connect twitch` leaves behind).
    const token = twitch.issueTokens();
    await writeTwitchTokens(d.dataDir.root, storedTokens(token));
    youtube.goLive(YT_CHANNEL);
    const overlay = d.overlays.list()[0]!;
    // A goal fed by diamonds, and a rule only for YouTube chat.
    const goal: Widget = {
      id: 'diamonds',
      type: 'goal',
      x: 0,
      y: 0,
      title: 'Diamonds',
      source: 'diamonds',
      target: 100_000,
      current: 0,
    };
    expect(
      (
        await api(d, 'PUT', `/api/overlays/${overlay.id}`, {
          ...overlay,
          widgets: [...overlay.widgets, goal],
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await api(d, 'PUT', '/api/rules', [
          {
            id: 'yt-chat',
            trigger: 'chat',
            conditions: { platform: 'youtube' },
            actions: [
              {
                overlayId: overlay.id,
                widgetId: 'alert',
                command: 'show-alert',
                payload: { text: 'YouTube says {data.comment}' },
              },
            ],
          },
        ])
      ).status,
    ).toBe(200);
    const settings = (await (await api(d, 'GET', '/api/settings')).json()) as Record<string, unknown>;
    expect(
      (
        await api(d, 'PUT', '/api/settings', {
          ...settings,
          sources: [
            { platform: 'tiktok', channel: '@dancer' },
            { platform: 'twitch', channel: 'streamer' },
            { platform: 'youtube', channel: YT_CHANNEL },
          ],
        })
      ).status,
    ).toBe(200);
    await waitFor(async () => (await sources(d)).every((s) => s.state === 'connected'), 8000);
    expect((await sources(d)).map((s) => `${s.platform}:${s.channel}`)).toEqual([
      'tiktok:dancer',
      'twitch:streamer',
      `youtube:${YT_CHANNEL}`,
    ]);
    await waitFor(() => twitch.activeSubscriptions().length === 6);
    client = await subscribe(d, overlay.id);

    // One chat and one paid thing from each platform.
    const tk = tiktok.at(-1)!;
    // Recorded payloads of tiktok-live-connector 2.5.0: a chat and a Lion (29,999 diamonds).
    tk.emit('chat', v3.chat);
    tk.emit('gift', v3.giftLion);
    irc.privmsg('streamer', { login: 'twfan', displayName: 'Twitch Fan' }, 'hi from twitch');
    twitch.notify(
      'channel.cheer',
      twitchEvent('channel.cheer', twitch.user, { bits: 100, message: 'Cheer100' }),
    );
    youtube.addMessage({ text: 'hi from youtube', author: 'YT Fan' });
    youtube.addMessage({
      type: 'superChatEvent',
      text: 'take this',
      author: 'YT Fan',
      amountMicros: 5_000_000,
    });

    await waitFor(
      () => events(client!).filter((e) => e.type === 'chat' || e.type === 'gift').length === 6,
      8000,
    );
    const seen = events(client)
      .filter((e) => e.type === 'chat' || e.type === 'gift')
      .map((e) => `${e.platform}:${e.type}`)
      .sort();
    expect(seen).toEqual([
      'tiktok:chat',
      'tiktok:gift',
      'twitch:chat',
      'twitch:gift',
      'youtube:chat',
      'youtube:gift',
    ]);
    // The same widget counts all three: 29,999 (a Lion) + 100 (bits) + 500 (a $5.00 Super Chat).
    await waitFor(async () => {
      const current = (await (await api(d, 'GET', `/api/overlays/${overlay.id}`)).json()) as {
        widgets: Widget[];
      };
      const w = current.widgets.find((x) => x.id === 'diamonds');
      return w?.type === 'goal' && w.current === 30_599;
    }, 5000);
    // The rule for YouTube chat fired once, for YouTube's chat only.
    await waitFor(() => client!.received.some((m) => m.type === 'overlay-command'));
    // Every event was handled (the page got all six), and the page gets its messages in order: a command
    // sent now arrives after any second one the rule might have sent.
    const isMarker = (m: { type: string }) =>
      m.type === 'overlay-command' && JSON.stringify(m).includes('marker');
    const marked = await api(d, 'POST', `/api/overlays/${overlay.id}/commands`, {
      widgetId: 'alert',
      command: 'show-alert',
      payload: { text: 'marker' },
    });
    expect(marked.status).toBeLessThan(300);
    await waitFor(() => client!.received.some(isMarker), 3000);
    const commands = client.received
      .slice(0, client.received.findIndex(isMarker))
      .filter((m) => m.type === 'overlay-command');
    expect(commands).toHaveLength(1);
    expect(JSON.stringify(commands[0])).toContain('YouTube says hi from youtube');
    // The journal holds each with its platform.
    const history = (await (await api(d, 'GET', '/api/events?type=chat')).json()) as {
      events: { source: string }[];
    };
    expect(history.events.map((e) => e.source).sort()).toEqual(['tiktok', 'twitch', 'youtube']);
  }, 30_000);

  it('a source that fails leaves the others running', async () => {
    const d = await startAll();
    youtube.goLive(YT_CHANNEL);
    youtube.setQuotaExceeded(true);
    const settings = (await (await api(d, 'GET', '/api/settings')).json()) as Record<string, unknown>;
    await api(d, 'PUT', '/api/settings', {
      ...settings,
      sources: [
        { platform: 'youtube', channel: YT_CHANNEL },
        { platform: 'twitch', channel: 'streamer' },
      ],
    });
    await waitFor(async () => {
      const list = await sources(d);
      return list[0]?.state === 'backoff' && list[1]?.state === 'connected';
    }, 8000).catch(async (err) => {
      throw new Error(`${err}: ${JSON.stringify(await sources(d))} ${d.logs.join('\n')}`);
    });
    const youtubeReport = (await sources(d))[0]!;
    expect(youtubeReport.detail).toMatch(/quota/);
    client = await subscribe(d, d.overlays.list()[0]!.id);
    irc.privmsg('streamer', { login: 'viewer' }, 'twitch still flows');
    await waitFor(() => events(client!).some((e) => e.type === 'chat' && e.platform === 'twitch'));
    // Chat alone needs no sign-in; the Twitch source says what a sign-in would add.
    expect((await sources(d))[1]?.detail).toMatch(/connect twitch/);
  }, 20_000);
});
