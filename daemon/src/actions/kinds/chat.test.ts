import { describe, expect, it } from 'vitest';
import type { Platform } from '../../../../shared/protocol/index.js';
import type { ChatTarget } from '../../../../shared/rules.js';
import { FakeTimers } from '../../../../test/support/fake-timers.js';
import { fakeActionServices, fired } from '../../../../test/support/fakes/action-services.js';
import { fakeChatSender, refusal } from '../../../../test/support/fakes/chat-sender.js';
import { ChatSendQueue } from '../../chat/send-queue.js';
import { ChatSenders } from '../../chat/senders.js';
import type { ChatPlatform } from '../../chat/types.js';
import { chat, previewChat } from './chat.js';
import { ActionSkipped, type Executed } from './types.js';

function setup(platforms: ChatPlatform[] = ['twitch', 'kick', 'youtube']) {
  const senders = new ChatSenders();
  const fakes = Object.fromEntries(platforms.map((p) => [p, fakeChatSender(p)]));
  for (const sender of Object.values(fakes)) senders.register(sender);
  const queue = new ChatSendQueue({ timers: new FakeTimers() });
  const services = fakeActionServices({ chat: { senders, queue } });
  return { senders, fakes, run: chat(services) };
}

const say = (text: string, platform: ChatTarget, from: Platform) => fired('chat', { text, platform, from });

/** The skip reason an executor gave, or undefined when it did not skip. */
function skipReason(run: () => unknown): string | undefined {
  try {
    run();
  } catch (err) {
    if (err instanceof ActionSkipped) return err.message;
    throw err;
  }
  return undefined;
}

describe('chat action', () => {
  it('answers in the chat the event came from with `same`', async () => {
    const { fakes, run } = setup();
    const executed = run(say('Thanks Bob!', 'same', 'kick')) as Executed;
    await executed.outcome;
    expect(fakes.kick?.sent).toEqual([{ text: 'Thanks Bob!', destination: 'event' }]);
    expect(fakes.twitch?.sent).toEqual([]);
  });

  it("writes in the streamer's own chat on a named platform", async () => {
    const { fakes, run } = setup();
    await (run(say('Going live on YouTube too', 'twitch', 'youtube')) as Executed).outcome;
    expect(fakes.twitch?.sent).toEqual([{ text: 'Going live on YouTube too', destination: 'own' }]);
  });

  it('writes on every platform that can send now with `all`, leaving out the others', async () => {
    const { fakes, run } = setup(['twitch', 'kick', 'youtube']);
    if (fakes.kick) fakes.kick.why = 'sign in to Kick again';
    await (run(say('Hello everyone', 'all', 'tiktok')) as Executed).outcome;
    expect(fakes.twitch?.sent.map((s) => s.text)).toEqual(['Hello everyone']);
    expect(fakes.youtube?.sent.map((s) => s.text)).toEqual(['Hello everyone']);
    expect(fakes.kick?.sent).toEqual([]);
  });

  it("cuts the text to each platform's limit", async () => {
    const { fakes, run } = setup(['twitch', 'youtube']);
    await (run(say('x'.repeat(300), 'all', 'api')) as Executed).outcome;
    expect(fakes.twitch?.sent[0]?.text).toBe('x'.repeat(300));
    expect(fakes.youtube?.sent[0]?.text).toBe(`${'x'.repeat(199)}…`);
  });

  it('skips TikTok, an event from the control API, and an empty text, in words', () => {
    const { run, fakes } = setup();
    expect(skipReason(() => run(say('hi', 'same', 'tiktok')))).toBe('TikTok does not allow sending chat');
    expect(skipReason(() => run(say('hi', 'same', 'api')))).toBe('this event has no chat to answer');
    expect(skipReason(() => run(say(' \n ', 'same', 'twitch')))).toBe('the text is empty once filled in');
    expect(fakes.twitch?.sent).toEqual([]);
  });

  it("skips a platform without a sender, or with the sender's own words when it cannot send", () => {
    const { run, fakes } = setup(['twitch']);
    expect(skipReason(() => run(say('hi', 'same', 'kick')))).toBe('sending chat to Kick is not set up');
    if (fakes.twitch) fakes.twitch.why = 'sign in to Twitch again: the sign-in predates chat sending';
    expect(skipReason(() => run(say('hi', 'twitch', 'kick')))).toBe(
      'sign in to Twitch again: the sign-in predates chat sending',
    );
    expect(skipReason(() => run(say('hi', 'all', 'kick')))).toBe(
      'no platform can send chat now: sign in to Twitch again: the sign-in predates chat sending',
    );
  });

  it('skips, saying so, when no platform is set up at all', () => {
    const services = fakeActionServices();
    expect(skipReason(() => chat(services)(say('hi', 'same', 'twitch')))).toBe(
      'sending chat to Twitch is not set up',
    );
    expect(skipReason(() => chat(services)(say('hi', 'all', 'twitch')))).toBe(
      'no platform is set up to send chat',
    );
  });

  it("fails with the platform's words when it refused, naming the platform", async () => {
    const { run, fakes } = setup(['twitch', 'kick']);
    if (fakes.twitch)
      fakes.twitch.answer = async () => {
        throw refusal('Twitch did not send the message: msg_duplicate', 200);
      };
    const executed = run(say('again', 'all', 'twitch')) as Executed;
    await expect(executed.outcome).rejects.toThrow('Twitch: Twitch did not send the message: msg_duplicate');
    expect(fakes.kick?.sent).toHaveLength(1);
  });

  it('sends nothing in a rule test, and the preview shows the text each platform would get', () => {
    const { run, senders, fakes } = setup(['youtube']);
    const action = { ...say('y'.repeat(250), 'all', 'twitch'), preview: true as const };
    expect(skipReason(() => run(action))).toBe('a rule test sends no chat');
    expect(fakes.youtube?.sent).toEqual([]);
    expect(previewChat(action, senders)).toEqual([
      { action: 0, platform: 'youtube', text: `${'y'.repeat(199)}…` },
    ]);
    expect(previewChat(say('hi {x}', 'same', 'api'), senders)).toEqual([
      { action: 0, text: 'hi {x}', skipped: 'this event has no chat to answer' },
    ]);
    expect(previewChat(say('hi', 'kick', 'api'), senders)).toEqual([
      { action: 0, platform: 'kick', text: 'hi', skipped: 'sending chat to Kick is not set up' },
    ]);
  });
});
