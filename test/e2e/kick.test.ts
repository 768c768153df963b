// Kick end to end: the Gatekeeper under `wrangler dev` with Kick's API, OAuth and public key played by the stand-in,
// signed webhooks from the stand-in sender, Kick's chat socket played by the Pusher stand-in, and the real daemon
// (its `kick` source, `overlay-daemon connect kick`) delivering to an overlay page's WebSocket. Loopback only.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerMessage } from '../../shared/protocol/index.js';
import { pageToken } from '../support/daemon.js';
import { startFakeKickApi } from '../support/fakes/kick-api.js';
import {
  type KickWebhookSender,
  kickSamples,
  newKickWebhookSender,
} from '../support/fakes/kick-webhook-signer.js';
import { startFakePusher } from '../support/fakes/pusher.js';
import { type LocalStack, startLocalStack } from '../support/local-stack.js';
import { until } from '../support/wait.js';
import { connectWs, type TestWsClient } from '../support/ws.js';
import { type DaemonProcess, STACK_WAIT_MS, signIn, startDaemonProcess } from './harness.js';

const SLUG = 'e2e-kick-streamer';
const CHATROOM_ID = 7_000_001;
const CHANNEL_ID = 7_000_002;
const BROADCASTER_ID = 7_000_003;
const KICK_CLIENT_ID = 'e2e-kick-client';
const KICK_CLIENT_SECRET = 'e2e-kick-secret';

let dir: string;
let dataDir: string;
let stack: LocalStack;
let kick: Awaited<ReturnType<typeof startFakeKickApi>>;
let pusher: Awaited<ReturnType<typeof startFakePusher>>;
let webhooks: KickWebhookSender;
let daemon: DaemonProcess | undefined;
let page: TestWsClient | undefined;
let overlayId = '';
const gatekeeperLog: string[] = [];

/** The daemon as the streamer starts it: the Kick source of SLUG, Kick's chat socket and site at the stand-ins. */
function startDaemon(): Promise<DaemonProcess> {
  return startDaemonProcess(dataDir, stack.gatekeeperUrl, {
    args: ['--kick', SLUG],
    env: { OVERLAY_KICK_PUSHER_URL: pusher.url, OVERLAY_KICK_SITE_URL: kick.url },
  });
}

/** An overlay page's socket on the running daemon: page load for the token, init, init reply. */
async function openPage(resumeFrom?: number): Promise<TestWsClient> {
  const port = daemon?.port ?? 0;
  const token = await pageToken({ port }, overlayId);
  const client = await connectWs(`ws://127.0.0.1:${port}`);
  client.ws.send(
    JSON.stringify({ action: 'init', overlayId, token, ...(resumeFrom !== undefined ? { resumeFrom } : {}) }),
  );
  await client.next((m) => m.type === 'init', STACK_WAIT_MS);
  return client;
}

type StreamEventMessage = Extract<ServerMessage, { type: 'stream-event' }>;

/** The Kick chat lines a page got whose text starts with `prefix`, in the order it got them. */
function kickChats(client: TestWsClient, prefix: string): StreamEventMessage[] {
  return client.received.filter(
    (m): m is StreamEventMessage =>
      m.type === 'stream-event' &&
      m.event.platform === 'kick' &&
      m.event.type === 'chat' &&
      typeof m.event.data?.comment === 'string' &&
      m.event.data.comment.startsWith(prefix),
  );
}

const comment = (m: StreamEventMessage) => String(m.event.data?.comment);

interface KickSourceState {
  platform: string;
  channel: string;
  state: string;
  detail?: string;
}

async function kickSource(): Promise<KickSourceState | undefined> {
  const status = (await (await (daemon as DaemonProcess).api('/status')).json()) as {
    sources?: KickSourceState[];
  };
  return status.sources?.find((s) => s.platform === 'kick' && s.channel === SLUG);
}

/** A chat message of the broadcaster's chat as Kick's webhook carries it (`chat.message.sent`, version 1). */
const chatWebhook = (messageId: string, content: string) =>
  kickSamples.chat({ user_id: BROADCASTER_ID, username: SLUG, channel_slug: SLUG }, { messageId, content });

/** POSTs a signed webhook to the Gatekeeper as Kick would; returns its answer's status. */
async function deliver(type: string, body: unknown, messageId: string): Promise<number> {
  const res = await webhooks.send(`${stack.gatekeeperUrl}/kick/webhook`, type, body, { messageId });
  return res.status;
}

/**
 * Connect Kick as the dashboard's Sources view does it: the daemon asks the Gatekeeper for Kick's page, the
 * streamer allows the link there (a browser played by following the redirects), the dashboard asks again.
 * Returns the Gatekeeper's callback page.
 */
