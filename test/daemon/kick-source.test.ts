// The Kick source against the stand-ins of Kick's chat socket (Pusher protocol 7) and of Kick's site
// (the channel page that gives a channel's ids): chat, hosts and subscriptions as stream events with
// platform kick, each Kick message id once, the chatroom id from the settings when the site refuses, a
// channel that does not exist, garbage and unknown events logged without harm, reconnects after a drop,
// a silent socket given up after 3 minutes, and the state in words in /status.
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeDaemonStatus } from '../../daemon/src/cli/status-text.js';
import { KickSource, type KickSourceOptions } from '../../daemon/src/sources/kick/index.js';
import { DEFAULT_PLATFORM_URLS } from '../../daemon/src/sources/platform-urls.js';
import type { SourceContext } from '../../daemon/src/sources/source.js';
import { systemTimers } from '../../daemon/src/timers.js';
import type { DaemonStatus, ServerMessage, SourceReport, StreamEvent } from '../../shared/protocol/index.js';
import type { Timers } from '../../shared/timers.js';
import { killCliProcesses, runCli, spawnCli } from '../support/cli.js';
import {
  api,
  makeDataDir,
  startTestDaemon,
  subscribe,
  type TestDaemon,
  UNREACHABLE_PLATFORMS,
  waitFor,
} from '../support/daemon.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeServer, listenLoopback } from '../support/fakes/listen.js';
import { type FakePusher, startFakePusher } from '../support/fakes/pusher.js';
import { type FakeTwitchIrc, startFakeTwitchIrc } from '../support/fakes/twitch-irc.js';
import type { TestWsClient } from '../support/ws.js';

const SLUG = 'kickstreamer';
const CHANNEL_ID = 4_200_001;
const CHATROOM_ID = 4_100_001;
const CHATROOM = `chatrooms.${CHATROOM_ID}.v2`;

/** Kick's site as the daemon reads it: channels by slug, one that Cloudflare refuses, the rest 404. */
interface FakeSite extends FakeServer {
  refuse: boolean;
  requests: string[];
}

async function startFakeSite(): Promise<FakeSite> {
  const site = { refuse: false, requests: [] as string[] };
  const send = (res: ServerResponse, status: number, body: string, type = 'application/json') => {
    res.writeHead(status, { 'Content-Type': type });
    res.end(body);
  };
  const server = await listenLoopback((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    site.requests.push(path);
    const slug = /^\/api\/v2\/channels\/([^/]+)$/.exec(path)?.[1];
    if (site.refuse)
      return send(res, 403, '<!DOCTYPE html><title>Just a moment...</title>', 'text/html; charset=utf-8');
    if (slug !== SLUG) return send(res, 404, JSON.stringify({ message: 'Channel not found' }));
    send(
      res,
      200,
      JSON.stringify({
        id: CHANNEL_ID,
        user_id: 77,
        slug: SLUG,
        chatroom: { id: CHATROOM_ID, channel_id: CHANNEL_ID, chat_mode: 'public' },
        livestream: null,
      }),
    );
  });
  return Object.assign(site, server);
}

let pusher: FakePusher;
let site: FakeSite;
let source: KickSource | undefined;
let events: StreamEvent[];
let logs: string[];
let ended: number;

beforeEach(async () => {
  [pusher, site] = await Promise.all([startFakePusher(), startFakeSite()]);
  events = [];
  logs = [];
  ended = 0;
});

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await Promise.all([pusher.close(), site.close()]);
});

function context(timers: Timers = systemTimers()): SourceContext {
  return {
    emit: (event) => events.push(event),
    log: (line) => logs.push(line),
    urls: { ...DEFAULT_PLATFORM_URLS, kickPusher: pusher.url, kickSite: site.url },
    timers,
    dataDir: '/nonexistent',
    twitchClientId: () => undefined,
    youtubeApiKey: () => undefined,
    streamEnded: () => {
      ended++;
    },
    random: () => 0.5,
  };
}

async function start(options: KickSourceOptions = {}, channel = SLUG, timers?: Timers): Promise<KickSource> {
  source = new KickSource(channel, context(timers), { retryMs: 20, retryMaxMs: 100, ...options });
  source.start();
  return source;
}

async function connected(): Promise<KickSource> {
  const s = await start();
  await pusher.waitForSubscribed(CHATROOM);
  await waitFor(() => s.report().state === 'connected');
  return s;
}

