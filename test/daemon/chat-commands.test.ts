// The built-in chat commands in the real daemon: a viewer's `!points` or `!top` in Twitch chat (the
// stand-in chat server, read by the daemon's Twitch source) is answered in that chat through Helix
// `POST /helix/chat/messages` (the stand-in Twitch API), with the viewer's points on Twitch and the
// session's top three; each command's cooldown and each viewer's hold back a second answer; a command
// turned off is not answered; the settings carry the commands and refuse what cannot be used.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeTwitchTokens } from '../../daemon/src/sources/twitch/auth.js';
import type { ActionLogEntry, SourceReport } from '../../shared/protocol/index.js';
import type { SettingsView } from '../../shared/settings.js';
import {
  api,
  makeDataDir,
  startTestDaemon,
  type TestDaemon,
  UNREACHABLE_PLATFORMS,
  waitFor,
} from '../support/daemon.js';
import { type FakeTwitch, startFakeTwitch, storedTokens } from '../support/fakes/twitch.js';
import { type FakeTwitchIrc, startFakeTwitchIrc } from '../support/fakes/twitch-irc.js';

let irc: FakeTwitchIrc;
let twitch: FakeTwitch;
let dataDir: string;
let daemon: TestDaemon;

beforeEach(async () => {
  irc = await startFakeTwitchIrc();
  // What the daemon sends appears in the channel's chat, as on Twitch.
  twitch = await startFakeTwitch({ chat: irc });
  // Signed in to Twitch as the broadcaster, with chat sending (what `connect twitch` leaves behind).
  dataDir = await makeDataDir();
  await writeFile(join(dataDir, 'rules.json'), '[]\n');
  await writeTwitchTokens(dataDir, storedTokens(twitch.issueTokens()));
  daemon = await startTestDaemon({
    dataDir,
    platformUrls: {
      ...UNREACHABLE_PLATFORMS,
      twitchIrc: irc.url,
      twitchEventSub: twitch.urls.eventsub,
      twitchApi: twitch.urls.api,
      twitchAuth: twitch.urls.auth,
    },
  });
});

