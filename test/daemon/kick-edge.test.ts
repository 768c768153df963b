// Kick's official events through the Gatekeeper, as the real daemon takes them from a stand-in of the
// Gatekeeper's Kick routes: events reach the pages as stream-events from kick, in order, once; a restart
// resumes after the seq kept in the journal; a gap is said in words; a refused licence is refreshed; a bad
// frame is logged and ignored; and the link itself (`connect kick` in the CLI, the control API).
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import { type LicenceRecord, writeLicence } from '../../daemon/src/licence/licence-file.js';
import { LicenceManager } from '../../daemon/src/licence/licence-manager.js';
import {
  KICK_SEQ_META_PREFIX,
  KICK_STATUS_ASKED_MIN_MS,
  KICK_STATUS_RECHECK_MS,
} from '../../daemon/src/sources/kick/edge-events.js';
import type { KickLinkState, Overlay, ServerMessage, StreamEvent } from '../../shared/protocol/index.js';
import type { KickFeedEvent } from '../../shared/protocol/kick.js';
import { killCliProcesses, spawnCli } from '../support/cli.js';
import {
  api,
  makeDataDir,
  startTestDaemon,
  subscribe,
  type TestDaemon,
  UNREACHABLE_PLATFORMS,
  waitFor,
} from '../support/daemon.js';
import { FakeTimers } from '../support/fake-timers.js';
import { type FakeKickGatekeeper, startFakeKickGatekeeper } from '../support/fakes/kick-gatekeeper.js';
import { startFakePusher } from '../support/fakes/pusher.js';
import { licenceSigner, trustSigner } from '../support/licence-signer.js';
import type { TestWsClient } from '../support/ws.js';

const signer = licenceSigner();

let gk: FakeKickGatekeeper;
let daemon: TestDaemon | undefined;
let licence: LicenceManager;
let timers: FakeTimers;
let dataDir: string;
let clients: TestWsClient[];

function token(): string {
  return signer.sign({ sub: 'member-1', tier: 'free', iss: gk.url });
}

async function writeRecord(jwt: string): Promise<void> {
  const record: LicenceRecord = {
    token: jwt,
    tier: 'free',
    validated_at: new Date().toISOString(),
    user_id: 'member-1',
    verdict: 'ok',
  };
  await writeLicence(join(dataDir, 'license.json'), record);
}

/** The real daemon on the data dir, its Kick feed at the stand-in on a fake clock. */
async function start(extra: Partial<Parameters<typeof startTestDaemon>[0]> = {}): Promise<TestDaemon> {
  licence = new LicenceManager({ dataDir, client: new GatekeeperClient(gk.url), log: () => {} });
  await licence.load();
  daemon = await startTestDaemon({
    dataDir,
    limits: licence,
    kickEvents: { licence, gatekeeperUrl: gk.url, timers, random: () => 0.5 },
    ...extra,
  });
  return daemon;
}

async function stop(): Promise<void> {
  for (const client of clients) client.close();
  clients = [];
  await daemon?.close();
  daemon = undefined;
  await licence.close();
}

beforeEach(async () => {
  gk = await startFakeKickGatekeeper();
  timers = new FakeTimers();
  dataDir = await makeDataDir();
  clients = [];
  await trustSigner(dataDir, signer);
  await writeFile(join(dataDir, 'rules.json'), '[]\n');
});

afterEach(async () => {
  killCliProcesses();
  await stop();
  await gk.close();
  await rm(dataDir, { recursive: true, force: true });
});

const chat = (n: number, messageId = `msg-${n}`, comment = `line ${n}`): KickFeedEvent => ({
  type: 'chat',
  platform: 'kick',
  user: { uniqueId: `fan${n}`, nickname: `Fan ${n}` },
  data: { comment, messageId },
});

async function overlayClient(): Promise<TestWsClient> {
  const res = await api(daemon!, 'POST', '/api/overlays', { name: 'Stage', width: 800, height: 600 });
  const overlay = (await res.json()) as Overlay;
  const client = await subscribe(daemon!, overlay.id);
  clients.push(client);
  return client;
}

/** The stream events a page got, in order. */
function streamEvents(client: TestWsClient): StreamEvent[] {
  return client.received.flatMap((m: ServerMessage) => (m.type === 'stream-event' ? [m.event] : []));
}

const comments = (events: StreamEvent[]) =>
  events.map((e) => (e.type === 'chat' ? `${e.platform}:${e.data.comment}` : e.type));

/** The kick chat lines in the journal, in order. */
function journaled(): string[] {
  return comments(daemon!.journal.events({ after: 0, limit: 1000 }).events.map((e) => e.event));
}

