// The `chat` action in the running daemon: a fake sender registered through the actions part gets what a
// rule says, TikTok and control-API events are skipped in words in the action log, a sender that throws
// does not stop the rule's other action, the daemon's own chat coming back is not an event, and "test
// this rule" shows the text without sending it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ActionLogEntry, RuleTestResult } from '../../shared/protocol/index.js';
import { api, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeChatSender, fakeChatSender } from '../support/fakes/chat-sender.js';

let daemon: TestDaemon;
let twitch: FakeChatSender;
let kick: FakeChatSender;
/** A local receiver for the rule's webhook: the paths it was called on. */
let hooks: string[];
let receiver: Server;
let hookUrl: string;

beforeAll(async () => {
  hooks = [];
  receiver = createServer((req, res) => {
    hooks.push(req.url ?? '');
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  daemon = await startTestDaemon();
  twitch = fakeChatSender('twitch', 'TheStreamer');
  kick = fakeChatSender('kick', 'TheStreamer');
  daemon.chatSenders.register(twitch);
  daemon.chatSenders.register(kick);
});
afterAll(async () => {
  await daemon?.stop();
  receiver?.close();
});
beforeEach(() => {
  twitch.sent.length = 0;
  kick.sent.length = 0;
  hooks.length = 0;
  twitch.answer = async (_text, n) => ({ messageId: `t${n}` });
  kick.answer = async (_text, n) => ({ messageId: `k${n}` });
});

async function saveRule(actions: unknown[], trigger = 'chat'): Promise<void> {
  const res = await api(daemon, 'PUT', '/api/rules', [{ id: 'greet', name: 'Greet', trigger, actions }]);
  expect(res.status).toBe(200);
}

function chat(platform: string | undefined, nickname: string, comment: string) {
  return {
    type: 'chat',
    ...(platform ? { platform } : {}),
    user: { uniqueId: nickname.toLowerCase(), nickname },
    data: { comment },
  };
}

async function post(event: unknown): Promise<{ firedRules: string[] }> {
  const res = await api(daemon, 'POST', '/api/events', event);
  expect(res.status).toBe(202);
  return (await res.json()) as { firedRules: string[] };
}

async function log(): Promise<ActionLogEntry[]> {
  return (await (await api(daemon, 'GET', '/api/actions/log')).json()) as ActionLogEntry[];
}

/** Waits for the action log to have `count` more chat entries than `before`, and returns the new ones. */
async function newChatEntries(before: number, count = 1): Promise<ActionLogEntry[]> {
  let entries: ActionLogEntry[] = [];
  await waitFor(async () => {
    entries = (await log()).filter((e) => e.kind === 'chat').slice(before);
    return entries.length >= count;
  });
  return entries;
}

async function chatEntries(): Promise<number> {
  return (await log()).filter((e) => e.kind === 'chat').length;
}

describe('chat action', () => {
  it("answers in the event's chat with the text filled in, and logs it as done", async () => {
    await saveRule([{ kind: 'chat', text: 'Hi {user.nickname}!\nWelcome.' }]);
    const before = await chatEntries();
    expect((await post(chat('twitch', 'Bob', 'hello'))).firedRules).toEqual(['greet']);
    const [entry] = await newChatEntries(before);
    expect(twitch.sent).toEqual([{ text: 'Hi Bob! Welcome.', destination: 'event' }]);
    expect(kick.sent).toEqual([]);
    expect(entry).toMatchObject({ ruleId: 'greet', kind: 'chat', ok: true });
    expect(entry?.skipped).toBeUndefined();
  });

  it('skips TikTok and control-API events in words, as done rather than failed', async () => {
    await saveRule([{ kind: 'chat', text: 'Hi {user.nickname}' }]);
    const before = await chatEntries();
    await post(chat('tiktok', 'Tia', 'hello'));
    await post(chat(undefined, 'Api', 'hello'));
    const entries = await newChatEntries(before, 2);
    expect(entries.map((e) => ({ ok: e.ok, skipped: e.skipped }))).toEqual([
      { ok: true, skipped: 'TikTok does not allow sending chat' },
      { ok: true, skipped: 'this event has no chat to answer' },
    ]);
    expect(twitch.sent).toEqual([]);
    expect(kick.sent).toEqual([]);
  });

  it("a sender that throws fails only its action: the rule's other action still runs", async () => {
    kick.answer = () => {
      throw new Error('the Kick sender broke');
    };
    await saveRule([
      { kind: 'chat', text: 'Thanks {user.nickname}' },
      { kind: 'webhook', url: `${hookUrl}/after-chat` },
    ]);
    const before = await chatEntries();
    await post(chat('kick', 'Kim', 'hi'));
    const [entry] = await newChatEntries(before);
    expect(entry).toMatchObject({ ok: false, error: 'Kick: the Kick sender broke' });
    await waitFor(() => hooks.includes('/after-chat'));
    // The daemon still serves.
    expect((await api(daemon, 'GET', '/api/status')).status).toBe(200);
  });

  it('does not take its own chat, come back from the platform, for an event', async () => {
    await saveRule([{ kind: 'chat', text: 'Hello {user.nickname}' }]);
    const before = await chatEntries();
    await post(chat('twitch', 'Ann', 'hi'));
    await newChatEntries(before);
    expect(twitch.sent.map((s) => s.text)).toEqual(['Hello Ann']);
    // Twitch shows the streamer's message in chat: it fires no rule (else the daemon would answer itself).
    const echo = await post(chat('twitch', 'TheStreamer', 'Hello Ann'));
    expect(echo.firedRules).toEqual([]);
    const events = (await (await api(daemon, 'GET', '/api/events?limit=5')).json()) as {
      events: { event: { user: { nickname: string } } }[];
    };
    expect(events.events.some((e) => e.event.user.nickname === 'TheStreamer')).toBe(false);
    // The same words from the streamer again are chat like any other.
    expect((await post(chat('twitch', 'TheStreamer', 'Hello Ann'))).firedRules).toEqual(['greet']);
  });

  it('refuses a rule whose chat action has no text or names another platform, with 400 naming the field', async () => {
    for (const [action, field] of [
      [{ kind: 'chat', text: '  ' }, '0.actions.0.text'],
      [{ kind: 'chat' }, '0.actions.0.text'],
      [{ kind: 'chat', text: 'hi', platform: 'tiktok' }, '0.actions.0.platform'],
    ] as const) {
      const res = await api(daemon, 'PUT', '/api/rules', [{ id: 'bad', trigger: 'chat', actions: [action] }]);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message.startsWith(`${field}:`)).toBe(true);
    }
  });
});

describe('test this rule', () => {
  it('shows the text a chat action would send, cut, and sends none', async () => {
    const res = await api(daemon, 'POST', '/api/rules/test', {
      rule: {
        id: 'draft',
        trigger: 'chat',
        conditions: { platform: 'twitch' },
        actions: [
          { kind: 'chat', text: '{user.nickname}: {data.comment}' },
          { kind: 'chat', text: 'y'.repeat(600), platform: 'all' },
        ],
      },
    });
    expect(res.status).toBe(200);
    const result = (await res.json()) as RuleTestResult;
    expect(result.chat).toEqual([
      { action: 0, platform: 'twitch', text: 'Test viewer: Hello from the test' },
      { action: 1, platform: 'twitch', text: `${'y'.repeat(499)}…` },
      { action: 1, platform: 'kick', text: `${'y'.repeat(499)}…` },
    ]);
    expect(result.outcomes.map((o) => o.skipped)).toEqual([
      'a rule test sends no chat',
      'a rule test sends no chat',
    ]);
    expect(twitch.sent).toEqual([]);
    expect(kick.sent).toEqual([]);
  });
});
