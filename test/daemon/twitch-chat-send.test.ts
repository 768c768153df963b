// Chat sent as the signed-in Twitch user, against the Helix and sign-in stand-ins: to the watched channel or
// the user's own, the message coming back in chat; a sign-in made before chat sending is not tried and says
// so (and /status and the Sources view say it too); Twitch's refusals (401, 403, 429, a dropped message) in
// words.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLATFORM_URLS } from '../../daemon/src/sources/platform-urls.js';
import { writeTwitchTokens } from '../../daemon/src/sources/twitch/auth.js';
import { TwitchChat } from '../../daemon/src/sources/twitch/chat.js';
import { createTwitchChatSender, type TwitchChatSender } from '../../daemon/src/sources/twitch/chat-send.js';
import { TwitchSignInService } from '../../daemon/src/sources/twitch/sign-in.js';
import { TwitchSource } from '../../daemon/src/sources/twitch/source.js';
import { FileWatcher } from '../../daemon/src/store/file-watcher.js';
import { systemTimers } from '../../daemon/src/timers.js';
import type { StreamEvent } from '../../shared/protocol/index.js';
import { sendRefusal } from '../support/chat-refusal.js';
import { type FakeTwitch, startFakeTwitch, storedTokens } from '../support/fakes/twitch.js';
import { type FakeTwitchIrc, startFakeTwitchIrc } from '../support/fakes/twitch-irc.js';
import { waitFor } from '../support/wait.js';

const OTHER = { id: '3003', login: 'otherchannel', displayName: 'OtherChannel' };
const RENEW =
  'sign in to Twitch again in Sources: this sign-in was made before chat sending (user:write:chat)';

let irc: FakeTwitchIrc;
let twitch: FakeTwitch;
let dataDir: string;
let sender: TwitchChatSender | undefined;
let files: FileWatcher;
let watched: string | undefined;

beforeEach(async () => {
  irc = await startFakeTwitchIrc();
  twitch = await startFakeTwitch({ users: [OTHER], chat: irc });
  dataDir = await mkdtemp(join(tmpdir(), 'overlay-twitch-send-'));
  watched = undefined;
  files = new FileWatcher({ settleMs: 20 });
});

