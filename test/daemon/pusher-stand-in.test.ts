// The Pusher stand-in checked with a real Pusher client (pusher-js, as Kick's own page uses it): it
// connects, subscribes, gets events with their data, pongs its pings, hears nothing of channels it did not
// subscribe to, and a wrong app key is refused as Pusher refuses it.
import PusherModule from 'pusher-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/daemon.js';
import { type FakePusher, startFakePusher } from '../support/fakes/pusher.js';

// NodeNext sees the package's default export as a namespace: the class is its default.
type PusherClient = import('pusher-js').default;
const Pusher = PusherModule as unknown as new (key: string, options: object) => PusherClient;

let fake: FakePusher;
let client: PusherClient | undefined;

beforeEach(async () => {
  fake = await startFakePusher();
});

afterEach(async () => {
  client?.disconnect();
  client = undefined;
  await fake.close();
});

function connect(key = fake.appKey): PusherClient {
  const { port } = new URL(fake.url);
  client = new Pusher(key, {
    cluster: 'any',
    wsHost: '127.0.0.1',
    wsPort: Number(port),
    forceTLS: false,
    enabledTransports: ['ws'],
    disableStats: true,
  });
  return client;
}

describe('the Pusher stand-in, read by pusher-js', () => {
  it('connects, subscribes and delivers events with their data', async () => {
    const pusher = connect();
    await waitFor(() => pusher.connection.state === 'connected');
    expect(pusher.connection.socket_id).toMatch(/^\d+\.\d+$/);
    const channel = pusher.subscribe('chatrooms.7.v2');
    const other = pusher.subscribe('channel.9');
    await waitFor(() => channel.subscribed && other.subscribed);
    expect(fake.subscribed).toEqual(['chatrooms.7.v2', 'channel.9']);
    const got: unknown[] = [];
    channel.bind('App\\Events\\ChatMessageEvent', (data: unknown) => got.push(data));
    const elsewhere: unknown[] = [];
    other.bind_global((event: string) => {
      if (!event.startsWith('pusher')) elsewhere.push(event);
    });
    // A channel nobody subscribed to: nothing arrives.
    fake.event('chatrooms.8.v2', 'App\\Events\\ChatMessageEvent', { id: 'nowhere' });
    const id = fake.chatMessage(7, { content: 'hello', sender: { id: 3, username: 'Viewer' } });
    await waitFor(() => got.length === 1);
    expect(got[0]).toMatchObject({
      id,
      chatroom_id: 7,
      content: 'hello',
      type: 'message',
      sender: { id: 3, username: 'Viewer', slug: 'viewer' },
    });
    expect(elsewhere).toEqual([]);
  });

  it('answers pings with pongs', async () => {
    const pusher = connect();
    await waitFor(() => pusher.connection.state === 'connected');
    const messages: string[] = [];
    pusher.connection.bind('message', (m: { event: string }) => messages.push(m.event));
    pusher.send_event('pusher:ping', {});
    await waitFor(() => messages.includes('pusher:pong'));
    expect(fake.pings).toBe(1);
  });

  it('refuses a wrong app key as Pusher does (4001), and pusher-js gives up', async () => {
    const pusher = connect('wrongkey');
    const errors: unknown[] = [];
    pusher.connection.bind('error', (e: unknown) => errors.push(e));
    await waitFor(() => pusher.connection.state === 'disconnected');
    expect(errors).toEqual([
      expect.objectContaining({
        error: expect.objectContaining({
          data: { code: 4001, message: 'App key wrongkey not in this cluster' },
        }),
      }),
    ]);
    // Refused, not retried: pusher-js gives a 4000–4099 close up.
    expect(fake.connections).toBe(1);
  });

  it('a dropped connection is reconnected by pusher-js and subscribed again', async () => {
    const pusher = connect();
    const channel = pusher.subscribe('chatrooms.7.v2');
    await waitFor(() => channel.subscribed);
    fake.dropClients();
    await fake.waitForSubscribed('chatrooms.7.v2', 2);
    expect(fake.connections).toBe(2);
  });
});