async function connectKick(): Promise<{ status: number; text: string }> {
  const started = await (daemon as DaemonProcess).api('/api/sources/kick/connect', { method: 'POST' });
  expect(started.status, await started.clone().text()).toBe(200);
  const { url: start } = (await started.json()) as { url: string };
  expect(new URL(start).origin).toBe(kick.url);
  // OAuth 2.1 with PKCE: the Gatekeeper keeps the verifier, Kick sees only its S256 challenge.
  expect(new URL(start).searchParams.get('code_challenge_method')).toBe('S256');
  expect(new URL(start).searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  let url = start;
  let last: Response | undefined;
  for (let hop = 0; hop < 10; hop++) {
    last = await fetch(url, { redirect: 'manual' });
    const location = last.headers.get('location');
    if (last.status < 300 || last.status >= 400 || !location) break;
    await last.arrayBuffer();
    url = new URL(location, url).toString();
  }
  // The last stop is the Gatekeeper's callback, which answers a plain page that says it is done.
  expect(new URL(url).origin).toBe(stack.gatekeeperUrl);
  expect(new URL(url).pathname).toBe('/kick/callback');
  return { status: last?.status ?? 0, text: (await last?.text()) ?? '' };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'e2e-kick-'));
  dataDir = join(dir, 'data');
  webhooks = await newKickWebhookSender();
  kick = await startFakeKickApi({
    webhookPublicKey: webhooks.publicKeyPem,
    clientId: KICK_CLIENT_ID,
    clientSecret: KICK_CLIENT_SECRET,
  });
  kick.addChannel({ slug: SLUG, userId: BROADCASTER_ID, channelId: CHANNEL_ID, chatroomId: CHATROOM_ID });
  pusher = await startFakePusher();
  stack = await startLocalStack({
    stateDir: join(dir, 'wrangler'),
    vars: {
      KICK_API_URL: kick.url,
      KICK_AUTH_URL: kick.url,
      KICK_CLIENT_ID,
      KICK_CLIENT_SECRET,
    },
    log: (line) => {
      if (line.includes('/kick/')) gatekeeperLog.push(line);
    },
  });
  daemon = await startDaemon();
  const record = await signIn(stack.gatekeeperUrl, stack.patreon.url, join(dataDir, 'license.json'));
  expect(record.tier).toBe('premium');
  await until(
    async () => {
      const { licence } = (await (await (daemon as DaemonProcess).api('/status')).json()) as {
        licence: { state: string };
      };
      return licence.state === 'valid' ? true : undefined;
    },
    'the daemon to hold a valid licence',
    STACK_WAIT_MS,
  );
  const overlays = (await (await daemon.api('/api/overlays')).json()) as { id: string }[];
  overlayId = overlays[0]?.id ?? '';
  expect(overlayId).not.toBe('');
});

