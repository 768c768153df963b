// The Twitch source as a whole against the protocol-level stand-ins (IRC over WebSocket, EventSub
// WebSocket, Helix, the sign-in service): chat alone without a sign-in; with one, EventSub events and
// viewer counts beside chat, a cheer or a sub counted once (EventSub's, never chat's as well), the end
// of a stream, and the state in a streamer's words.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLATFORM_URLS } from '../../daemon/src/sources/platform-urls.js';
import type { SourceContext } from '../../daemon/src/sources/source.js';
import { writeTwitchTokens } from '../../daemon/src/sources/twitch/auth.js';
import { TwitchSource } from '../../daemon/src/sources/twitch/source.js';
import { systemTimers } from '../../daemon/src/timers.js';
import type { StreamEvent } from '../../shared/protocol/index.js';
import type { Timers } from '../../shared/timers.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeTwitch, startFakeTwitch, storedTokens, twitchEvent } from '../support/fakes/twitch.js';
import { type FakeTwitchIrc, startFakeTwitchIrc } from '../support/fakes/twitch-irc.js';
import { waitFor } from '../support/wait.js';

let irc: FakeTwitchIrc;
let twitch: FakeTwitch;
let dataDir: string;
let source: TwitchSource | undefined;
let events: StreamEvent[];
let logs: string[];
let ended: number;

