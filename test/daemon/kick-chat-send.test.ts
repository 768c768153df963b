// Kick chat sent through the Gatekeeper's `POST /kick/chat`, against its stand-in: nothing tried without a
// licence or while Kick is not linked (the events feed knows), the Worker's refusals in words (401 with one
// licence refresh, 409, 429 with Retry-After, 502), and Kick's message id handed back.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKickChatSender } from '../../daemon/src/sources/kick/chat-send.js';
import { KickEdgeFeed } from '../../daemon/src/sources/kick/edge-events.js';
import { systemTimers } from '../../daemon/src/timers.js';
import { sendRefusal } from '../support/chat-refusal.js';
import { type FakeKickGatekeeper, startFakeKickGatekeeper } from '../support/fakes/kick-gatekeeper.js';
import { waitFor } from '../support/wait.js';

/** A licence JWT's shape (the feed reads its `sub`); the stand-in takes any. */
function jwt(sub: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'EdDSA', typ: 'JWT' })}.${part({ sub, tier: 'free' })}.c2lnbmF0dXJl`;
}

let gk: FakeKickGatekeeper;
let feed: KickEdgeFeed | undefined;
let token: string | undefined;
let fresh: string | undefined;
let refreshes: number;

const licence = {
  record: () => (token ? { token } : undefined),
  async refresh() {
    refreshes++;
    if (fresh) token = fresh;
  },
  on: () => undefined,
  off: () => undefined,
};

beforeEach(async () => {
  gk = await startFakeKickGatekeeper();
  token = jwt('member-1');
  fresh = undefined;
  refreshes = 0;
});

afterEach(async () => {
  feed?.close();
  feed = undefined;
  await gk.close();
});

/** The sender with the events feed telling it whether Kick is linked, as the daemon runs them. */
async function start(options: { feedState?: 'connected' | 'not_connected' } = {}) {
  feed = new KickEdgeFeed({
    gatekeeperUrl: gk.url,
    licence,
    seq: { get: () => undefined, set: () => {} },
    deliver: () => {},
    timers: systemTimers(),
    log: () => {},
  });
  feed.start();
  const want = options.feedState ?? 'connected';
  const linked = feed;
  await waitFor(() => linked.status().state === want);
  return createKickChatSender({ gatekeeperUrl: gk.url, licence, link: () => linked.status() });
}

const chatRequests = () => gk.requests.filter((r) => r === 'POST /kick/chat');

describe('sending Kick chat through the Gatekeeper', () => {
  it('sends the text with the licence and answers Kick’s message id', async () => {
    gk.approve('streamer');
    const sender = await start();
    expect(sender.platform).toBe('kick');
    expect(sender.unavailable()).toBeUndefined();
    expect(sender.senderName()).toBe('streamer');
    const sent = await sender.send('Thanks for the follow!', 'event');
    expect(gk.chat).toEqual([
      { content: 'Thanks for the follow!', messageId: sent.messageId, authorization: `Bearer ${token}` },
    ]);
    expect(sent.messageId).toMatch(/\S/);
    // A template's line break would be refused by Kick: it goes as a space.
    await sender.send('two\nlines', 'own');
    expect(gk.chat.at(-1)?.content).toBe('two lines');
  });

  it('without a licence: says to sign in and link Kick, and asks nothing', async () => {
    token = undefined;
    const sender = createKickChatSender({ gatekeeperUrl: gk.url, licence });
    expect(sender.unavailable()).toBe(
      'no licence: sign in (overlay-daemon login), then link Kick in Sources (overlay-daemon connect kick)',
    );
    const err = await sendRefusal(sender.send('hi', 'event'));
    expect(err.message).toBe(sender.unavailable());
    expect(chatRequests()).toEqual([]);
  });

  it('Kick not linked (as the events feed found): says to link Kick, and asks nothing', async () => {
    const sender = await start({ feedState: 'not_connected' });
    expect(sender.unavailable()).toBe(
      'Kick is not linked: link Kick in Sources (overlay-daemon connect kick)',
    );
    await sendRefusal(sender.send('hi', 'event'));
    expect(chatRequests()).toEqual([]);
    // Linked from the dashboard: the feed asks again, and sending works.
    gk.approve();
    void feed?.lookAgain();
    await waitFor(() => sender.unavailable() === undefined);
    await sender.send('now linked', 'event');
    expect(gk.chat.map((m) => m.content)).toEqual(['now linked']);
  });

  it('the Gatekeeper answering 409 (the link gone since): the words say to link Kick', async () => {
    // No feed to know better: the Gatekeeper's answer says it.
    const sender = createKickChatSender({ gatekeeperUrl: gk.url, licence });
    const err = await sendRefusal(sender.send('hi', 'event'));
    expect(err.status).toBe(409);
    expect(err.message).toBe(
      'Kick is not linked or no longer accepts the link (Kick is not connected for this member: connect Kick first (POST /kick/connect)): link Kick in Sources (overlay-daemon connect kick)',
    );
  });

  it('a licence refused (401) is refreshed once and the message sent with the fresh one', async () => {
    gk.approve();
    const sender = await start();
    fresh = jwt('member-1-renewed');
    gk.accept = (t) => t === fresh;
    await sender.send('after refresh', 'event');
    expect(refreshes).toBe(1);
    expect(gk.chat).toEqual([
      expect.objectContaining({ content: 'after refresh', authorization: `Bearer ${fresh}` }),
    ]);
  });

  it('a licence refused even after a refresh (401): says to sign in again', async () => {
    gk.approve();
    const sender = await start();
    gk.accept = () => false;
    const err = await sendRefusal(sender.send('hi', 'event'));
    expect(err.status).toBe(401);
    expect(err.message).toBe(
      'the Gatekeeper refused the licence (the licence is not valid): sign in (overlay-daemon login) again',
    );
    expect(err.message).not.toContain(token ?? '-');
    expect(gk.chat).toEqual([]);
  });

  it('Kick’s limit (429): retryAfterMs from Retry-After, 30 s when none was given', async () => {
    gk.approve();
    const sender = await start();
    gk.failNextChat({
      status: 429,
      code: 'rate_limited',
      message: 'Kick refused the message: too many chat messages; try again later',
      retryAfterS: 12,
    });
    const limited = await sendRefusal(sender.send('too fast', 'event'));
    expect(limited.status).toBe(429);
    expect(limited.retryAfterMs).toBe(12_000);
    expect(limited.message).toBe("Kick's chat limit is used up: the next message may go in 12 s");
    gk.failNextChat({ status: 429, code: 'rate_limited', message: 'too many' });
    expect((await sendRefusal(sender.send('too fast', 'event'))).retryAfterMs).toBe(30_000);
    expect(gk.chat).toEqual([]);
  });

  it('the Gatekeeper refusing otherwise (403, 502): its words, with the status', async () => {
    gk.approve();
    const sender = await start();
    gk.failNextChat({ status: 403, code: 'forbidden', message: 'This licence may not do that' });
    const forbidden = await sendRefusal(sender.send('hi', 'event'));
    expect(forbidden.status).toBe(403);
    expect(forbidden.message).toBe(
      'the Gatekeeper does not let this licence send Kick chat: This licence may not do that',
    );
    gk.failNextChat({ status: 502, code: 'upstream_error', message: 'Kick refused the message (HTTP 503)' });
    const upstream = await sendRefusal(sender.send('hi', 'event'));
    expect(upstream.status).toBe(502);
    expect(upstream.message).toBe(
      'Kick did not take the message (HTTP 502): Kick refused the message (HTTP 503)',
    );
  });

  it('the Gatekeeper out of reach: status 0 and the reason', async () => {
    const url = gk.url;
    const sender = createKickChatSender({ gatekeeperUrl: url, licence });
    await gk.close();
    gk = await startFakeKickGatekeeper();
    const err = await sendRefusal(sender.send('hi', 'event'));
    expect(err.status).toBe(0);
    expect(err.message).toMatch(/cannot reach the Gatekeeper/);
  });
});