afterAll(async () => {
  page?.close();
  await daemon?.stop();
  await stack?.close();
  await pusher?.close();
  await kick?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Kick end to end', () => {
  it('connects Kick through the Gatekeeper: OAuth with PKCE at Kick, the subscriptions made, the status connected', async () => {
    const page = await connectKick();
    expect(page.status, page.text).toBe(200);
    const linked = (await (await (daemon as DaemonProcess).api('/api/sources/kick/connect')).json()) as {
      connected: boolean;
      channel?: string;
    };
    expect(linked).toMatchObject({ connected: true, channel: SLUG });
    // The stand-in saw the application subscribe the channel to the seven events.
    expect(
      kick
        .subscriptions(BROADCASTER_ID)
        .map((s) => s.name)
        .sort(),
    ).toEqual(
      [
        'channel.followed',
        'channel.subscription.gifts',
        'channel.subscription.new',
        'channel.subscription.renewal',
        'chat.message.sent',
        'kicks.gifted',
        'livestream.status.updated',
      ].sort(),
    );
    // The daemon's Kick source has chat over Pusher and the Gatekeeper's events.
    await until(
      async () => ((await kickSource())?.state === 'connected' ? true : undefined),
      'the Kick source to be connected',
      STACK_WAIT_MS,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await kickSource())}`);
    });
  }, 90_000);

  it('a signed webhook at the Gatekeeper reaches an overlay page as a Kick stream event', async () => {
    page = await openPage();
    expect(
      await deliver('chat.message.sent', chatWebhook('e2e-hook-1', 'hello through the edge'), 'd-1'),
    ).toBe(200);
    const got = await until(
      () => kickChats(page as TestWsClient, 'hello through the edge').at(0),
      'the page to get the webhook chat',
      STACK_WAIT_MS,
    );
    expect(got.event).toMatchObject({
      type: 'chat',
      platform: 'kick',
      user: { uniqueId: 'viewer-one', nickname: 'Viewer_One' },
      data: { comment: 'hello through the edge', messageId: 'e2e-hook-1' },
    });
    // A delivery Kick repeats is answered 200 and shows nothing more.
    expect(
      await deliver('chat.message.sent', chatWebhook('e2e-hook-1', 'hello through the edge'), 'd-1'),
    ).toBe(200);
    // A webhook signed with another key is refused and shows nothing.
    const forged = await newKickWebhookSender();
    const refused = await forged.send(
      `${stack.gatekeeperUrl}/kick/webhook`,
      'chat.message.sent',
      chatWebhook('e2e-forged', 'forged line'),
      { messageId: 'd-forged' },
    );
    expect(refused.status).toBe(401);
    // Something after both, so their absence is seen rather than waited for.
    expect(await deliver('chat.message.sent', chatWebhook('e2e-hook-2', 'hello after'), 'd-2')).toBe(200);
    await until(
      () => kickChats(page as TestWsClient, 'hello after').at(0),
      'the page to get the next chat',
      STACK_WAIT_MS,
    );
    expect(kickChats(page, 'hello through the edge')).toHaveLength(1);
    expect(kickChats(page, 'forged line')).toHaveLength(0);
  }, 60_000);

  it('five webhooks sent while the daemon is stopped arrive once, in order, after it starts', async () => {
    const before = page as TestWsClient;
    const lastSeq = Math.max(
      ...before.received.flatMap((m) => (m.type === 'stream-event' && m.seq !== undefined ? [m.seq] : [])),
    );
    before.close();
    page = undefined;
    await (daemon as DaemonProcess).stop();
    daemon = undefined;

    for (let i = 0; i < 5; i++) {
      expect(
        await deliver('chat.message.sent', chatWebhook(`e2e-off-${i}`, `while off ${i}`), `d-off-${i}`),
      ).toBe(200);
    }

    daemon = await startDaemon();
    // The page comes back where it left off, as an overlay page reconnecting does.
    page = await openPage(lastSeq);
    const expected = Array.from({ length: 5 }, (_, i) => `while off ${i}`);
    await until(
      () => (kickChats(page as TestWsClient, 'while off').length >= 5 ? true : undefined),
      'the page to get the five',
      STACK_WAIT_MS * 2,
    ).catch(async (err: Error) => {
      const link = await (await (daemon as DaemonProcess).api('/api/sources/kick/connect')).text();
      throw new Error(
        `${err.message}: got [${kickChats(page as TestWsClient, 'while off').map(comment)}]; the source: ${JSON.stringify(await kickSource())}; the link: ${link}; the daemon printed:\n${daemon?.output()}`,
      );
    });
    // A later live line proves nothing else of the five is still on its way.
    expect(await deliver('chat.message.sent', chatWebhook('e2e-after-start', 'after start'), 'd-after')).toBe(
      200,
    );
    await until(
      () => kickChats(page as TestWsClient, 'after start').at(0),
      'a live line after the five',
      STACK_WAIT_MS,
    );
    expect(kickChats(page, 'while off').map(comment)).toEqual(expected);
    // The journal agrees: each once, in order.
    const journal = (await (
      await (daemon as DaemonProcess).api(`/api/events?after=${lastSeq}&type=chat&limit=100`)
    ).json()) as { events: { event: { platform?: string; data?: { comment?: string } } }[] };
    expect(
      journal.events
        .filter((e) => e.event.platform === 'kick' && e.event.data?.comment?.startsWith('while off'))
        .map((e) => e.event.data?.comment),
    ).toEqual(expected);
  }, 120_000);

  it('a chat line that comes both over Pusher and as a webhook is delivered once', async () => {
    const client = page as TestWsClient;
    const id = 'e2e-both-ways-1';
    pusher.chatMessage(CHATROOM_ID, {
      id,
      content: 'both ways',
      sender: { id: 8_000_001, username: 'kickfan', slug: 'kickfan' },
    });
    expect(await deliver('chat.message.sent', chatWebhook(id, 'both ways'), 'd-both')).toBe(200);
    await until(() => kickChats(client, 'both ways').at(0), 'the page to get the line', STACK_WAIT_MS);
    // The other way round too: the webhook first, then Pusher.
    const second = 'e2e-both-ways-2';
    expect(await deliver('chat.message.sent', chatWebhook(second, 'both again'), 'd-both-2')).toBe(200);
    await until(() => kickChats(client, 'both again').at(0), 'the page to get the second', STACK_WAIT_MS);
    pusher.chatMessage(CHATROOM_ID, {
      id: second,
      content: 'both again',
      sender: { id: 8_000_001, username: 'kickfan', slug: 'kickfan' },
    });
    // A line that comes over Pusher only, after both, shows that both ways were read through.
    pusher.chatMessage(CHATROOM_ID, {
      id: 'e2e-pusher-only',
      content: 'pusher only',
      sender: { id: 8_000_001, username: 'kickfan', slug: 'kickfan' },
    });
    expect(await deliver('chat.message.sent', chatWebhook('e2e-hook-only', 'hook only'), 'd-hook-only')).toBe(
      200,
    );
    await until(
      () =>
        kickChats(client, 'pusher only').length && kickChats(client, 'hook only').length ? true : undefined,
      'the page to get the lines after',
      STACK_WAIT_MS,
    );
    expect(kickChats(client, 'both ways')).toHaveLength(1);
    expect(kickChats(client, 'both again')).toHaveLength(1);
    expect(kickChats(client, 'both ways')[0]?.event.data).toMatchObject({ messageId: id });
  }, 60_000);
});