describe('the Kick source', () => {
  it("reads the ids from Kick's site and subscribes to the chatroom and the channel", async () => {
    const s = await connected();
    expect(site.requests).toEqual([`/api/v2/channels/${SLUG}`]);
    await pusher.waitForSubscribed(`channel.${CHANNEL_ID}`);
    expect(s.report()).toMatchObject({ platform: 'kick', channel: SLUG, state: 'connected' });
    expect(s.report().detail).toBeUndefined();
    expect(s.ids()).toEqual({ chatroomId: CHATROOM_ID, channelId: CHANNEL_ID });
    // It announced itself as protocol 7 and pinged nothing yet.
    expect(logs).toContain(`[kick] ${SLUG}: connected`);
  });

  it('delivers chat with its Kick message id, hosts as shares and subscriptions, each message id once', async () => {
    await connected();
    const id = pusher.chatMessage(CHATROOM_ID, {
      id: 'b6f1d7c2-0000-4000-8000-000000000001',
      content: 'hello [emote:37226:KEKW]',
      sender: { id: 9, username: 'KickFan' },
    });
    // The same message again (a resend, or what the Gatekeeper's feed already brought): once.
    pusher.chatMessage(CHATROOM_ID, {
      id,
      content: 'hello [emote:37226:KEKW]',
      sender: { username: 'KickFan' },
    });
    pusher.host(CHATROOM_ID, 'raider', 42);
    pusher.event(CHATROOM, 'App\\Events\\SubscriptionEvent', {
      chatroom_id: CHATROOM_ID,
      username: 'subber',
      months: 3,
    });
    pusher.event(CHATROOM, 'App\\Events\\GiftedSubscriptionsEvent', {
      chatroom_id: CHATROOM_ID,
      gifted_usernames: ['a', 'b', 'c'],
      gifter_username: 'generous',
    });
    pusher.chatMessage(CHATROOM_ID, { content: 'after', sender: { username: 'other' } });
    await waitFor(() => events.some((e) => e.type === 'chat' && e.data.comment === 'after'));
    expect(events).toEqual([
      {
        type: 'chat',
        platform: 'kick',
        // One viewer, one identity: the slug Kick makes from the name, as its webhooks give it.
        user: { uniqueId: 'kickfan', nickname: 'KickFan' },
        data: { comment: 'hello [emote:37226:KEKW]', messageId: id },
      },
      {
        type: 'share',
        platform: 'kick',
        user: { uniqueId: 'raider', nickname: 'raider' },
        data: { viewers: 42 },
      },
      {
        type: 'subscribe',
        platform: 'kick',
        user: { uniqueId: 'subber', nickname: 'subber' },
        data: { subMonth: 3 },
      },
      {
        type: 'subscribe',
        platform: 'kick',
        user: { uniqueId: 'generous', nickname: 'generous' },
        data: { gifted: true, giftCount: 3 },
      },
      expect.objectContaining({ type: 'chat', data: expect.objectContaining({ comment: 'after' }) }),
    ]);
    // The seam the Gatekeeper's feed uses: a message id already delivered is not delivered again.
    expect(source?.deliver(events[0] as StreamEvent, id)).toBe(false);
    expect(source?.deliver({ ...(events[0] as StreamEvent) }, 'another-id')).toBe(true);
  });

  it("leaves the socket's subscription notices out while the Gatekeeper's feed brings Kick's", async () => {
    const s = await connected();
    s.setFeedCoversSubscriptions(true);
    pusher.event(CHATROOM, 'App\\Events\\SubscriptionEvent', { username: 'subber', months: 2 });
    pusher.event(CHATROOM, 'App\\Events\\GiftedSubscriptionsEvent', {
      gifted_usernames: ['a'],
      gifter_username: 'g',
    });
    pusher.host(CHATROOM_ID, 'raider', 5);
    pusher.chatMessage(CHATROOM_ID, { content: 'chat still', sender: { username: 'viewer' } });
    await waitFor(() => events.length === 2);
    expect(events.map((e) => e.type)).toEqual(['share', 'chat']);
    s.setFeedCoversSubscriptions(false);
    pusher.event(CHATROOM, 'App\\Events\\SubscriptionEvent', { username: 'subber', months: 2 });
    await waitFor(() => events.length === 3);
    expect(events[2]).toMatchObject({ type: 'subscribe', data: { subMonth: 2 } });
  });

  it('the end of a stream on the channel ends the session', async () => {
    await connected();
    await pusher.waitForSubscribed(`channel.${CHANNEL_ID}`);
    pusher.event(`channel.${CHANNEL_ID}`, 'App\\Events\\StopStreamBroadcast', {
      livestream: { id: 1, channel: { id: CHANNEL_ID, is_banned: false } },
    });
    await waitFor(() => ended === 1);
    expect(events).toEqual([]);
  });

  it('garbage and unknown events: one line per kind a minute, nothing delivered, chat goes on', async () => {
    await connected();
    for (let i = 0; i < 3; i++) {
      pusher.raw('this is not JSON');
      pusher.raw('{"no":"event name"}');
      pusher.event(CHATROOM, 'App\\Events\\SomethingNewEvent', { whatever: i });
      pusher.event(CHATROOM, 'App\\Events\\ChatMessageEvent', { id: 'x', content: 'no sender' });
      // Known events that are not stream events: no line at all.
      pusher.event(CHATROOM, 'App\\Events\\ChatroomUpdatedEvent', { id: CHATROOM_ID });
    }
    pusher.chatMessage(CHATROOM_ID, { content: 'still here', sender: { username: 'viewer' } });
    await waitFor(() => events.length === 1);
    expect(events[0]).toMatchObject({ type: 'chat', data: { comment: 'still here' } });
    const odd = logs.filter((l) => !/: (connecting|connected)$/.test(l));
    expect(odd).toEqual([
      `[kick] ${SLUG}: a frame that is not JSON came from Kick's chat socket; ignored`,
      `[kick] ${SLUG}: a frame without an event name came from Kick's chat socket; ignored`,
      `[kick] ${SLUG}: an event Kick's chat socket sent is not one we know: App\\Events\\SomethingNewEvent; ignored`,
      expect.stringMatching(/^\[kick\] kickstreamer: a chat message did not match: sender: .*; ignored$/),
    ]);
    expect(source?.report().state).toBe('connected');
  });

  it('takes the chatroom id from the settings when the site refuses, and says so', async () => {
    site.refuse = true;
    const s = await start({ chatroomId: CHATROOM_ID });
    await pusher.waitForSubscribed(CHATROOM);
    await waitFor(() => s.report().state === 'connected');
    expect(s.report().detail).toBe(
      `Kick's site refused to give the channel's ids (403); reading the chat of chatroom ${CHATROOM_ID} from the settings`,
    );
    // Only the chatroom: the channel's id is unknown.
    expect(pusher.subscribed).toEqual([CHATROOM]);
    pusher.chatMessage(CHATROOM_ID, { content: 'by hand', sender: { username: 'viewer' } });
    await waitFor(() => events.length === 1);
  });

  it('without a chatroom id, a refusal is an error that says to add one and where to find it', async () => {
    site.refuse = true;
    const s = await start();
    await waitFor(() => s.report().state === 'error');
    expect(s.report().detail).toBe(
      `Kick's site refused to give the chatroom id of ${SLUG} (403): add its chatroom id to this source ` +
        `(the dashboard's Sources → Kick → Chatroom id; find it as the "chatroom": {"id": …} of ` +
        `${site.url}/api/v2/channels/${SLUG} opened in a browser); looking again in 5 min`,
    );
    expect(pusher.connections).toBe(0);
  });

  it('a channel that does not exist is an error in words', async () => {
    const s = await start({}, 'nosuchchannel');
    await waitFor(() => s.report().state === 'error');
    expect(s.report().detail).toMatch(
      /^Kick has no channel "nosuchchannel" \(check the name as in kick\.com\/nosuchchannel\); if it exists, add its chatroom id/,
    );
    expect(pusher.connections).toBe(0);
    expect(events).toEqual([]);
  });

  it('reconnects after a drop and subscribes again', async () => {
    const s = await connected();
    pusher.dropClients();
    await pusher.waitForSubscribed(CHATROOM, 2);
    await waitFor(() => s.report().state === 'connected');
    expect(logs.some((l) => /reconnecting \(chat connection lost; trying again in/.test(l))).toBe(true);
    pusher.chatMessage(CHATROOM_ID, { content: 'back', sender: { username: 'viewer' } });
    await waitFor(() => events.length === 1);
  });

  it('a close asking to come back now (4200–4299) reconnects at once the first time, then waits longer each time, up to the cap', async () => {
    const clock = new FakeTimers();
    const s = await start({ retryMs: 1000, retryMaxMs: 4000 }, SLUG, clock);
    clock.advance(0);
    await pusher.waitForSubscribed(CHATROOM);
    await waitFor(() => s.report().state === 'connected');
    const waits: (number | undefined)[] = [];
    for (let n = 2; n <= 6; n++) {
      pusher.closeClients(4200, 'Generic reconnect immediately');
      await waitFor(() => s.report().state === 'reconnecting');
      // Only the reconnect waits on the clock now (the socket's ping and staleness timers went with it).
      waits.push(clock.nextDelay());
      clock.advance(clock.nextDelay() ?? 0);
      await pusher.waitForSubscribed(CHATROOM, n);
      await waitFor(() => s.report().state === 'connected');
    }
    expect(waits).toEqual([0, 1000, 2000, 4000, 4000]);
    // A socket that stayed up a while: the next such close is answered at once again.
    clock.advance(61_000);
    pusher.closeClients(4201, 'Pong reply not received');
    await waitFor(() => s.report().state === 'reconnecting');
    expect(clock.nextDelay()).toBe(0);
  });

  it('a wrong app key is an error in words, not a fast loop', async () => {
    source = new KickSource(SLUG, {
      ...context(),
      urls: {
        ...DEFAULT_PLATFORM_URLS,
        kickPusher: pusher.url.replace(/\/app\/.*$/, '/app/wrongkey'),
        kickSite: site.url,
      },
    });
    source.start();
    await waitFor(() => source?.report().state === 'error');
    expect(source.report().detail).toMatch(
      /^Kick's chat socket refused the connection: App key wrongkey not in this cluster \(4001\); check OVERLAY_KICK_PUSHER_URL; trying again in 5 min$/,
    );
    expect(pusher.connections).toBe(1);
  });

  it('pings after 60 s of quiet and gives a socket silent for 180 s up (fake clock)', async () => {
    const clock = new FakeTimers();
    const s = await start({}, SLUG, clock);
    clock.advance(0);
    await pusher.waitForSubscribed(CHATROOM);
    await waitFor(() => s.report().state === 'connected');
    pusher.silent = true;
    const pingsSent = () =>
      pusher.received.filter((m) => (m as { event?: string }).event === 'pusher:ping').length;
    clock.advance(59_000);
    expect(pingsSent()).toBe(0);
    clock.advance(1000);
    await waitFor(() => pingsSent() === 1);
    clock.advance(60_000);
    await waitFor(() => pingsSent() === 2);
    expect(s.report().state).toBe('connected');
    clock.advance(60_000);
    await waitFor(() => s.report().state === 'reconnecting');
    expect(s.report().detail).toMatch(
      /^chat connection lost: nothing heard from Kick's chat socket for 3 min; trying again in /,
    );
    pusher.silent = false;
    clock.advance(100);
    await pusher.waitForSubscribed(CHATROOM, 2);
    await waitFor(() => s.report().state === 'connected');
  });
});

describe('Kick in the real daemon', () => {
  let daemon: TestDaemon | undefined;
  let client: TestWsClient | undefined;
  let irc: FakeTwitchIrc | undefined;

  afterEach(async () => {
    client?.close();
    client = undefined;
    await daemon?.stop();
    daemon = undefined;
    await irc?.close();
    irc = undefined;
  });

  const streamEvents = (c: TestWsClient) =>
    c.received
      .filter((m): m is Extract<ServerMessage, { type: 'stream-event' }> => m.type === 'stream-event')
      .map((m) => m.event as StreamEvent);

  async function status(d: TestDaemon): Promise<SourceReport[]> {
    const body = (await (await fetch(`${d.url}/status`)).json()) as { sources?: SourceReport[] };
    return body.sources ?? [];
  }

  it('chat and a host reach an overlay as kick events; garbage harms neither Kick nor Twitch', async () => {
    irc = await startFakeTwitchIrc();
    const d = await startTestDaemon({
      platformUrls: {
        ...UNREACHABLE_PLATFORMS,
        twitchIrc: irc.url,
        kickPusher: pusher.url,
        kickSite: site.url,
      },
      sources: [
        { platform: 'kick', channel: SLUG, enabled: true },
        { platform: 'twitch', channel: 'twitchy', enabled: true },
      ],
    });
    daemon = d;
    await pusher.waitForSubscribed(CHATROOM);
    await irc.waitForJoin('twitchy');
    await waitFor(async () => (await status(d)).every((s) => s.state === 'connected'));
    const overlay = d.overlays.list()[0];
    if (!overlay) throw new Error('no overlay');
    client = await subscribe(d, overlay.id);
    pusher.raw('garbage');
    pusher.event(CHATROOM, 'App\\Events\\BrandNewEvent', {});
    pusher.chatMessage(CHATROOM_ID, { id: 'msg-1', content: 'hi from kick', sender: { username: 'kicker' } });
    pusher.chatMessage(CHATROOM_ID, { id: 'msg-1', content: 'hi from kick', sender: { username: 'kicker' } });
    pusher.host(CHATROOM_ID, 'raider', 7);
    irc.privmsg('twitchy', { login: 'viewer' }, 'hi from twitch');
    const c = client;
    await waitFor(() => streamEvents(c).length >= 3);
    await waitFor(() => streamEvents(c).some((e) => e.type === 'share'));
    const seen = streamEvents(c).map(
      (e) => `${e.platform}:${e.type}:${'comment' in e.data ? e.data.comment : ''}`,
    );
    expect(seen.filter((s) => s.startsWith('kick:'))).toEqual(['kick:chat:hi from kick', 'kick:share:']);
    expect(seen).toContain('twitch:chat:hi from twitch');
    expect(streamEvents(c).find((e) => e.type === 'share')).toMatchObject({ data: { viewers: 7 } });
    expect(d.logs.filter((l) => l.startsWith('[kick]') && /ignored/.test(l))).toHaveLength(2);
    expect((await status(d)).map((s) => `${s.platform}:${s.state}`)).toEqual([
      'kick:connected',
      'twitch:connected',
    ]);
    // `overlay-daemon status` in words.
    const body = (await (await fetch(`${d.url}/status`)).json()) as DaemonStatus;
    expect(describeDaemonStatus(body, d.url)).toContain(`  Kick:          ${SLUG} connected\n`);
  });

  it('a chatroom id in the settings is used when the site refuses; /status says so in words', async () => {
    site.refuse = true;
    const d = await startTestDaemon({
      platformUrls: { ...UNREACHABLE_PLATFORMS, kickPusher: pusher.url, kickSite: site.url },
    });
    daemon = d;
    const settings = (await (await api(d, 'GET', '/api/settings')).json()) as Record<string, unknown>;
    const refused = await api(d, 'PUT', '/api/settings', {
      ...settings,
      sources: [{ platform: 'twitch', channel: 'somebody', chatroomId: 5 }],
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/only a Kick source has a chatroom id/);
    const saved = await api(d, 'PUT', '/api/settings', {
      ...settings,
      sources: [{ platform: 'kick', channel: 'KickStreamer' }],
    });
    expect(saved.status).toBe(200);
    await waitFor(async () => (await status(d))[0]?.state === 'error');
    expect((await status(d))[0]).toMatchObject({
      platform: 'kick',
      channel: SLUG,
      detail: expect.stringMatching(
        /^Kick's site refused to give the chatroom id of kickstreamer \(403\): add its chatroom id/,
      ),
    });
    // Adding the chatroom id starts the source again with it.
    await api(d, 'PUT', '/api/settings', {
      ...settings,
      sources: [{ platform: 'kick', channel: SLUG, chatroomId: CHATROOM_ID }],
    });
    await pusher.waitForSubscribed(CHATROOM);
    await waitFor(async () => (await status(d))[0]?.state === 'connected');
    expect((await status(d))[0]?.detail).toMatch(/reading the chat of chatroom 4100001 from the settings$/);
  });
});

describe('--kick on the command line', () => {
  afterEach(() => killCliProcesses());

  it('refuses a bad channel or a plain ws:// socket address off this machine before starting', async () => {
    const dataDir = await makeDataDir();
    const bad = await runCli(['--port', '0', '--data-dir', dataDir, '--kick', 'no spaces']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--kick must be a Kick channel as in kick\.com\/<channel>/);
    const plain = await runCli(['--port', '0', '--data-dir', dataDir, '--kick', SLUG], {
      OVERLAY_KICK_PUSHER_URL: 'ws://10.0.0.1/app/key',
    });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/OVERLAY_KICK_PUSHER_URL may use ws:\/\/ only on 127\.0\.0\.0\/8/);
  }, 40_000);

  it('reads the chat of the channel given', async () => {
    const dataDir = await makeDataDir();
    const closed = 'http://127.0.0.1:9';
    const run = spawnCli(
      ['--port', '0', '--data-dir', dataDir, '--kick', 'KickStreamer', '--gatekeeper', closed],
      {
        OVERLAY_KICK_PUSHER_URL: pusher.url,
        OVERLAY_KICK_SITE_URL: site.url,
      },
    );
    await pusher.waitForSubscribed(CHATROOM, 1, 30_000);
    await waitFor(() => /\[kick\] kickstreamer: connected/.test(run.stderr()), 15_000);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  }, 60_000);
});
