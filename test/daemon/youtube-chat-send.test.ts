// Writing in a YouTube live chat as the streamer, against the YouTube stand-in: the message inserted
// into the live chat the YouTube source reads (and echoed back there), each reason it cannot be sent in
// words, a refused access token renewed once, Google's refusals named, and a rate limit's wait.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatSender } from '../../daemon/src/chat/types.js';
import { DEFAULT_PLATFORM_URLS } from '../../daemon/src/sources/platform-urls.js';
import type { SourceContext } from '../../daemon/src/sources/source.js';
import {
  createYouTubeChatSender,
  type WatchedLiveChat,
  watchedLiveChats,
} from '../../daemon/src/sources/youtube/chat-send.js';
import { YouTubeSource } from '../../daemon/src/sources/youtube/source.js';
import { readYouTubeTokens, writeYouTubeTokens } from '../../daemon/src/sources/youtube/token-file.js';
import { FileWatcher } from '../../daemon/src/store/file-watcher.js';
import { systemTimers } from '../../daemon/src/timers.js';
import { DEFAULT_CONFIG, type RemoteConfig } from '../../shared/config.js';
import type { StreamEvent } from '../../shared/protocol/index.js';
import { sendRefusal } from '../support/chat-refusal.js';
import { makeDataDir } from '../support/daemon.js';
import { type FakeYouTube, startFakeYouTube } from '../support/fakes/youtube.js';
import { waitFor } from '../support/wait.js';

const KEY = 'AIzaTestKey_0123456789';

let youtube: FakeYouTube;
let dataDir: string;
let config: RemoteConfig | undefined;
let chats: WatchedLiveChat[];
let logs: string[];
let source: YouTubeSource | undefined;
/** youtube.json followed as the daemon follows it. */
let files: FileWatcher;

beforeEach(async () => {
  youtube = await startFakeYouTube({ apiKey: KEY });
  dataDir = await makeDataDir();
  config = withClient(youtube.googleClient);
  chats = [];
  logs = [];
  files = new FileWatcher({ settleMs: 20 });
});

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await files.close();
  await youtube.close();
});

function withClient(client: { clientId?: string; clientSecret?: string }): RemoteConfig {
  return {
    ...DEFAULT_CONFIG,
    platforms: {
      youtube: {
        ...(client.clientId ? { oauth_client_id: client.clientId } : {}),
        ...(client.clientSecret ? { oauth_client_secret: client.clientSecret } : {}),
      },
    },
  };
}

function sender(): ChatSender {
  return createYouTubeChatSender({
    dataDir,
    files,
    urls: { youtubeApi: youtube.url, googleAuth: youtube.authUrl },
    remoteConfig: () => config,
    liveChats: () => chats,
    log: (line) => logs.push(line),
  });
}

/** Writes youtube.json as another program does, and settles once the file watcher has told its listeners. */
async function written(write: () => Promise<void>): Promise<void> {
  let stop = () => {};
  const told = new Promise<void>((resolve) => {
    stop = files.watch(join(dataDir, 'youtube.json'), () => resolve());
  });
  try {
    await write();
    await told;
  } finally {
    stop();
  }
}

/** A sign-in made earlier: youtube.json as `connect youtube` leaves it. */
async function signedIn(options: { expiresInMs?: number; scope?: string } = {}) {
  const tokens = youtube.issueTokens(options.scope ? { scope: options.scope } : {});
  await written(() =>
    writeYouTubeTokens(dataDir, {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt: new Date(Date.now() + (options.expiresInMs ?? 3_600_000)).toISOString(),
      scopes: [tokens.scope],
      clientId: youtube.googleClient.clientId,
      channelId: youtube.channel.id,
      channelTitle: youtube.channel.title,
    }),
  );
  return tokens;
}

/** The stream is live and its chat is read. */
function live(): string {
  const { liveChatId } = youtube.goLive(youtube.channel.id);
  chats = [{ channelId: youtube.channel.id, liveChatId }];
  return liveChatId;
}