async function kickDetail(): Promise<string | undefined> {
  const body = (await (await api(daemon!, 'GET', '/api/sources/kick/connect')).json()) as { events: string };
  return body.events;
}

describe('Kick events through the Gatekeeper', () => {
  it('replays what is kept, then live ones: stream-events from kick, in order, once', async () => {
    gk.approve();
    await writeRecord(token());
    gk.push(chat(1));
    gk.push(chat(2));
    await start();
    await waitFor(() => gk.open().length === 1);
    expect(gk.connections[0]?.after).toBe('0');
    expect(gk.connections[0]?.authorization).toMatch(/^Bearer ey/);
    const client = await overlayClient();
    await waitFor(() => journaled().length === 2);
    gk.push(chat(3));
    gk.push(chat(4));
    await waitFor(() => streamEvents(client).length === 2);
    expect(comments(streamEvents(client))).toEqual(['kick:line 3', 'kick:line 4']);
    expect(journaled()).toEqual(['kick:line 1', 'kick:line 2', 'kick:line 3', 'kick:line 4']);
    // The seq is kept in the journal, per member.
    expect(daemon!.journal.metaValue(`${KICK_SEQ_META_PREFIX}member-1`)).toBe('4');
    expect(await kickDetail()).toBe('events: connected through the Gatekeeper');
  });

  it('after a restart on the same data dir it resumes after the remembered seq: what came meanwhile arrives once, in order', async () => {
    gk.approve();
    await writeRecord(token());
    await start();
    await waitFor(() => gk.open().length === 1);
    gk.push(chat(1));
    gk.push(chat(2));
    await waitFor(() => journaled().length === 2);
    await stop();
    // While the daemon is off, five events.
    for (let n = 3; n <= 7; n += 1) gk.push(chat(n));
    await start();
    await waitFor(() => gk.open().length === 1);
    expect(gk.open()[0]?.after).toBe('2');
    await waitFor(() => journaled().length === 7);
    expect(journaled()).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => `kick:line ${n}`));
    // A drop and a reconnect: nothing twice either.
    gk.drop();
    await waitFor(() => daemon!.logs.some((l) => /trying the Gatekeeper again soon/.test(l)));
    timers.advance(2000);
    await waitFor(() => gk.open().length === 1);
    expect(gk.open()[0]?.after).toBe('7');
    gk.push(chat(8));
    await waitFor(() => journaled().length === 8);
    expect(journaled().at(-1)).toBe('kick:line 8');
  });

  it('a gap is one line in words and the feed goes on with what is kept', async () => {
    gk.approve();
    await writeRecord(token());
    for (let n = 1; n <= 5; n += 1) gk.push(chat(n));
    gk.forgetUpTo(3);
    await start();
    await waitFor(() => journaled().length === 2);
    expect(journaled()).toEqual(['kick:line 4', 'kick:line 5']);
    const lines = daemon!.logs.filter((l) => /lost/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /\[kick\] 3 Kick events were lost before this daemon took them \(the Gatekeeper keeps Kick events for 24 hours, at most 10,000\)/,
    );
  });

  it("a mark beyond the Gatekeeper's numbers (its store was reset) follows its gap: its events are taken from there", async () => {
    gk.approve();
    await writeRecord(token());
    for (let n = 1; n <= 3; n += 1) gk.push(chat(n));
    await start();
    await waitFor(() => journaled().length === 3);
    await stop();
    gk.reset();
    expect(gk.push(chat(4))).toBe(1);
    await start();
    await waitFor(() => journaled().length === 4);
    expect(gk.connections.at(-1)?.after).toBe('3');
    expect(journaled().at(-1)).toBe('kick:line 4');
    expect(daemon!.logs.some((l) => /numbers of Kick events are behind this daemon's \(3;/.test(l))).toBe(
      true,
    );
    gk.push(chat(5));
    await waitFor(() => journaled().length === 5);
    expect(daemon!.journal.metaValue(`${KICK_SEQ_META_PREFIX}member-1`)).toBe('2');
  });

  it('frames that are not the protocol are logged and ignored; the feed goes on', async () => {
    gk.approve();
    await writeRecord(token());
    await start();
    await waitFor(() => gk.open().length === 1);
    gk.sendRaw('not json');
    gk.sendRaw(JSON.stringify({ type: 'event', seq: 1, event: { type: 'chat', user: {} } }));
    gk.sendRaw(JSON.stringify({ type: 'hello' }));
    gk.push(chat(1));
    await waitFor(() => journaled().length === 1);
    expect(daemon!.logs.filter((l) => /events frame that is not understood/.test(l))).toHaveLength(3);
    expect(gk.open()).toHaveLength(1);
  });

  it('a licence the Gatekeeper refuses (401) is refreshed, and the feed opens with the fresh one', async () => {
    gk.approve();
    const stale = token();
    const fresh = token();
    await writeRecord(stale);
    gk.accept = (t) => t === fresh;
    gk.validate = () => ({ token: fresh, tier: 'free' });
    gk.push(chat(1));
    await start();
    await waitFor(() => gk.open().length === 1);
    expect(gk.requests).toContain('POST /validate');
    expect(gk.open()[0]?.authorization).toBe(`Bearer ${fresh}`);
    await waitFor(() => journaled().length === 1);
  });

  it('a licence the Gatekeeper rejects even after a refresh: the feed says so and stops asking until a new sign-in', async () => {
    gk.approve();
    await writeRecord(token());
    gk.accept = () => false;
    // A streamer who reads Kick here: the refusal is news for them.
    await start({
      platformUrls: {
        ...UNREACHABLE_PLATFORMS,
        kickSite: 'http://127.0.0.1:9',
        kickPusher: 'ws://127.0.0.1:9/app/k',
      },
      sources: [{ platform: 'kick', channel: 'streamer', enabled: true, chatroomId: 4242 }],
    });
    await waitFor(() =>
      daemon!.logs.includes(
        '[kick] events: the Gatekeeper rejected the licence — run overlay-daemon login again',
      ),
    );
    expect(gk.requests.filter((r) => r === 'POST /validate')).toHaveLength(1);
    // Nothing more is planned: no retry waits on the clock.
    expect(timers.size).toBe(0);
    expect(gk.connections).toHaveLength(0);
  });

  it('a chat message id that already came is delivered once', async () => {
    // Without the Pusher stand-in: the same Kick message id twice over the Gatekeeper (a retried webhook
    // that got a new seq) reaches the pages once.
    gk.approve();
    await writeRecord(token());
    await start();
    await waitFor(() => gk.open().length === 1);
    gk.push(chat(1, 'same-id'));
    gk.push(chat(2, 'same-id'));
    gk.push(chat(3));
    await waitFor(() => journaled().length === 2);
    expect(journaled()).toEqual(['kick:line 1', 'kick:line 3']);
  });

  it("a chat message that comes over Kick's chat socket and through the Gatekeeper is delivered once; /status says both", async () => {
    const pusher = await startFakePusher();
    try {
      gk.approve('streamer');
      await writeRecord(token());
      await start({
        platformUrls: { ...UNREACHABLE_PLATFORMS, kickPusher: pusher.url, kickSite: 'http://127.0.0.1:9' },
        sources: [{ platform: 'kick', channel: 'streamer', enabled: true, chatroomId: 4242 }],
      });
      await pusher.waitForSubscribed('chatrooms.4242.v2');
      await waitFor(() => gk.open().length === 1);
      const sources = async () =>
        ((await (await api(daemon!, 'GET', '/status')).json()) as { sources: { detail?: string }[] })
          .sources[0]?.detail;
      await waitFor(async () => /events: connected through the Gatekeeper/.test((await sources()) ?? ''));
      // Over Pusher first, then the webhook of the same message through the Gatekeeper.
      const id = pusher.chatMessage(4242, { content: 'hello both ways', sender: { username: 'fan1' } });
      await waitFor(() => journaled().length === 1);
      gk.push(chat(1, id, 'hello both ways'));
      // The other way round: the Gatekeeper first, then Pusher.
      gk.push(chat(2, 'second-id'));
      await waitFor(() => journaled().length === 2);
      pusher.chatMessage(4242, { id: 'second-id', content: 'line 2', sender: { username: 'fan2' } });
      gk.push(chat(3));
      await waitFor(() => journaled().length === 3);
      expect(journaled()).toEqual(['kick:hello both ways', 'kick:line 2', 'kick:line 3']);
      // A subscription: Kick's socket announces it, and its webhook comes through the Gatekeeper. While the
      // feed is connected only the webhook's counts.
      pusher.event('chatrooms.4242.v2', 'App\\Events\\SubscriptionEvent', { username: 'subber', months: 2 });
      gk.push({
        type: 'subscribe',
        platform: 'kick',
        user: { uniqueId: 'subber', nickname: 'subber' },
        data: { subMonth: 2 },
      });
      await waitFor(() => journaled().length === 4);
      // A chat line after it on the same socket: once it is in, the socket's notice was handled too.
      pusher.chatMessage(4242, { id: 'after-sub', content: 'line 5', sender: { username: 'fan5' } });
      await waitFor(() => journaled().includes('kick:line 5'));
      expect(journaled().filter((line) => line === 'subscribe')).toHaveLength(1);
      expect(journaled()).toHaveLength(5);
    } finally {
      await stop();
      await pusher.close();
    }
  });

  it('while the feed is connected only the linked channel leaves its socket’s subscription notices out; another channel keeps its own', async () => {
    const pusher = await startFakePusher();
    try {
      gk.approve('streamer');
      await writeRecord(token());
      await start({
        platformUrls: { ...UNREACHABLE_PLATFORMS, kickPusher: pusher.url, kickSite: 'http://127.0.0.1:9' },
        sources: [
          { platform: 'kick', channel: 'otherchannel', enabled: true, chatroomId: 5151 },
          { platform: 'kick', channel: 'streamer', enabled: true, chatroomId: 4242 },
        ],
      });
      await Promise.all([
        pusher.waitForSubscribed('chatrooms.4242.v2'),
        pusher.waitForSubscribed('chatrooms.5151.v2'),
      ]);
      await waitFor(() => gk.open().length === 1);
      // The feed brings the linked channel's subscriptions; it says so once connected.
      gk.push(chat(1));
      await waitFor(() => journaled().length === 1);
      pusher.event('chatrooms.4242.v2', 'App\\Events\\SubscriptionEvent', {
        username: 'linkedsub',
        months: 1,
      });
      pusher.event('chatrooms.5151.v2', 'App\\Events\\SubscriptionEvent', {
        username: 'othersub',
        months: 4,
      });
      // Chat after each on the same sockets: once they are in, the notices before them were handled too.
      pusher.chatMessage(4242, { id: 'after-linked', content: 'after linked', sender: { username: 'a' } });
      pusher.chatMessage(5151, { id: 'after-other', content: 'after other', sender: { username: 'b' } });
      await waitFor(
        () => journaled().includes('kick:after linked') && journaled().includes('kick:after other'),
      );
      const subscribers = daemon!.journal
        .events({ after: 0, limit: 100 })
        .events.flatMap((e) => (e.event.type === 'subscribe' ? [e.event.user.uniqueId] : []));
      expect(subscribers).toEqual(['othersub']);
    } finally {
      await stop();
      await pusher.close();
    }
  });

  it('without a link it says so, and picks the link up when the Gatekeeper says connected', async () => {
    await writeRecord(token());
    await start();
    await waitFor(
      async () => (await kickDetail()) === 'events: not connected — run overlay-daemon connect kick',
    );
    expect(gk.connections).toHaveLength(0);
    gk.approve();
    timers.advance(KICK_STATUS_RECHECK_MS);
    await waitFor(() => gk.open().length === 1);
  });

  it('without a licence: nothing is asked, and the control API says a sign-in is needed', async () => {
    await start();
    await waitFor(async () => /need a sign-in/.test((await kickDetail()) ?? ''));
    const res = await api(daemon!, 'POST', '/api/sources/kick/connect');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /overlay-daemon login/,
    );
    expect(gk.requests).toEqual([]);
  });
});

