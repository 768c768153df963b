import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { type FakeChatSender, fakeChatSender, refusal } from '../../../test/support/fakes/chat-sender.js';
import { ChatEcho } from './echo.js';
import { ChatSendQueue } from './send-queue.js';
import type { ChatPlatform } from './types.js';

/** Lets the senders' answers (promises) settle. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(platform: ChatPlatform = 'twitch') {
  const clock = new FakeTimers();
  const lines: string[] = [];
  const echo = new ChatEcho(() => clock.now());
  const queue = new ChatSendQueue({ timers: clock, log: (line) => lines.push(line), echo });
  const sender = fakeChatSender(platform);
  /** Every send's outcome: `sent` or the error's message. */
  const outcomes: string[] = [];
  const send = (text: string, to: FakeChatSender = sender) =>
    queue.send(to, text, 'event').then(
      () => outcomes.push(`sent ${text}`),
      (err: Error) => outcomes.push(`${text}: ${err.message}`),
    );
  return { clock, lines, queue, sender, outcomes, send, echo };
}

const texts = (sender: FakeChatSender) => sender.sent.map((s) => s.text);

describe('chat send queue', () => {
  it('sends 20 Twitch messages within 30 s and holds the rest until the window moves on', async () => {
    const { clock, sender, send, queue } = setup('twitch');
    for (let i = 1; i <= 20; i++) void send(`m${i}`);
    await settle();
    for (let i = 21; i <= 25; i++) void send(`m${i}`);
    await settle();
    expect(sender.sent).toHaveLength(20);
    expect(queue.waiting('twitch')).toBe(5);
    clock.advance(29_999);
    await settle();
    expect(sender.sent).toHaveLength(20);
    clock.advance(1);
    for (let i = 0; i < 5; i++) await settle();
    expect(texts(sender)).toEqual(Array.from({ length: 25 }, (_, i) => `m${i + 1}`));
  });

  it('a burst of 60 sends what the budget allows (20 now, 20 when the window moves on) and drops only the rest', async () => {
    const { clock, sender, send, outcomes, lines } = setup('twitch');
    // Twitch takes 150 ms to answer each message; 60 messages come within a second.
    sender.answer = (_text, n) =>
      new Promise((resolve) => clock.setTimeout(() => resolve({ messageId: `m${n}` }), 150));
    for (let i = 1; i <= 60; i++) {
      void send(`hello ${i}`);
      await settle();
      clock.advance(16);
      await settle();
    }
    for (let ms = 0; ms < 61_000; ms += 50) {
      clock.advance(50);
      await settle();
    }
    const sent = outcomes.filter((o) => o.startsWith('sent '));
    expect(sent).toHaveLength(40);
    // In the order they came: the 20 the window allows at once, then of the 40 behind them the newest 20
    // (decisions-3 §12: the oldest waiting are dropped), when the window moves on.
    const numbers = (from: number) => Array.from({ length: 20 }, (_, i) => `hello ${from + i}`);
    expect(texts(sender)).toEqual([...numbers(1), ...numbers(41)]);
    const dropped = outcomes.filter((o) => o.includes('dropped'));
    expect(dropped).toHaveLength(20);
    expect(dropped[0]).toBe(
      'hello 21: dropped: more than 20 Twitch messages were waiting beyond its send limit (20 per 30 s)',
    );
    expect(lines.filter((l) => l.includes('Twitch: a message was dropped unsent'))).toHaveLength(20);
  });

  it('keeps Kick to 20 per 30 s as well', async () => {
    const { sender, send } = setup('kick');
    for (let i = 1; i <= 20; i++) void send(`k${i}`);
    await settle();
    void send('k21');
    await settle();
    expect(sender.sent).toHaveLength(20);
  });

  it('sends one YouTube message every 2 s, in order', async () => {
    const { clock, sender, send } = setup('youtube');
    for (const t of ['a', 'b', 'c']) void send(t);
    await settle();
    expect(texts(sender)).toEqual(['a']);
    clock.advance(1_999);
    await settle();
    expect(texts(sender)).toEqual(['a']);
    clock.advance(1);
    await settle();
    expect(texts(sender)).toEqual(['a', 'b']);
    clock.advance(2_000);
    await settle();
    expect(texts(sender)).toEqual(['a', 'b', 'c']);
  });

  it('holds at most 20 waiting per platform: the oldest is dropped and logged', async () => {
    const { sender, send, outcomes, lines, queue } = setup('youtube');
    void send('first'); // sent at once
    for (let i = 1; i <= 21; i++) void send(`w${i}`);
    await settle();
    expect(texts(sender)).toEqual(['first']);
    expect(queue.waiting('youtube')).toBe(20);
    expect(outcomes).toContain(
      'w1: dropped: more than 20 YouTube messages were waiting beyond its send limit (1 per 2 s)',
    );
    expect(lines.some((l) => l.includes('YouTube: a message was dropped unsent'))).toBe(true);
  });

  it('drops a message that waited more than 60 s, and says so when it does', async () => {
    const { clock, sender, send, outcomes, lines } = setup('youtube');
    // YouTube asks for two minutes' quiet: the waiting messages cannot go out within a minute.
    sender.answer = async () => {
      throw refusal('YouTube asked to wait', 429, 120_000);
    };
    void send('stuck');
    void send('also stuck');
    await settle();
    clock.advance(60_000);
    await settle();
    expect(outcomes).toEqual([]);
    clock.advance(1);
    await settle();
    expect(outcomes).toEqual([
      "stuck: dropped: it waited more than 60 s for YouTube's send limit",
      "also stuck: dropped: it waited more than 60 s for YouTube's send limit",
    ]);
    expect(lines.filter((l) => l.includes('waited more than 60 s'))).toHaveLength(2);
    expect(sender.sent).toHaveLength(1);
  });

  it("pauses the platform's queue for a 429's wait, then sends that message first", async () => {
    const { clock, sender, send, outcomes, lines } = setup('twitch');
    let calls = 0;
    sender.answer = async () => {
      calls++;
      if (calls === 1) throw refusal('Twitch: too many messages', 429, 5_000);
      return { messageId: `id${calls}` };
    };
    void send('one');
    void send('two');
    await settle();
    expect(texts(sender)).toEqual(['one']);
    clock.advance(4_999);
    await settle();
    expect(texts(sender)).toEqual(['one']);
    clock.advance(1);
    for (let i = 0; i < 4; i++) await settle();
    expect(texts(sender)).toEqual(['one', 'one', 'two']);
    expect(outcomes).toEqual(['sent one', 'sent two']);
    expect(lines).toContain('[chat] Twitch asked to wait 5 s before sending more');
  });

  it("fails a send the platform refused with the platform's words, and sends the next", async () => {
    const { sender, send, outcomes } = setup('kick');
    let calls = 0;
    sender.answer = async () => {
      calls++;
      if (calls === 1) throw refusal('Kick refused the message: the channel is in followers-only mode', 403);
      return {};
    };
    void send('a');
    void send('b');
    for (let i = 0; i < 3; i++) await settle();
    expect(outcomes).toEqual([
      'a: Kick refused the message: the channel is in followers-only mode',
      'sent b',
    ]);
  });

  it('survives a sender that throws instead of rejecting', async () => {
    const { sender, send, outcomes } = setup('twitch');
    sender.send = () => {
      throw new Error('the sender broke');
    };
    await send('x');
    expect(outcomes).toEqual(['x: the sender broke']);
  });

  it('remembers what it sent, so the echo is recognised', async () => {
    const { send, echo } = setup('kick');
    await send('hello chat');
    const back = {
      type: 'chat' as const,
      platform: 'kick' as const,
      user: { uniqueId: 'someone', nickname: 'Someone' },
      data: { comment: 'hello chat', messageId: 'm1' },
    };
    expect(echo.isEcho(back)).toBe(true);
  });

  it('drops the messages behind a send that hangs once they waited 60 s', async () => {
    const { clock, sender, send, outcomes } = setup('twitch');
    sender.answer = () => new Promise(() => {});
    void send('hangs');
    void send('behind');
    await settle();
    clock.advance(60_001);
    await settle();
    expect(outcomes).toEqual(["behind: dropped: it waited more than 60 s for Twitch's send limit"]);
  });

  it('drops every waiting message when it closes', async () => {
    const { send, queue, outcomes } = setup('youtube');
    void send('a');
    void send('b');
    await settle();
    queue.close();
    await settle();
    expect(outcomes).toEqual(['sent a', 'b: not sent: the daemon is stopping']);
  });
});
