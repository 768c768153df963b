// The YouTube Live source against a local stand-in that speaks the Data API v3's JSON: the mapping of
// chat, Super Chats, Super Stickers and members; the chat's backlog not replayed; each message once;
// YouTube's polling interval kept; the quota (403 quotaExceeded) waited out without losing the place in
// the chat; a stream that ends and one that starts later; bad answers dropped; the key never logged.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLATFORM_URLS } from '../../daemon/src/sources/platform-urls.js';
import type { SourceContext } from '../../daemon/src/sources/source.js';
import {
  untilQuotaReset,
  YouTubeSource,
  type YouTubeSourceOptions,
} from '../../daemon/src/sources/youtube/source.js';
import { systemTimers } from '../../daemon/src/timers.js';
import type { StreamEvent } from '../../shared/protocol/index.js';
import type { Timers } from '../../shared/timers.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeYouTube, startFakeYouTube } from '../support/fakes/youtube.js';
import { waitFor } from '../support/wait.js';

const KEY = 'AIzaTestKey_0123456789';
const CHANNEL = 'UCabcdefghijklmnopqrstuv';

let youtube: FakeYouTube;
let source: YouTubeSource | undefined;
let events: StreamEvent[];
let logs: string[];
let ended: number;
let key: string | undefined;

beforeEach(async () => {
  youtube = await startFakeYouTube({ apiKey: KEY });
  events = [];
  logs = [];
  ended = 0;
  key = KEY;
});

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await youtube.close();
  // Whatever happened, the key never reached the log.
  expect(logs.join('\n')).not.toContain(KEY);
});

function start(
  channel = CHANNEL,
  options: YouTubeSourceOptions = {},
  timers: Timers = systemTimers(),
): YouTubeSource {
  const ctx: SourceContext = {
    emit: (event) => events.push(event),
    log: (line) => logs.push(line),
    urls: { ...DEFAULT_PLATFORM_URLS, youtubeApi: youtube.url },
    timers,
    dataDir: '/nonexistent',
    twitchClientId: () => undefined,
    youtubeApiKey: () => key,
    streamEnded: () => {
      ended++;
    },
  };
  source = new YouTubeSource(channel, ctx, {
    lookAgainMs: 100,
    lookAgainMaxMs: 200,
    retryMs: 50,
    ...options,
  });
  source.start();
  return source;
}

const chatPolls = () => youtube.requests.filter((r) => r.path === 'liveChat/messages');

/**
 * Moves a fake clock on, one due timer at a time (none further off than `maxStepMs`), while the
 * requests it starts are answered for real, until `check` holds.
 */
async function drive(
  clock: FakeTimers,
  check: () => boolean,
  what: string,
  maxStepMs = 10_000,
): Promise<void> {
  await waitFor(
    () => {
      if (check()) return true;
      const next = clock.nextDelay();
      if (next !== undefined && next <= maxStepMs) clock.advance(next);
      return check();
    },
    5000,
    what,
  );
}