describe('how the Gatekeeper ends the feed', () => {
  const validations = () => gk.requests.filter((r) => r === 'POST /validate').length;
  /** Lets the daemon act on what it was sent (nothing on the feed's fake clock moves). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

  it('4401 (the licence expired): opens again at once with a fresh licence, then with the one renewed meanwhile', async () => {
    gk.approve();
    const first = token();
    await writeRecord(first);
    const fresh = token();
    gk.validate = () => ({ token: fresh, tier: 'free' });
    await start();
    await waitFor(() => gk.open().length === 1);
    expect(gk.open()[0]?.authorization).toBe(`Bearer ${first}`);
    // Up for a while, then the licence's exp: no clock moves, yet the feed is back with a fresh licence.
    timers.advance(30_000);
    gk.closeWith(4401, 'the licence expired');
    await waitFor(() => gk.open()[0]?.authorization === `Bearer ${fresh}`, 5000, 'the feed back');
    expect(validations()).toBe(1);
    gk.push(chat(1));
    await waitFor(() => journaled().length === 1);

    // Renewed by the daemon before the exp of the licence the socket has: the 4401 costs no validation.
    const renewed = token();
    gk.validate = () => ({ token: renewed, tier: 'free' });
    await licence.refresh();
    expect(validations()).toBe(2);
    timers.advance(30_000);
    gk.closeWith(4401, 'the licence expired');
    await waitFor(() => gk.open()[0]?.authorization === `Bearer ${renewed}`, 5000, 'the feed back again');
    expect(validations()).toBe(2);
    expect(await kickDetail()).toBe('events: connected through the Gatekeeper');
    expect(gk.connections).toHaveLength(3);
    // Routine with licences of seconds: the log says connected once, not at every expiry.
    expect(daemon!.logs.filter((l) => l.startsWith('[kick] events: connect'))).toEqual([
      '[kick] events: connecting to the Gatekeeper',
      '[kick] events: connected through the Gatekeeper',
    ]);
  });

  it('4403 (signed out elsewhere, or no membership): no socket again until a new sign-in, and it says so', async () => {
    gk.approve();
    await writeRecord(token());
    await start();
    await waitFor(() => gk.open().length === 1);
    // The logout revoked the licence: the Gatekeeper refuses it from now on.
    gk.validate = undefined;
    gk.closeWith(4403, 'signed out');
    await waitFor(async () => /run overlay-daemon login again/.test((await kickDetail()) ?? ''));
    timers.advance(10 * 60_000);
    await settle();
    timers.advance(10 * 60_000);
    await settle();
    expect(gk.connections).toHaveLength(1);
    expect(gk.requests.filter((r) => r.startsWith('WS '))).toHaveLength(1);
    expect(await kickDetail()).toMatch(/^events: .*run overlay-daemon login again$/);
    expect(gk.connections).toHaveLength(1);

    // A new sign-in (its licence of the raised epoch): the feed opens with it.
    const signedIn = signer.sign({ sub: 'member-1', tier: 'free', iss: gk.url, epoch: 2 });
    gk.validate = () => ({ token: signedIn, tier: 'free' });
    await writeRecord(signedIn);
    await licence.refresh();
    await waitFor(
      () => gk.open()[0]?.authorization === `Bearer ${signedIn}`,
      5000,
      'the feed after the sign-in',
    );
  });

  it('4403 while the Gatekeeper still renews the licence: the same sign-in does not open the feed again', async () => {
    gk.approve();
    await writeRecord(token());
    gk.validate = () => ({ token: token(), tier: 'free' });
    await start();
    await waitFor(() => gk.open().length === 1);
    gk.closeWith(4403, 'the membership is no longer on record');
    await waitFor(async () => /the Gatekeeper ended the feed/.test((await kickDetail()) ?? ''));
    await waitFor(() => validations() === 1);
    for (let n = 0; n < 5; n++) {
      timers.advance(60_000);
      await licence.refresh();
      await settle();
    }
    expect(gk.connections).toHaveLength(1);
  });

  it('4409 (another daemon of this member took the feed): says so in words, in the log and the status, and does not take it back by itself', async () => {
    gk.approve();
    await writeRecord(token());
    await start({
      platformUrls: {
        ...UNREACHABLE_PLATFORMS,
        kickSite: 'http://127.0.0.1:9',
        kickPusher: 'ws://127.0.0.1:9/app/k',
      },
      sources: [{ platform: 'kick', channel: 'streamer', enabled: true, chatroomId: 4242 }],
    });
    await waitFor(() => gk.open().length === 1);
    gk.closeWith(4409, 'a newer feed socket of this member took its place');
    const words =
      'events: another daemon of this member took the feed — this one does not take it back by itself (restart it, or sign in again, to take the feed back here)';
    await waitFor(async () => (await kickDetail()) === words);
    expect(daemon!.logs.filter((l) => l === `[kick] ${words}`)).toHaveLength(1);
    const status = (await (await api(daemon!, 'GET', '/status')).json()) as {
      sources: { platform: string; detail?: string }[];
    };
    expect(status.sources.find((s) => s.platform === 'kick')?.detail).toContain(words);
    for (let n = 0; n < 3; n++) {
      timers.advance(10 * 60_000);
      await settle();
    }
    expect(gk.connections).toHaveLength(1);
    expect(validations()).toBe(0);
  });
});

describe('caught-up events (a night of Kick events the Gatekeeper kept)', () => {
  it('are journaled at their own time and counted in points, goals and boards, listed as caught up, and fire no rule; the live event after them fires', async () => {
    const hooks: string[] = [];
    const receiver = createServer((req, res) => {
      hooks.push(req.url ?? '');
      req.resume();
      res.end('ok');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    try {
      await writeRecord(token());
      await start();
      // Set up while Kick is not linked yet: a goal of follows, an alert, and rules for every kind.
      const res = await api(daemon!, 'POST', '/api/overlays', {
        name: 'Stage',
        width: 800,
        height: 600,
        widgets: [
          { id: 'goal', type: 'goal', x: 0, y: 0, title: 'Follows', source: 'follows', target: 10 },
          { id: 'alert', type: 'alert', x: 0, y: 100 },
        ],
      });
      const overlay = (await res.json()) as Overlay;
      const actions = [
        { kind: 'webhook', url: `${hookUrl}/{type}/{user.uniqueId}`, method: 'GET' },
        { kind: 'chat', text: 'thanks {user.nickname}' },
        {
          overlayId: overlay.id,
          widgetId: 'alert',
          command: 'show-alert',
          payload: { text: '{user.nickname}' },
        },
      ];
      const saved = await api(
        daemon!,
        'PUT',
        '/api/rules',
        (['follow', 'gift', 'chat'] as const).map((trigger) => ({
          id: trigger,
          name: trigger,
          trigger,
          actions,
        })),
      );
      expect(saved.status).toBe(200);
      const client = await subscribe(daemon!, overlay.id);
      clients.push(client);

      // The night: a follow eight hours ago, 50 Kicks seven hours ago (epoch ms), a chat line six hours ago.
      const now = Date.now();
      const hoursAgo = (h: number) => now - h * 3_600_000;
      const fan = { uniqueId: 'night-owl', nickname: 'Night_Owl' };
      gk.push({ type: 'follow', platform: 'kick', user: fan, data: {} }, hoursAgo(8));
      gk.push(
        {
          type: 'gift',
          platform: 'kick',
          user: fan,
          data: { giftName: 'Rage Quit', repeatCount: 1, diamondCount: 50 },
        },
        hoursAgo(7),
      );
      gk.push(chat(1, 'night-1', 'anyone here?'), hoursAgo(6));
      gk.approve();
      await api(daemon!, 'GET', '/api/sources/kick/connect');
      await waitFor(() => journaled().length === 3);
      // Then a live follow.
      gk.push(
        {
          type: 'follow',
          platform: 'kick',
          user: { uniqueId: 'early-bird', nickname: 'Early_Bird' },
          data: {},
        },
        Date.now(),
      );
      await waitFor(() => hooks.length === 1 && gk.chat.length === 1);

      // The journal has all four at their own times; the night's are marked caught up.
      const kept = daemon!.journal.events({ after: 0, limit: 10 }).events;
      expect(kept.map((e) => [e.event.type, e.caughtUp === true])).toEqual([
        ['follow', true],
        ['gift', true],
        ['chat', true],
        ['follow', false],
      ]);
      expect(kept.slice(0, 3).map((e) => Date.parse(e.at))).toEqual([hoursAgo(8), hoursAgo(7), hoursAgo(6)]);
      expect(Math.abs(Date.parse(kept[3]!.at) - Date.now())).toBeLessThan(60_000);
      // Counted: points, the goal, the boards.
      expect(daemon!.journal.viewerPoints('kick', 'night-owl')).toBe(50);
      await waitFor(
        () =>
          (daemon!.overlays.get(overlay.id)?.widgets[0] as { current?: number } | undefined)?.current === 2,
      );
      const board = (await (
        await api(daemon!, 'GET', '/api/leaderboard?scope=all&metric=diamonds')
      ).json()) as {
        uniqueId: string;
        diamonds: number;
      }[];
      expect(board).toEqual([expect.objectContaining({ uniqueId: 'night-owl', diamonds: 50 })]);
      // Only the live follow fired: one webhook, one chat answer, one alert.
      await waitFor(() => client.received.some((m) => m.type === 'overlay-command'));
      expect(hooks).toEqual(['/follow/early-bird']);
      expect(gk.chat.map((c) => c.content)).toEqual(['thanks Early_Bird']);
      const commands = client.received.flatMap((m) => (m.type === 'overlay-command' ? [m.command] : []));
      expect(commands).toEqual(['show-alert']);
      // The page got the night's events marked as sent after the fact, at their own time: listed, no alert.
      const frames = client.received.flatMap((m) => (m.type === 'stream-event' ? [m] : []));
      expect(frames.map((m) => [m.event.type, m.replayed === true, m.at])).toEqual([
        ['follow', true, hoursAgo(8)],
        ['gift', true, hoursAgo(7)],
        ['chat', true, hoursAgo(6)],
        ['follow', false, expect.any(Number)],
      ]);
      // The dashboard's list of what came while the streamer was away: the night, newest first.
      const away = (await (await api(daemon!, 'GET', '/api/events/caught-up')).json()) as {
        events: { event: StreamEvent; at: string; arrivedAt: string }[];
      };
      expect(away.events.map((e) => e.event.type)).toEqual(['chat', 'gift', 'follow']);
      expect(Date.parse(away.events[0]!.arrivedAt)).toBeGreaterThan(hoursAgo(1));
    } finally {
      receiver.close();
    }
  });
});

describe("the feed's lines in the log", () => {
  const kickLines = () => daemon!.logs.filter((l) => l.startsWith('[kick] events:'));

  it('for a streamer who never uses Kick: no line at start, signed out or with a licence on disk and no link', async () => {
    await start();
    await waitFor(async () => /need a sign-in/.test((await kickDetail()) ?? ''));
    expect(kickLines()).toEqual([]);
    await stop();
    // A licence on disk, read after the daemon started (as `overlay-daemon start` does): not "need a sign-in".
    await writeRecord(token());
    licence = new LicenceManager({ dataDir, client: new GatekeeperClient(gk.url), log: () => {} });
    daemon = await startTestDaemon({
      dataDir,
      limits: licence,
      kickEvents: { licence, gatekeeperUrl: gk.url, timers, random: () => 0.5 },
    });
    await licence.load();
    await waitFor(async () => /not connected/.test((await kickDetail()) ?? ''));
    // Five more looks, a minute apart.
    for (let n = 0; n < 5; n += 1) {
      const asked = gk.requests.filter((r) => r === 'GET /kick/status').length;
      timers.advance(KICK_STATUS_RECHECK_MS);
      await waitFor(() => gk.requests.filter((r) => r === 'GET /kick/status').length > asked);
    }
    await waitFor(async () => /not connected/.test((await kickDetail()) ?? ''));
    expect(kickLines()).toEqual([]);
  });

  it('with a Kick source set up: "not connected" is one line however often the Gatekeeper is asked, and a change is a new one', async () => {
    await writeRecord(token());
    await start({
      platformUrls: {
        ...UNREACHABLE_PLATFORMS,
        kickSite: 'http://127.0.0.1:9',
        kickPusher: 'ws://127.0.0.1:9/app/k',
      },
      sources: [{ platform: 'kick', channel: 'streamer', enabled: true, chatroomId: 4242 }],
    });
    await waitFor(() => kickLines().length === 1);
    for (let n = 0; n < 5; n += 1) {
      const asked = gk.requests.filter((r) => r === 'GET /kick/status').length;
      timers.advance(KICK_STATUS_RECHECK_MS);
      await waitFor(() => gk.requests.filter((r) => r === 'GET /kick/status').length > asked);
    }
    // The last look's answer is in before the next line is counted.
    await waitFor(async () => /not connected/.test((await kickDetail()) ?? ''));
    expect(kickLines()).toEqual(['[kick] events: not connected — run overlay-daemon connect kick']);
    gk.approve();
    timers.advance(KICK_STATUS_RECHECK_MS);
    await waitFor(() => kickLines().includes('[kick] events: connected through the Gatekeeper'));
    expect(kickLines()).toEqual([
      '[kick] events: not connected — run overlay-daemon connect kick',
      '[kick] events: connecting to the Gatekeeper',
      '[kick] events: connected through the Gatekeeper',
    ]);
  });
});

describe("asking how Kick's link stands", () => {
  it('the Kick box asking every few seconds costs the Gatekeeper one look per 10 s, and still sees the link come', async () => {
    await writeRecord(token());
    await start();
    await waitFor(async () => /not connected/.test((await kickDetail()) ?? ''));
    const looks = () => gk.requests.filter((r) => r === 'GET /kick/status').length;
    const before = looks();
    // Thirty questions in a row (a box polled for a minute): none reaches the Gatekeeper within the 10 s.
    for (let n = 0; n < 30; n += 1) {
      const body = (await (await api(daemon!, 'GET', '/api/sources/kick/connect')).json()) as KickLinkState;
      expect(body).toMatchObject({ connected: false, eventsConnected: false });
    }
    expect(looks()).toBe(before);
    // Linked meanwhile: the look 10 s after the last one finds it, and the box's next question says so.
    gk.approve();
    timers.advance(KICK_STATUS_ASKED_MIN_MS);
    await waitFor(() => gk.open().length === 1);
    expect(looks()).toBe(before + 1);
    const linked = (await (await api(daemon!, 'GET', '/api/sources/kick/connect')).json()) as KickLinkState;
    expect(linked).toEqual({
      connected: true,
      channel: 'streamer',
      eventsConnected: true,
      events: 'events: connected through the Gatekeeper',
    });
    // Connected: asking costs the Gatekeeper nothing at all.
    for (let n = 0; n < 10; n += 1) await api(daemon!, 'GET', '/api/sources/kick/connect');
    expect(looks()).toBe(before + 1);
  });
});

describe('Kick linked while the daemon runs', () => {
  it('linked from the dashboard after the start: the feed opens and its events reach the page', async () => {
    await writeRecord(token());
    await start();
    await waitFor(async () => /not connected/.test((await kickDetail()) ?? ''));
    const client = await overlayClient();
    // The dashboard's Connect Kick: the URL is opened and allowed on Kick.
    const { url } = (await (await api(daemon!, 'POST', '/api/sources/kick/connect')).json()) as {
      url: string;
    };
    expect((await fetch(url)).status).toBe(200);
    await waitFor(async () => (await kickDetail()) === 'events: connected through the Gatekeeper');
    gk.push(chat(1, 'linked-1', 'after the link'));
    await waitFor(() => streamEvents(client).length === 1);
    expect(comments(streamEvents(client))).toEqual(['kick:after the link']);
  });

  it('linked with overlay-daemon connect kick in another process: the feed opens within seconds, its events reach the page and a chat action answers on Kick', async () => {
    await writeRecord(token());
    await start();
    await waitFor(async () => /not connected/.test((await kickDetail()) ?? ''));
    const client = await overlayClient();
    const saved = await api(daemon!, 'PUT', '/api/rules', [
      {
        id: 'thanks',
        name: 'Thanks',
        trigger: 'chat',
        actions: [{ kind: 'chat', text: 'hi {user.nickname}' }],
      },
    ]);
    expect(saved.status).toBe(200);
    // While the daemon runs, the CLI links Kick on the same data directory.
    const run = spawnCli(['connect', 'kick', '--data-dir', dataDir], { OVERLAY_GATEKEEPER_URL: gk.url });
    await waitFor(() => /\/kick\/authorize\?state=/.test(run.stdout()), 15_000);
    const url = /(http:\/\/\S+\/kick\/authorize\?state=\S+)/.exec(run.stdout())?.[1];
    await fetch(url!);
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toMatch(/The running overlay server takes them from now on/);
    // The daemon was asked how Kick stands just before (the waits above): it looks again 10 s after that,
    // not at its once-a-minute look.
    timers.advance(KICK_STATUS_ASKED_MIN_MS);
    await waitFor(() => gk.open().length === 1);
    await waitFor(async () => (await kickDetail()) === 'events: connected through the Gatekeeper');
    gk.push(chat(1, 'cli-1', 'first after the link'));
    await waitFor(() => streamEvents(client).length === 1);
    await waitFor(() => gk.chat.length === 1);
    expect(gk.chat[0]?.content).toBe('hi Fan 1');
    const log = (await (await api(daemon!, 'GET', '/api/actions/log')).json()) as { error?: string }[];
    expect(log.map((e) => e.error).filter(Boolean)).toEqual([]);
  });
});

describe('linking Kick', () => {
  it('the control API: POST gives the URL to open, GET the link, DELETE unlinks', async () => {
    await writeRecord(token());
    await start();
    const res = await api(daemon!, 'POST', '/api/sources/kick/connect');
    expect(res.status).toBe(200);
    const { url } = (await res.json()) as { url: string };
    expect(url).toMatch(new RegExp(`^${gk.url}/kick/authorize\\?state=`));
    expect((await fetch(url)).status).toBe(200);
    await waitFor(async () => {
      const body = (await (await api(daemon!, 'GET', '/api/sources/kick/connect')).json()) as {
        connected: boolean;
        channel?: string;
      };
      return body.connected && body.channel === 'streamer';
    });
    // Asking for the link's state picked the link up at once.
    await waitFor(() => gk.open().length === 1);
    const deleted = await api(daemon!, 'DELETE', '/api/sources/kick/connect');
    expect(deleted.status).toBe(204);
    expect(gk.requests).toContain('DELETE /kick/connect');
    await waitFor(async () => /not connected/.test((await kickDetail()) ?? ''));
    expect(gk.open()).toHaveLength(0);
  });

  it('overlay-daemon connect kick prints the URL, waits for the link and prints the channel; disconnect kick unlinks', async () => {
    await writeRecord(token());
    const env = { OVERLAY_GATEKEEPER_URL: gk.url };
    const run = spawnCli(['connect', 'kick', '--data-dir', dataDir], env);
    await waitFor(() => /\/kick\/authorize\?state=/.test(run.stdout()), 15_000);
    const url = /(http:\/\/\S+\/kick\/authorize\?state=\S+)/.exec(run.stdout())?.[1];
    expect(url).toBeTruthy();
    expect(gk.requests).toContain('POST /kick/connect');
    await fetch(url!);
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toMatch(/Connected Kick: kick\.com\/streamer/);

    const off = spawnCli(['disconnect', 'kick', '--data-dir', dataDir], env);
    expect(await off.exited).toBe(0);
    expect(off.stdout()).toMatch(/Disconnected Kick/);
    expect(gk.connected).toBe(false);
  });

  it('connect kick without a licence says that signing in is needed', async () => {
    const run = spawnCli(['connect', 'kick', '--data-dir', dataDir], { OVERLAY_GATEKEEPER_URL: gk.url });
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toMatch(/sign in first: run "overlay-daemon login"/);
    expect(gk.requests).toEqual([]);
  });
});