afterEach(async () => {
  sender?.close();
  sender = undefined;
  await files.close();
  await Promise.all([twitch.close(), irc.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

async function signIn(scopes?: string[]) {
  const token = twitch.issueTokens(scopes);
  await writeTwitchTokens(dataDir, storedTokens(token));
  return token;
}

/** `follow`: twitch.json followed through a file watcher, as the daemon does; else only `reload()` reads it. */
async function start(follow = false): Promise<TwitchChatSender> {
  sender = createTwitchChatSender({
    apiUrl: twitch.urls.api,
    authUrl: twitch.urls.auth,
    dataDir,
    eventChannel: () => watched,
    ...(follow ? { files } : {}),
  });
  await sender.ready;
  return sender;
}

const chatRequests = () => twitch.requests.filter((r) => r.path === '/helix/chat/messages');

describe('sending Twitch chat', () => {
  it('sends as the signed-in user to its own channel, and the message comes back in chat', async () => {
    const token = await signIn();
    const s = await start();
    expect(s.platform).toBe('twitch');
    expect(s.unavailable()).toBeUndefined();
    expect(s.senderName()).toBe('streamer');

    const seen: StreamEvent[] = [];
    const chat = new TwitchChat({
      channel: 'streamer',
      ircUrl: irc.url,
      onEvent: (event) => seen.push(event),
      onState: () => {},
      log: () => {},
      coverage: () => ({ cheers: false, subscriptions: false, raids: false }),
    });
    chat.start();
    try {
      await irc.waitForJoin('streamer');
      const sent = await s.send('Thanks for the follow!', 'own');
      expect(twitch.chatMessages).toEqual([
        {
          broadcasterId: '1001',
          senderId: '1001',
          message: 'Thanks for the follow!',
          messageId: sent.messageId,
          isSent: true,
        },
      ]);
      expect(sent.messageId).toMatch(/\S/);
      const request = chatRequests()[0];
      expect(request?.authorization).toBe(`Bearer ${token.accessToken}`);
      expect(request?.clientId).toBe(twitch.clientId);
      expect(request?.body).toEqual({
        broadcaster_id: '1001',
        sender_id: '1001',
        message: 'Thanks for the follow!',
      });
      await waitFor(() => seen.length === 1);
      expect(seen[0]).toMatchObject({
        type: 'chat',
        platform: 'twitch',
        user: { uniqueId: 'streamer' },
        data: { comment: 'Thanks for the follow!' },
      });
    } finally {
      await chat.stop();
    }
  });

  it('sends `event` messages to the channel the Twitch source watches', async () => {
    await signIn();
    watched = 'OtherChannel';
    const s = await start();
    await s.send('hello there', 'event');
    await s.send('and again', 'event');
    await s.send('at home', 'own');
    expect(twitch.chatMessages.map((m) => [m.broadcasterId, m.senderId, m.message])).toEqual([
      ['3003', '1001', 'hello there'],
      ['3003', '1001', 'and again'],
      ['1001', '1001', 'at home'],
    ]);
    // The channel's id was looked up once.
    expect(twitch.requests.filter((r) => r.path === '/helix/users')).toHaveLength(1);
  });

  it('does not try with a sign-in made before chat sending, and says to sign in again', async () => {
    await signIn(['moderator:read:followers', 'channel:read:subscriptions', 'bits:read']);
    const s = await start();
    expect(s.unavailable()).toBe(RENEW);
    const err = await sendRefusal(s.send('hi', 'own'));
    expect(err.message).toBe(RENEW);
    expect(chatRequests()).toEqual([]);
    // The dashboard's Twitch box says the same.
    const signInState = await new TwitchSignInService({
      authUrl: twitch.urls.auth,
      dataDir,
      clientId: () => twitch.clientId,
      log: () => {},
    }).state();
    expect(signInState).toEqual({ state: 'signed-in', login: 'streamer', renew: RENEW });

    // A new sign-in with the scope: sending works.
    await signIn();
    await s.reload();
    expect(s.unavailable()).toBeUndefined();
    await s.send('now it works', 'own');
    expect(twitch.chatMessages.map((m) => m.message)).toEqual(['now it works']);
  });

  it('a token Twitch finds without the scope (401 Missing scope): says to sign in again, and stops trying', async () => {
    const token = twitch.issueTokens(['bits:read']);
    // twitch.json claims more than the token has (an edited file, a scope removed on Twitch's side).
    await writeTwitchTokens(dataDir, storedTokens(token, { scopes: ['bits:read', 'user:write:chat'] }));
    const s = await start();
    expect(s.unavailable()).toBeUndefined();
    const err = await sendRefusal(s.send('hi', 'own'));
    expect(err.status).toBe(401);
    expect(err.message).toBe(RENEW);
    expect(s.unavailable()).toBe(RENEW);
    await sendRefusal(s.send('again', 'own'));
    expect(chatRequests()).toHaveLength(1);
  });

  it('/status: the Twitch source of a sign-in made before chat sending says it must be renewed', async () => {
    await signIn(['moderator:read:followers', 'channel:read:subscriptions', 'bits:read']);
    const source = new TwitchSource('streamer', {
      emit: () => {},
      log: () => {},
      urls: {
        ...DEFAULT_PLATFORM_URLS,
        twitchIrc: irc.url,
        twitchEventSub: twitch.urls.eventsub,
        twitchApi: twitch.urls.api,
        twitchAuth: twitch.urls.auth,
      },
      timers: systemTimers(),
      dataDir,
      twitchClientId: () => twitch.clientId,
      youtubeApiKey: () => undefined,
      streamEnded: () => {},
    });
    source.start();
    try {
      await waitFor(
        () => source.report().state === 'connected' && (source.report().detail ?? '').includes(RENEW),
      );
    } finally {
      await source.stop();
    }
  });

  it('follows twitch.json by itself: a sign-in made in the dashboard, a sign-out', async () => {
    const s = await start(true);
    expect(s.unavailable()).toMatch(/^not signed in to Twitch/);
    await signIn();
    await waitFor(() => s.unavailable() === undefined);
    expect(s.senderName()).toBe('streamer');
    await rm(join(dataDir, 'twitch.json'));
    await waitFor(() => s.unavailable() !== undefined);
    expect(s.unavailable()).toMatch(/^not signed in to Twitch/);
  });

  it('without a sign-in says to connect Twitch', async () => {
    const s = await start();
    expect(s.unavailable()).toMatch(/^not signed in to Twitch: connect Twitch in Sources/);
    expect(s.senderName()).toBeUndefined();
    await sendRefusal(s.send('hi', 'own'));
    expect(chatRequests()).toEqual([]);
  });

  it('renews an access token Twitch refused (401) and sends with the new one', async () => {
    await signIn();
    const s = await start();
    twitch.expireAccessTokens();
    await s.send('after renewal', 'own');
    expect(twitch.chatMessages.map((m) => m.message)).toEqual(['after renewal']);
    expect(twitch.requests.some((r) => r.path === '/oauth2/token')).toBe(true);
  });

  it('a revoked sign-in (401): says it ended and to sign in again', async () => {
    await signIn();
    const s = await start();
    twitch.forgetAllTokens();
    const err = await sendRefusal(s.send('hi', 'own'));
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/Twitch sign-in has ended .*sign in to Twitch again in Sources/);
    expect(s.unavailable()).toBe(err.message);
    expect(twitch.chatMessages).toEqual([]);

    // Signed in again (the same account and scopes): sending works again.
    await signIn();
    await s.reload();
    expect(s.unavailable()).toBeUndefined();
    await s.send('back again', 'own');
    expect(twitch.chatMessages.map((m) => m.message)).toEqual(['back again']);
  });

  it('a user banned from the chat (403): says Twitch does not let it write there', async () => {
    await signIn();
    watched = 'otherchannel';
    twitch.banFromChat(OTHER.id, twitch.user.id);
    const s = await start();
    const err = await sendRefusal(s.send('hi', 'event'));
    expect(err.status).toBe(403);
    expect(err.message).toMatch(/^Twitch does not let streamer write in otherchannel's chat/);
    expect(err.message).toContain('not permitted to send chat messages');
    // One ban does not make the sender unavailable: its own channel still takes messages.
    expect(s.unavailable()).toBeUndefined();
    await s.send('home', 'own');
    expect(twitch.chatMessages.map((m) => m.message)).toEqual(['home']);
  });

  it('the rate limit (429): retryAfterMs from Ratelimit-Reset', async () => {
    await signIn();
    const s = await start();
    twitch.limitNext(20);
    const err = await sendRefusal(s.send('hi', 'own'));
    expect(err.status).toBe(429);
    expect(err.retryAfterMs).toBeGreaterThan(15_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(21_000);
    expect(err.message).toMatch(/^Twitch's chat limit is used up/);
    expect(twitch.chatMessages).toEqual([]);
  });

  it('a message Twitch drops (is_sent false): the error names its drop_reason', async () => {
    await signIn();
    const s = await start();
    twitch.dropNextChat('msg_duplicate', 'This message is identical to the previous one.');
    const err = await sendRefusal(s.send('same again', 'own'));
    expect(err.message).toBe(
      'Twitch did not send the message: This message is identical to the previous one. (msg_duplicate)',
    );
    expect(twitch.chatMessages).toEqual([
      { broadcasterId: '1001', senderId: '1001', message: 'same again', messageId: '', isSent: false },
    ]);
  });

  it('never puts the token in a message', async () => {
    const token = await signIn();
    const s = await start();
    twitch.limitNext(20);
    const err = await sendRefusal(s.send('hi', 'own'));
    expect(err.message).not.toContain(token.accessToken);
  });
});