describe('the YouTube source', () => {
  it('maps chat, Super Chats, Super Stickers and new members, after leaving the backlog out', async () => {
    youtube.goLive(CHANNEL, { concurrentViewers: 77 });
    youtube.addMessage({ text: 'said before we looked', author: 'Early' });
    const s = start();
    await waitFor(() => s.report().state === 'connected');
    await waitFor(() => chatPolls().length >= 2);
    youtube.addMessage({ text: 'hello there', author: 'Alice' });
    youtube.addMessage({
      type: 'superChatEvent',
      text: 'great stream',
      author: 'Bob',
      amountMicros: 5_000_000,
    });
    youtube.addMessage({
      type: 'superStickerEvent',
      author: 'Cleo',
      amountMicros: 2_990_000,
      currency: 'EUR',
    });
    youtube.addMessage({ type: 'newSponsorEvent', author: 'Dan', memberLevelName: 'Gold' });
    await waitFor(() => events.filter((e) => e.type !== 'viewer').length === 4);
    expect(events.find((e) => e.type === 'viewer')).toMatchObject({
      platform: 'youtube',
      data: { viewerCount: 77 },
    });
    const [chat, superChat, sticker, member] = events.filter((e) => e.type !== 'viewer');
    expect(chat).toMatchObject({
      type: 'chat',
      platform: 'youtube',
      user: { nickname: 'Alice' },
      data: { comment: 'hello there' },
    });
    expect(chat?.user.uniqueId).toMatch(/^UC/);
    expect(superChat).toMatchObject({
      type: 'gift',
      platform: 'youtube',
      data: {
        giftName: 'Super Chat',
        repeatCount: 1,
        diamondCount: 500,
        currency: 'USD',
        amountDisplayString: '$5.00',
        comment: 'great stream',
      },
    });
    expect(sticker).toMatchObject({
      type: 'gift',
      data: { giftName: 'Dancing cat', repeatCount: 1, diamondCount: 299, currency: 'EUR' },
    });
    expect(member).toMatchObject({
      type: 'subscribe',
      platform: 'youtube',
      user: { nickname: 'Dan' },
      data: { tier: 'Gold' },
    });
    expect(events.some((e) => e.type === 'chat' && e.data.comment === 'said before we looked')).toBe(false);
  });

  it('waits the polling interval YouTube gives, follows nextPageToken, and delivers a repeated message once', async () => {
    youtube.goLive(CHANNEL);
    youtube.setPollingIntervalMillis(300);
    const s = start();
    await waitFor(() => s.report().state === 'connected');
    youtube.addMessage({ text: 'one' });
    youtube.addMessage({ text: 'two' });
    await waitFor(() => events.length === 2);
    youtube.repeatNextPage();
    youtube.addMessage({ text: 'three' });
    await waitFor(() => events.length === 3);
    await waitFor(() => chatPolls().length >= 6, 5000);
    expect(events.map((e) => (e.type === 'chat' ? e.data.comment : e.type))).toEqual(['one', 'two', 'three']);
    const polls = chatPolls();
    const gaps = polls.slice(1).map((p, i) => p.at - (polls[i]?.at ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(280);
    // After the first page, every poll carries the token the previous answer gave.
    expect(polls.slice(1).every((p) => p.query.get('pageToken')?.startsWith('p'))).toBe(true);
  });

  it('resolves a handle once, then reads its channel', async () => {
    youtube.handles.set('@somecreator', CHANNEL);
    youtube.goLive(CHANNEL);
    const s = start('@somecreator');
    await waitFor(() => s.report().state === 'connected');
    youtube.addMessage({ text: 'found you' });
    await waitFor(() => events.length === 1);
    expect(youtube.requests.filter((r) => r.path === 'channels')).toHaveLength(1);
    expect(youtube.requests.find((r) => r.path === 'channels')?.query.get('forHandle')).toBe('@somecreator');
  });

  it('an unknown handle and a missing key are errors a streamer can act on', async () => {
    const unknown = start('@nobodyhere');
    await waitFor(() => unknown.report().state === 'error');
    expect(unknown.report().detail).toMatch(/no channel @nobodyhere/);
    await unknown.stop();
    key = undefined;
    const keyless = start();
    await waitFor(() => keyless.report().state === 'error');
    expect(keyless.report().detail).toMatch(/needs a YouTube Data API key/);
  });

  it('waits for the Gatekeeper config before saying a key is missing, and says when it is out of reach', async () => {
    youtube.goLive(CHANNEL);
    key = undefined;
    let arrival: 'waiting' | 'arrived' | 'unreachable' = 'waiting';
    const s = new YouTubeSource(
      CHANNEL,
      {
        emit: (event) => events.push(event),
        log: (line) => logs.push(line),
        urls: { ...DEFAULT_PLATFORM_URLS, youtubeApi: youtube.url },
        timers: systemTimers(),
        dataDir: '/nonexistent',
        twitchClientId: () => undefined,
        youtubeApiKey: () => key,
        configArrival: () => arrival,
        streamEnded: () => {},
      },
      { retryMs: 50 },
    );
    source = s;
    s.start();
    await waitFor(() => /waiting for the Gatekeeper's config/.test(s.report().detail ?? ''));
    // No error, not "not set": the config may bring the key.
    expect(s.report().state).toBe('connecting');
    expect(logs.join('\n')).not.toMatch(/error|needs a YouTube Data API key/);
    // The config arrives with a key: the source reads the chat.
    arrival = 'arrived';
    key = KEY;
    await waitFor(() => s.report().state === 'connected', 5000);
    await s.stop();
    // Without network the Gatekeeper cannot be reached: said in those words.
    key = undefined;
    arrival = 'unreachable';
    s.start();
    await waitFor(() => s.report().state === 'error');
    expect(s.report().detail).toMatch(/cannot reach the Gatekeeper/);
  });

  it('says when the key is refused, without ever logging it', async () => {
    key = 'AIzaWrongKey';
    const s = start();
    await waitFor(() => s.report().state === 'error');
    expect(s.report().detail).toMatch(/API key was refused/);
    expect(JSON.stringify(s.report())).not.toContain('AIzaWrongKey');
  });

  it('is offline while the channel is not live, and connects when it goes live', async () => {
    const s = start();
    await waitFor(() => s.report().state === 'offline');
    expect(s.report().detail).toMatch(/not live; looking again in/);
    const searches = youtube.requests.filter((r) => r.path === 'search').length;
    youtube.goLive(CHANNEL);
    await waitFor(() => s.report().state === 'connected', 3000);
    expect(youtube.requests.filter((r) => r.path === 'search').length).toBeGreaterThan(searches);
  });

  it('waits out an exhausted quota as backoff, asks nothing meanwhile, then misses nothing', async () => {
    // On a fake clock: the hour of waiting passes at once, and nothing depends on the machine's speed.
    const clock = new FakeTimers();
    const hour = 3_600_000;
    youtube.goLive(CHANNEL);
    const s = start(CHANNEL, { quotaBackoffMs: hour }, clock);
    await drive(clock, () => s.report().state === 'connected', 'connected');
    youtube.addMessage({ text: 'before' });
    await drive(clock, () => events.length === 1, 'the first message');
    youtube.setQuotaExceeded(true);
    await drive(clock, () => s.report().state === 'backoff', 'the backoff');
    expect(s.report().detail).toMatch(/quota/);
    // The one thing left to do is the step after the whole wait.
    expect(clock.size).toBe(1);
    expect(clock.nextDelay()).toBe(hour);
    const during = youtube.requests.length;
    youtube.addMessage({ text: 'said while we waited' });
    clock.advance(hour - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(youtube.requests.length).toBe(during);
    expect(s.report().state).toBe('backoff');
    youtube.setQuotaExceeded(false);
    clock.advance(1);
    await drive(clock, () => s.report().state === 'connected', 'connected again');
    await drive(clock, () => events.length === 2, 'the message said meanwhile');
    expect(events.map((e) => (e.type === 'chat' ? e.data.comment : ''))).toEqual([
      'before',
      'said while we waited',
    ]);
  });

  it('a stream that ends ends its session and the source looks for the next one', async () => {
    youtube.goLive(CHANNEL);
    const s = start();
    await waitFor(() => s.report().state === 'connected');
    youtube.endStream();
    await waitFor(() => ended === 1);
    await waitFor(() => s.report().state === 'offline');
    youtube.goLive(CHANNEL);
    await waitFor(() => s.report().state === 'connected', 3000);
  });

  it('drops malformed answers and messages with a reason and carries on', async () => {
    youtube.goLive(CHANNEL);
    const s = start();
    await waitFor(() => s.report().state === 'connected');
    youtube.addRawItem({ id: 'broken-1', snippet: { type: 'textMessageEvent' } });
    youtube.addRawItem('not even an object');
    youtube.addMessage({ type: 'superChatEvent', amountMicros: Number.NaN });
    youtube.addMessage({ type: 'messageDeletedEvent' });
    youtube.addMessage({ text: 'after the junk' });
    await waitFor(() => events.length === 1);
    expect(logs.filter((l) => /message dropped/.test(l)).length).toBeGreaterThanOrEqual(2);
    youtube.failNext(502, undefined, '<html>Bad Gateway</html>');
    await waitFor(() => s.report().state === 'reconnecting');
    youtube.addMessage({ text: 'after the bad gateway' });
    await waitFor(() => events.length === 2, 3000);
    expect(s.report().state).toBe('connected');
  });

  it('stops: no request after stop()', async () => {
    youtube.goLive(CHANNEL);
    const clock = new FakeTimers();
    const s = start(CHANNEL, {}, clock);
    await drive(clock, () => chatPolls().length >= 2, 'two chat polls');
    await s.stop();
    source = undefined;
    const count = youtube.requests.length;
    // Nothing is left to wake it: no timer pending, and a day later still no request.
    expect(clock.size).toBe(0);
    clock.advance(24 * 3_600_000);
    expect(youtube.requests.length).toBe(count);
    expect(s.report().state).toBe('off');
  });

  it('knows when the quota resets: midnight in California', () => {
    // 2026-06-01 22:00 in Los Angeles (PDT, UTC−7) is 05:00 UTC the next day: about 2 h to go.
    const wait = untilQuotaReset(Date.UTC(2026, 5, 2, 5, 0, 0));
    expect(wait).toBeGreaterThan(2 * 3_600_000);
    expect(wait).toBeLessThan(2 * 3_600_000 + 10 * 60_000);
  });
});