afterEach(async () => {
  await daemon.stop();
  await Promise.all([irc.close(), twitch.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

async function settings(): Promise<SettingsView> {
  return (await (await api(daemon, 'GET', '/api/settings')).json()) as SettingsView;
}

/** Saves the settings with `commands` changed, 10 points per chat message and the streamer's channel. */
async function configure(commands: Record<string, unknown> = {}): Promise<void> {
  const current = await settings();
  const res = await api(daemon, 'PUT', '/api/settings', {
    ...current,
    twitch: { clientId: twitch.clientId },
    points: { ...current.points, perChat: 10 },
    sources: [{ platform: 'twitch', channel: twitch.user.login }],
    commands: {
      points: { ...current.commands.points, enabled: true, ...(commands.points as object) },
      top: { ...current.commands.top, enabled: true, ...(commands.top as object) },
    },
  });
  expect(res.status).toBe(200);
  // Connected and signed in: nothing left to say about the source.
  await waitFor(async () => {
    const body = (await (await fetch(`${daemon.url}/status`)).json()) as { sources?: SourceReport[] };
    const source = body.sources?.find((s) => s.platform === 'twitch');
    return source?.state === 'connected' && source.detail === undefined;
  });
}

const say = (login: string, text: string, displayName?: string) =>
  irc.privmsg(twitch.user.login, { login, ...(displayName ? { displayName } : {}) }, text);

/** What the daemon said in the streamer's chat, in order. */
const sent = () => twitch.chatMessages.filter((m) => m.isSent).map((m) => m.message);

describe('built-in chat commands', () => {
  it("answer !points in Twitch chat with the viewer's points on Twitch, as the streamer", async () => {
    await configure();
    // Points on Kick are another platform's: not in the Twitch answer.
    const kick = await api(daemon, 'POST', '/api/events', {
      type: 'chat',
      platform: 'kick',
      user: { uniqueId: 'viewer1', nickname: 'viewer1' },
      data: { comment: 'hi from kick' },
    });
    expect(kick.status).toBe(202);
    say('viewer1', 'hello', 'Viewer One');
    say('viewer1', '!points', 'Viewer One');
    await waitFor(() => sent().length === 1);
    expect(twitch.chatMessages[0]).toMatchObject({
      broadcasterId: twitch.user.id,
      senderId: twitch.user.id,
      // "hello" and "!points" itself: 10 points each.
      message: 'Viewer One has 20 points',
    });
    const log = (await (await api(daemon, 'GET', '/api/actions/log')).json()) as ActionLogEntry[];
    expect(log.find((e) => e.kind === 'chat')).toMatchObject({ ruleId: 'command:points', ok: true });
  });

  it('answer !top with the first three of the session by points', async () => {
    await configure();
    say('ann', 'one');
    say('ann', 'two');
    say('ann', 'three', 'Ann');
    say('bob', 'one');
    say('bob', 'two', 'Bob');
    say('cy', 'one', 'Cy');
    say('dee', '!TOP', 'Dee');
    await waitFor(() => sent().length === 1);
    expect(sent()).toEqual(['Top: Ann (30), Bob (20), Cy (10)']);
  });

  it('answer a command once within its cooldown and once per viewer within theirs; a command turned off never', async () => {
    await configure({ top: { cooldownMs: 0, userCooldownMs: 0 } });
    say('ann', '!points', 'Ann');
    await waitFor(() => sent().length === 1);
    // Within the command's cooldown (10 s): neither Ann again nor Bob gets an answer.
    say('ann', '!points', 'Ann');
    say('bob', '!points', 'Bob');
    // `!top` answers at once: every message before it was handled by the time its answer is sent.
    say('cy', '!top', 'Cy');
    await waitFor(() => sent().length === 2);
    expect(sent()).toEqual(['Ann has 10 points', 'Top: Ann (20), Bob (10), Cy (10)']);

    // Turned off, `!points` is not answered.
    await configure({ points: { enabled: false, cooldownMs: 0, userCooldownMs: 0 } });
    say('dee', '!points', 'Dee');
    say('dee', '!top', 'Dee');
    await waitFor(() => sent().length === 3);
    expect(sent().at(-1)).toMatch(/^Top: /);
    expect(sent()).toHaveLength(3);
  });

  it('answer a test event’s !points in the receipt only: a test posts nothing to the real chat', async () => {
    await configure();
    const res = await api(daemon, 'POST', '/api/events?test=true', {
      type: 'chat',
      platform: 'twitch',
      user: { uniqueId: 'test_viewer', nickname: 'Test Viewer' },
      data: { comment: '!points' },
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      accepted: true,
      firedRules: [],
      chatAnswers: [{ command: '!points', platform: 'twitch', text: 'Test Viewer has 0 points' }],
    });
    // A real viewer's !points afterwards is answered in the chat, and only that one is.
    say('viewer1', '!points', 'Viewer One');
    await waitFor(() => sent().length === 1);
    expect(sent()).toEqual(['Viewer One has 10 points']);
    const log = (await (await api(daemon, 'GET', '/api/actions/log')).json()) as ActionLogEntry[];
    expect(log.filter((e) => e.kind === 'chat')).toHaveLength(1);
  });

  it('keep a viewer waiting for their own cooldown after the command’s has passed', async () => {
    await configure({ points: { cooldownMs: 0 }, top: { cooldownMs: 0, userCooldownMs: 0 } });
    say('ann', '!points', 'Ann');
    await waitFor(() => sent().length === 1);
    say('ann', '!points', 'Ann');
    say('bob', '!points', 'Bob');
    await waitFor(() => sent().length === 2);
    say('cy', '!top', 'Cy');
    await waitFor(() => sent().length === 3);
    expect(sent()).toEqual(['Ann has 10 points', 'Bob has 10 points', 'Top: Ann (20), Bob (10), Cy (10)']);
  });
});

describe('the commands settings', () => {
  it('are answered with their defaults, kept as saved, and refused with the field named', async () => {
    const initial = await settings();
    expect(initial.commands).toEqual({
      points: {
        enabled: true,
        trigger: '!points',
        text: '{user.nickname} has {points} points',
        cooldownMs: 10_000,
        userCooldownMs: 30_000,
      },
      top: {
        enabled: true,
        trigger: '!top',
        text: 'Top: {top}',
        cooldownMs: 10_000,
        userCooldownMs: 30_000,
      },
    });
    const changed = {
      ...initial,
      commands: { ...initial.commands, top: { ...initial.commands.top, enabled: true, trigger: '!best' } },
    };
    expect((await api(daemon, 'PUT', '/api/settings', changed)).status).toBe(200);
    expect((await settings()).commands.top).toMatchObject({ enabled: true, trigger: '!best' });

    for (const [top, field] of [
      [{ trigger: '' }, 'commands.top.trigger'],
      [{ trigger: '!two words' }, 'commands.top.trigger'],
      [{ trigger: '!POINTS' }, 'commands.top.trigger'],
      [{ text: ' ' }, 'commands.top.text'],
      [{ cooldownMs: -1 }, 'commands.top.cooldownMs'],
      [{ userCooldownMs: 2.5 }, 'commands.top.userCooldownMs'],
    ] as const) {
      const res = await api(daemon, 'PUT', '/api/settings', {
        ...changed,
        commands: { ...changed.commands, top: { ...changed.commands.top, ...top } },
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message.startsWith(`${field}:`)).toBe(true);
    }
    expect((await settings()).commands.top.trigger).toBe('!best');
  });
});