beforeEach(async () => {
  [irc, twitch] = await Promise.all([startFakeTwitchIrc(), startFakeTwitch()]);
  dataDir = await mkdtemp(join(tmpdir(), 'overlay-twitch-'));
  events = [];
  logs = [];
  ended = 0;
});

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await Promise.all([irc.close(), twitch.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

function context(timers: Timers = systemTimers()): SourceContext {
  return {
    emit: (event) => events.push(event),
    log: (line) => logs.push(line),
    urls: {
      ...DEFAULT_PLATFORM_URLS,
      twitchIrc: irc.url,
      twitchEventSub: twitch.urls.eventsub,
      twitchApi: twitch.urls.api,
      twitchAuth: twitch.urls.auth,
      youtubeApi: 'http://127.0.0.1:9/youtube/v3',
    },
    timers,
    dataDir,
    twitchClientId: () => twitch.clientId,
    youtubeApiKey: () => undefined,
    streamEnded: () => {
      ended++;
    },
  };
}

/** Signs in as the broadcaster the way `connect twitch` leaves it: twitch.json with the fake's tokens. */
async function signIn(): Promise<void> {
  const token = twitch.issueTokens();
  await writeTwitchTokens(dataDir, storedTokens(token));
}

async function start(options = {}, timers?: Timers): Promise<TwitchSource> {
  source = new TwitchSource(twitch.user.login, context(timers), options);
  source.start();
  await irc.waitForJoin(twitch.user.login);
  await waitFor(() => source?.report().state === 'connected');
  return source;
}

describe('the Twitch source', () => {
  it('reads chat without a sign-in and says what a sign-in would add', async () => {
    const s = await start();
    expect(s.report()).toMatchObject({ platform: 'twitch', channel: 'streamer', state: 'connected' });
    expect(s.report().detail).toMatch(
      /chat only: connect Twitch \(Sources → Connect Twitch, or "overlay-daemon connect twitch"\)/,
    );
    irc.privmsg('streamer', { login: 'viewer' }, 'hi');
    irc.privmsg('streamer', { login: 'cheerer' }, 'Cheer10', { bits: '10' });
    await waitFor(() => events.length === 2);
    expect(events.map((e) => `${e.platform}:${e.type}`)).toEqual(['twitch:chat', 'twitch:gift']);
    // Nothing of Helix or EventSub was asked without a sign-in.
    expect(twitch.requests.filter((r) => r.path.startsWith('/helix'))).toEqual([]);
    expect(twitch.sessions).toEqual([]);
  });

  it('signed in: EventSub events and viewer counts beside chat, each cheer and sub once', async () => {
    await signIn();
    twitch.setStream(twitch.user.id, 321);
    const s = await start({ viewerIntervalMs: 200 });
    await waitFor(() => twitch.activeSubscriptions().length === 6);
    await waitFor(() => s.coverage().cheers && s.coverage().subscriptions && s.coverage().raids);
    await waitFor(() => s.report().detail === undefined);
    await waitFor(() => events.some((e) => e.type === 'viewer'));
    expect(events.find((e) => e.type === 'viewer')).toMatchObject({
      platform: 'twitch',
      data: { viewerCount: 321 },
    });

    // A cheer arrives both in chat (the bits tag) and over EventSub: one gift.
    irc.privmsg('streamer', { login: 'viewer' }, 'Cheer100 hype', { bits: '100' });
    twitch.notify(
      'channel.cheer',
      twitchEvent('channel.cheer', twitch.user, { bits: 100, message: 'Cheer100 hype' }),
    );
    // A sub arrives both as USERNOTICE and over EventSub: one subscribe.
    irc.usernotice('streamer', 'sub', { login: 'viewer' }, { 'msg-param-sub-plan': '1000' });
    twitch.notify('channel.subscribe', twitchEvent('channel.subscribe', twitch.user));
    twitch.notify('channel.follow', twitchEvent('channel.follow', twitch.user));
    twitch.notify('channel.raid', twitchEvent('channel.raid', twitch.user, { viewers: 12 }));
    irc.privmsg('streamer', { login: 'viewer' }, 'plain chat');
    // Each connection delivers in order: once the last message sent on each has arrived (the chat line on
    // IRC, the raid on EventSub), a second copy of anything sent before it would have arrived too.
    await waitFor(() => events.some((e) => e.type === 'chat' && e.data.comment === 'plain chat'));
    await waitFor(() => events.some((e) => e.type === 'share'));
    const kinds = events.filter((e) => e.type !== 'viewer').map((e) => e.type);
    expect(kinds.sort()).toEqual(['chat', 'follow', 'gift', 'share', 'subscribe']);
    expect(events.find((e) => e.type === 'gift')).toMatchObject({
      platform: 'twitch',
      data: { giftName: 'Bits', repeatCount: 100, diamondCount: 1 },
    });

    // The stream ends: no viewer count any more, the journal's session ends.
    twitch.setStream(twitch.user.id, undefined);
    await waitFor(() => ended === 1);
  });

  it('out of reach, says it cannot reach Twitch (as TikTok does), without sign-in advice', async () => {
    const closed = await startFakeTwitchIrc();
    const url = closed.url;
    await closed.close();
    source = new TwitchSource(twitch.user.login, {
      ...context(),
      urls: { ...context().urls, twitchIrc: url },
    });
    source.start();
    await waitFor(() => source?.report().state === 'reconnecting', 10_000);
    const detail = source.report().detail ?? '';
    expect(detail).toMatch(/^cannot reach Twitch \(is this computer online\?\)/);
    expect(detail).not.toMatch(/connection lost|connect Twitch|sign/i);
    expect(logs.join('\n')).toContain('[twitch] #streamer: reconnecting (cannot reach Twitch');
  });

  it('keeps chat going when the sign-in no longer works, and says why', async () => {
    await signIn();
    twitch.forgetAllTokens();
    const s = await start();
    await waitFor(() => /events|sign|connect twitch/.test(s.report().detail ?? ''));
    irc.privmsg('streamer', { login: 'viewer' }, 'still here');
    await waitFor(() => events.some((e) => e.type === 'chat'));
    expect(s.report().state).toBe('connected');
  });

  it('stops everything: chat, EventSub and the viewer count', async () => {
    await signIn();
    twitch.setStream(twitch.user.id, 5);
    const clock = new FakeTimers();
    const s = await start({ viewerIntervalMs: 100 }, clock);
    await waitFor(() => twitch.clients === 1);
    // The viewer count is being polled.
    const streamPolls = () => twitch.requests.filter((r) => r.path === '/helix/streams').length;
    const polled = streamPolls();
    await waitFor(
      () => {
        // Moves the clock to the next poll once it is scheduled (no further than the poll interval).
        const next = clock.nextDelay();
        if (streamPolls() === polled && next !== undefined && next <= 100) clock.advance(next);
        return streamPolls() > polled;
      },
      3000,
      'a viewer count poll',
    );
    await s.stop();
    source = undefined;
    expect(s.report().state).toBe('off');
    await waitFor(() => twitch.clients === 0 && irc.clients === 0);
    const helixCalls = twitch.requests.length;
    // Nothing is left to wake it: no timer pending, and an hour later Helix was asked nothing more.
    expect(clock.size).toBe(0);
    clock.advance(3_600_000);
    expect(twitch.requests.length).toBe(helixCalls);
  });
});