describe('the YouTube chat sender', () => {
  it('inserts the message into the live chat the YouTube source reads, which echoes it back', async () => {
    await signedIn();
    youtube.goLive(youtube.channel.id);
    const events: StreamEvent[] = [];
    const ctx: SourceContext = {
      emit: (event) => events.push(event),
      log: (line) => logs.push(line),
      urls: { ...DEFAULT_PLATFORM_URLS, youtubeApi: youtube.url },
      timers: systemTimers(),
      dataDir,
      twitchClientId: () => undefined,
      youtubeApiKey: () => KEY,
      streamEnded: () => {},
    };
    source = new YouTubeSource(youtube.channel.id, ctx, { minPollMs: 50 });
    youtube.setPollingIntervalMillis(50);
    const running = [source];
    const send = createYouTubeChatSender({
      dataDir,
      files,
      urls: { youtubeApi: youtube.url, googleAuth: youtube.authUrl },
      remoteConfig: () => config,
      liveChats: () => watchedLiveChats({ running: () => running }),
    });
    // Before the source found the stream there is no chat to write in.
    expect(send.unavailable()).toMatch(/no YouTube live chat is being read now/);
    source.start();
    await waitFor(() => source?.report().state === 'connected');
    expect(send.unavailable()).toBeUndefined();
    expect(send.senderName()).toBe('Streamer');

    const sent = await send.send('Thanks for the follow!', 'event');
    expect(youtube.inserted).toHaveLength(1);
    expect(youtube.inserted[0]).toMatchObject({ text: 'Thanks for the follow!', id: sent.messageId });
    expect(youtube.inserted[0]?.liveChatId).toBe(source.liveChat()?.liveChatId);
    // The platform echoes it in the chat the source reads, under the signed-in channel.
    await waitFor(() => events.some((e) => e.type === 'chat'));
    const echo = events.find((e) => e.type === 'chat');
    expect(echo?.user).toMatchObject({ uniqueId: youtube.channel.id, nickname: 'Streamer' });
    expect(echo?.data).toMatchObject({ comment: 'Thanks for the follow!' });
    expect(send.platform).toBe('youtube');
  });

  it('says in words what is missing: the Google client, the sign-in, its scope, a live chat', async () => {
    const s = sender();
    config = withClient({});
    expect(s.unavailable()).toBe(
      "the Gatekeeper's configuration names no Google client (platforms.youtube.oauth_client_id and oauth_client_secret): its operator sets one up (docs/platforms.md, YouTube chat sending)",
    );
    config = withClient({ clientId: youtube.googleClient.clientId });
    expect(s.unavailable()).toMatch(/names no Google client \(platforms\.youtube\.oauth_client_secret\)/);
    config = undefined;
    const waiting = createYouTubeChatSender({
      dataDir,
      files,
      urls: { youtubeApi: youtube.url, googleAuth: youtube.authUrl },
      remoteConfig: () => undefined,
      configArrival: () => 'unreachable',
      liveChats: () => chats,
    });
    expect(waiting.unavailable()).toMatch(/cannot reach the Gatekeeper/);

    config = withClient(youtube.googleClient);
    expect(s.unavailable()).toBe(
      'no YouTube sign-in to write in chat with: run "overlay-daemon connect youtube"',
    );
    expect((await sendRefusal(s.send('hi', 'event'))).message).toMatch(/no YouTube sign-in/);

    await written(() => writeFile(join(dataDir, 'youtube.json'), '{"accessToken": '));
    expect(s.unavailable()).toMatch(/the YouTube sign-in cannot be read .*connect youtube" again/);

    await signedIn({ scope: 'https://www.googleapis.com/auth/youtube.readonly' });
    expect(s.unavailable()).toMatch(/does not allow writing in chat \(it lacks youtube\.force-ssl\)/);

    await signedIn();
    expect(s.unavailable()).toMatch(/no YouTube live chat is being read now/);
    live();
    expect(s.unavailable()).toBeUndefined();

    config = withClient({ clientId: 'another.apps.googleusercontent.com', clientSecret: 'other' });
    expect(s.unavailable()).toMatch(/made with another Google client/);
    expect(youtube.inserted).toHaveLength(0);
  });

  it('renews an access token YouTube refuses, once, and keeps the renewal in youtube.json', async () => {
    const first = await signedIn();
    const liveChatId = live();
    youtube.invalidateAccessTokens();
    const s = sender();
    const sent = await s.send('still here', 'own');
    expect(sent.messageId).toBe(youtube.inserted[0]?.id);
    expect(youtube.inserted[0]).toMatchObject({ liveChatId, text: 'still here' });
    const refreshes = youtube.authRequests.filter((r) => r.form.get('grant_type') === 'refresh_token');
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]?.form.get('client_secret')).toBe(youtube.googleClient.clientSecret);
    const kept = await readYouTubeTokens(dataDir);
    expect(kept?.accessToken).not.toBe(first.accessToken);
    expect(kept?.accessToken).toBe(youtube.inserted[0]?.accessToken);
    // Google keeps the refresh token it gave: the file too.
    expect(kept?.refreshToken).toBe(first.refreshToken);
  });

  it('renews a token that has ended before sending, and says so when Google ended the sign-in', async () => {
    await signedIn({ expiresInMs: -1000 });
    live();
    const s = sender();
    await s.send('one', 'event');
    expect(youtube.authRequests.filter((r) => r.form.get('grant_type') === 'refresh_token')).toHaveLength(1);

    await signedIn({ expiresInMs: -1000 });
    youtube.revokeRefreshTokens();
    const err = await sendRefusal(s.send('two', 'event'));
    expect(err.message).toBe(
      'the YouTube sign-in has ended (revoked at Google, or unused for too long): run "overlay-daemon connect youtube" again',
    );
    expect(s.unavailable()).toBe(err.message);
    expect(logs.join('\n')).toMatch(/sign-in has ended/);
    // A new sign-in (a new refresh token) is taken at once.
    await signedIn();
    expect(s.unavailable()).toBeUndefined();
  });

  it('gives up after one renewal when YouTube keeps refusing the token', async () => {
    await signedIn();
    live();
    const s = sender();
    youtube.invalidateAccessTokens();
    // The renewed token is refused too (an account whose access was withdrawn meanwhile).
    youtube.failNextInsert(401, 'authError');
    const err = await sendRefusal(s.send('hi', 'event'));
    expect(err.status).toBe(401);
    expect(err.message).toMatch(
      /refused the sign-in even after renewing it: run "overlay-daemon connect youtube" again/,
    );
    expect(youtube.inserted).toHaveLength(0);
  });

  it("names Google's reason for a refusal in words, secrets never in them", async () => {
    const tokens = await signedIn();
    live();
    const s = sender();
    const cases: [number, string, RegExp][] = [
      [403, 'forbidden', /may not write in this live chat \(forbidden\)/],
      [403, 'liveChatDisabled', /live chat of this YouTube stream is turned off \(liveChatDisabled\)/],
      [
        403,
        'quotaExceeded',
        /quota of the Gatekeeper's Google client is used up \(quotaExceeded\).*midnight Pacific/,
      ],
      [403, 'insufficientPermissions', /does not allow writing in chat \(insufficientPermissions\)/],
      [400, 'messageTextInvalid', /refused the text of the message \(messageTextInvalid\)/],
    ];
    for (const [status, reason, words] of cases) {
      youtube.failNextInsert(status, reason);
      const err = await sendRefusal(s.send('hi', 'event'));
      expect(err.status).toBe(status);
      expect(err.message).toMatch(words);
      expect(err.message).not.toContain(tokens.accessToken);
      expect(err.retryAfterMs).toBeUndefined();
    }
    youtube.endStream();
    const ended = await sendRefusal(s.send('hi', 'event'));
    expect(ended.status).toBe(403);
    expect(ended.message).toBe('the YouTube live chat has ended (liveChatEnded)');
    expect(youtube.inserted).toHaveLength(0);
  });

  it('passes on the wait a rate limit asks for', async () => {
    await signedIn();
    live();
    const s = sender();
    youtube.failNextInsert(429, 'rateLimitExceeded', { 'Retry-After': '7' });
    const limited = await sendRefusal(s.send('hi', 'event'));
    expect(limited.status).toBe(429);
    expect(limited.retryAfterMs).toBe(7000);
    expect(limited.message).toMatch(/send less often \(rateLimitExceeded\)/);
    // YouTube's chat says it with a 403 and no Retry-After: a wait all the same.
    youtube.failNextInsert(403, 'rateLimitExceeded');
    const again = await sendRefusal(s.send('hi', 'event'));
    expect(again.status).toBe(403);
    expect(again.retryAfterMs).toBeGreaterThan(0);
    // And then it goes through.
    await s.send('hi', 'event');
    expect(youtube.inserted).toHaveLength(1);
  });
});
