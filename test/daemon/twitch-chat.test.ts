// Twitch chat read anonymously through @twurple/chat against a local server speaking Twitch's IRC over
// WebSocket (tags, PRIVMSG, USERNOTICE): what each message becomes, de-duplication, a cheer never
// counted twice, malformed lines dropped, and a dropped connection that comes back by itself.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChatState, chatClientTarget, TwitchChat } from '../../daemon/src/sources/twitch/chat.js';
import type { EventSubCoverage } from '../../daemon/src/sources/twitch/chat-map.js';
import type { StreamEvent } from '../../shared/protocol/index.js';
import { type FakeTwitchIrc, startFakeTwitchIrc } from '../support/fakes/twitch-irc.js';
import { waitFor } from '../support/wait.js';

let irc: FakeTwitchIrc;
let chat: TwitchChat | undefined;
let events: StreamEvent[];
let states: { state: ChatState; detail?: string }[];
let logs: string[];
let coverage: EventSubCoverage;

beforeEach(async () => {
  irc = await startFakeTwitchIrc();
  events = [];
  states = [];
  logs = [];
  coverage = { cheers: false, subscriptions: false, raids: false };
});

afterEach(async () => {
  await chat?.stop();
  chat = undefined;
  await irc.close();
});

async function join(channel = 'streamer'): Promise<TwitchChat> {
  chat = new TwitchChat({
    channel,
    ircUrl: irc.url,
    onEvent: (event) => events.push(event),
    onState: (state, detail) => states.push({ state, ...(detail ? { detail } : {}) }),
    log: (line) => logs.push(line),
    coverage: () => coverage,
  });
  chat.start();
  await irc.waitForJoin(channel);
  await waitFor(() => states.at(-1)?.state === 'connected');
  return chat;
}

describe('Twitch chat', () => {
  it('reaches a server on any port through the host name the library takes', () => {
    expect(chatClientTarget('wss://irc-ws.chat.twitch.tv:443')).toEqual({
      hostName: 'irc-ws.chat.twitch.tv',
      ssl: true,
    });
    expect(chatClientTarget('ws://127.0.0.1:4567')).toEqual({ hostName: '127.0.0.1:4567/', ssl: false });
  });

  it('joins anonymously and turns chat, cheers, subs and raids into events of platform twitch', async () => {
    await join();
    // An anonymous login: no PASS with a token, a justinfan nick.
    expect(irc.received.some((l) => /^NICK justinfan\d+$/.test(l))).toBe(true);
    expect(irc.received.some((l) => l.startsWith('PASS oauth:'))).toBe(false);
    irc.privmsg(
      'streamer',
      { login: 'viewer1', displayName: 'Viewer One' },
      'hello; with\\escapes and spaces',
    );
    irc.privmsg('streamer', { login: 'cheerer' }, 'Cheer100 take my bits', { bits: '100' });
    irc.usernotice(
      'streamer',
      'resub',
      { login: 'loyal', displayName: 'Loyal' },
      { 'msg-param-cumulative-months': '7', 'msg-param-sub-plan': '2000' },
      'seven months!',
    );
    irc.usernotice('streamer', 'sub', { login: 'newbie' }, { 'msg-param-sub-plan': 'Prime' });
    irc.usernotice(
      'streamer',
      'subgift',
      { login: 'generous' },
      {
        'msg-param-recipient-user-name': 'lucky',
        'msg-param-recipient-display-name': 'Lucky',
        'msg-param-sub-plan': '1000',
      },
    );
    irc.usernotice(
      'streamer',
      'raid',
      { login: 'raider' },
      { 'msg-param-viewerCount': '42', 'msg-param-displayName': 'Raider' },
    );
    await waitFor(() => events.length === 6);
    expect(events).toEqual([
      {
        type: 'chat',
        platform: 'twitch',
        user: { uniqueId: 'viewer1', nickname: 'Viewer One' },
        data: { comment: 'hello; with\\escapes and spaces' },
      },
      {
        type: 'gift',
        platform: 'twitch',
        user: { uniqueId: 'cheerer', nickname: 'cheerer' },
        data: { giftName: 'Bits', repeatCount: 100, diamondCount: 1, comment: 'Cheer100 take my bits' },
      },
      {
        type: 'subscribe',
        platform: 'twitch',
        user: { uniqueId: 'loyal', nickname: 'Loyal' },
        data: { subMonth: 7, tier: '2000', comment: 'seven months!' },
      },
      {
        type: 'subscribe',
        platform: 'twitch',
        user: { uniqueId: 'newbie', nickname: 'newbie' },
        data: { tier: '1000' },
      },
      {
        type: 'subscribe',
        platform: 'twitch',
        user: { uniqueId: 'lucky', nickname: 'Lucky' },
        data: { gifted: true, tier: '1000' },
      },
      {
        type: 'share',
        platform: 'twitch',
        user: { uniqueId: 'raider', nickname: 'Raider' },
        data: { viewers: 42 },
      },
    ]);
  });

  it('leaves cheers, subs and raids to EventSub while it delivers them: never both', async () => {
    await join();
    coverage = { cheers: true, subscriptions: true, raids: true };
    irc.privmsg('streamer', { login: 'cheerer' }, 'Cheer50', { bits: '50' });
    irc.usernotice('streamer', 'sub', { login: 'newbie' }, { 'msg-param-sub-plan': '1000' });
    irc.usernotice('streamer', 'raid', { login: 'raider' }, { 'msg-param-viewerCount': '3' });
    irc.privmsg('streamer', { login: 'viewer' }, 'still chat');
    // Chat delivers in order: once the last line sent has arrived, the ones before it were handled.
    await waitFor(() => events.some((e) => e.type === 'chat' && e.data.comment === 'still chat'));
    expect(events.map((e) => e.type)).toEqual(['chat']);
  });

  it('delivers a message sent twice once, and drops malformed ones with a reason', async () => {
    await join();
    const id = irc.privmsg('streamer', { login: 'viewer' }, 'once');
    irc.privmsg('streamer', { login: 'viewer' }, 'once', { id });
    irc.raw(':viewer!viewer@viewer.tmi.twitch.tv PRIVMSG #streamer :no tags at all');
    irc.raw('@id=;display-name=x :x!x@x.tmi.twitch.tv PRIVMSG #streamer :empty id');
    irc.raw('this is not IRC');
    irc.privmsg('streamer', { login: 'viewer' }, 'after the junk');
    await waitFor(() => events.some((e) => e.type === 'chat' && e.data.comment === 'after the junk'));
    expect(events.map((e) => (e.type === 'chat' ? e.data.comment : e.type))).toEqual([
      'once',
      'after the junk',
    ]);
    expect(logs.filter((l) => /chat message dropped: tag id/.test(l))).toHaveLength(2);
  });

  it('comes back by itself when the connection drops, and says so meanwhile', async () => {
    await join();
    irc.dropClients();
    await waitFor(() => states.some((s) => s.state === 'reconnecting'));
    await waitFor(() => states.at(-1)?.state === 'connected', 15_000);
    irc.privmsg('streamer', { login: 'viewer' }, 'welcome back');
    await waitFor(() => events.length === 1);
    expect(irc.joined).toEqual(['streamer', 'streamer']);
  }, 20_000);

  it('ignores other channels', async () => {
    await join('streamer');
    irc.raw('@id=abc;display-name=x :x!x@x.tmi.twitch.tv PRIVMSG #elsewhere :not for us');
    irc.privmsg('streamer', { login: 'viewer' }, 'for us');
    await waitFor(() => events.length === 1);
    expect(events[0]!.type === 'chat' && events[0]!.data.comment).toBe('for us');
  });
});
