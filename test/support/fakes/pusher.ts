// A local stand-in for Kick's chat socket, a Pusher application speaking protocol 7 as pusher-js
// expects it: `/app/<key>?protocol=7…`, `pusher:connection_established` with a JSON-string `data`
// ({socket_id, activity_timeout}), `pusher:subscribe` answered by `pusher_internal:subscription_succeeded`,
// `pusher:ping` by `pusher:pong`, and events on a channel with a JSON-string `data`. A wrong key or
// protocol gets `pusher:error` and the close code Pusher uses. It can drop every connection, send
// garbage, and fall silent (no pongs) for the tests of reconnects and stale sockets.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export const FAKE_PUSHER_APP_KEY = 'fakekickpusherkey';

export interface FakeChatSender {
  id?: number;
  username: string;
  slug?: string;
}

export interface FakeChatMessage {
  id?: string;
  content: string;
  sender: FakeChatSender;
}

export interface FakePusherOptions {
  appKey?: string;
  /** The activity timeout announced to clients, in seconds (120, Pusher's). */
  activityTimeout?: number;
}

export interface FakePusher {
  /** `ws://127.0.0.1:PORT/app/<key>`: what OVERLAY_KICK_PUSHER_URL is set to. */
  url: string;
  appKey: string;
  /** Sockets open now. */
  readonly clients: number;
  /** Sockets ever opened. */
  readonly connections: number;
  /** Every channel a client subscribed to, in order (repeats after reconnects included). */
  readonly subscribed: string[];
  /** Every frame received from clients, parsed (what was not JSON as `{raw}`). */
  readonly received: unknown[];
  /** How many `pusher:ping` clients sent. */
  readonly pings: number;
  /** Resolves once `count` subscriptions to `channel` happened in all (1 by default). */
  waitForSubscribed(channel: string, count?: number, timeoutMs?: number): Promise<void>;
  /** One event on a channel to every client subscribed to it; `data` is sent as a JSON string (a string as it is). */
  event(channel: string, event: string, data: unknown): void;
  /** A chat message in a chatroom (`App\Events\ChatMessageEvent`), as Kick sends it; returns its id. */
  chatMessage(chatroomId: number, message: FakeChatMessage): string;
  /** A host or raid into a chatroom (`App\Events\StreamHostEvent`). */
  host(chatroomId: number, hostUsername: string, viewers: number): void;
  /** One raw text frame to every client (garbage, a frame without an event). */
  raw(text: string): void;
  /** Drops every client, keeps listening (Pusher restarting a node). */
  dropClients(): void;
  /** Closes every client with a Pusher close code (4200–4299: "come back now"), keeps listening. */
  closeClients(code: number, reason?: string): void;
  /** While true, pings get no pong and nothing is sent: a socket that went quiet. */
  silent: boolean;
  close(): Promise<void>;
}

interface Client {
  socket: WebSocket;
  channels: Set<string>;
}

function frame(event: string, data: unknown, channel?: string): string {
  return JSON.stringify({
    event,
    ...(channel !== undefined ? { channel } : {}),
    data: typeof data === 'string' ? data : JSON.stringify(data),
  });
}

export async function startFakePusher(options: FakePusherOptions = {}): Promise<FakePusher> {
  const appKey = options.appKey ?? FAKE_PUSHER_APP_KEY;
  const activityTimeout = options.activityTimeout ?? 120;
  const clients = new Set<Client>();
  const subscribed: string[] = [];
  const received: unknown[] = [];
  const waiters: { channel: string; count: number; resolve: () => void }[] = [];
  let connections = 0;
  let pings = 0;

  const server = createServer((_req, res) => {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found\n');
  });
  const wss = new WebSocketServer({ server });

  const checkWaiters = () => {
    for (const waiter of [...waiters]) {
      if (subscribed.filter((c) => c === waiter.channel).length < waiter.count) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const fake: FakePusher = {
    url: '',
    appKey,
    get clients() {
      return clients.size;
    },
    get connections() {
      return connections;
    },
    subscribed,
    received,
    get pings() {
      return pings;
    },
    silent: false,
    waitForSubscribed(channel, count = 1, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no subscription ${count}× to ${channel} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          channel,
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        checkWaiters();
      });
    },
    event(channel, event, data) {
      for (const client of clients)
        if (client.channels.has(channel)) client.socket.send(frame(event, data, channel));
    },
    chatMessage(chatroomId, message) {
      const id = message.id ?? randomUUID();
      const { sender } = message;
      fake.event(`chatrooms.${chatroomId}.v2`, 'App\\Events\\ChatMessageEvent', {
        id,
        chatroom_id: chatroomId,
        content: message.content,
        type: 'message',
        created_at: new Date().toISOString(),
        sender: {
          id: sender.id ?? 1,
          username: sender.username,
          slug: sender.slug ?? sender.username.toLowerCase(),
          identity: { color: '#75FD46', badges: [] },
        },
      });
      return id;
    },
    host(chatroomId, hostUsername, viewers) {
      fake.event(`chatrooms.${chatroomId}.v2`, 'App\\Events\\StreamHostEvent', {
        chatroom_id: chatroomId,
        optional_message: '',
        number_viewers: viewers,
        host_username: hostUsername,
      });
    },
    raw(text) {
      for (const client of clients) client.socket.send(text);
    },
    dropClients() {
      for (const client of clients) client.socket.terminate();
      clients.clear();
    },
    closeClients(code, reason = '') {
      for (const client of clients) client.socket.close(code, reason);
      clients.clear();
    },
    close() {
      for (const client of clients) client.socket.terminate();
      clients.clear();
      return new Promise<void>((resolve) => {
        wss.close(() => server.close(() => resolve()));
        server.closeAllConnections();
      });
    },
  };

  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    connections++;
    const url = new URL(req.url ?? '/', 'http://fake');
    const refuse = (code: number, message: string) => {
      socket.send(frame('pusher:error', { code, message }));
      socket.close(code, message);
    };
    const key = /^\/app\/([^/]+)$/.exec(url.pathname)?.[1];
    if (key !== appKey) return refuse(4001, `App key ${key ?? '(none)'} not in this cluster`);
    if (url.searchParams.get('protocol') !== '7') return refuse(4007, 'Unsupported protocol version');
    const client: Client = { socket, channels: new Set() };
    clients.add(client);
    socket.on('close', () => clients.delete(client));
    socket.on('error', () => clients.delete(client));
    socket.on('message', (raw) => {
      const text = raw.toString();
      let message: { event?: unknown; data?: unknown };
      try {
        message = JSON.parse(text) as typeof message;
        received.push(message);
      } catch {
        received.push({ raw: text });
        return;
      }
      if (fake.silent) return;
      const data = (
        typeof message.data === 'string' ? JSON.parse(message.data || '{}') : (message.data ?? {})
      ) as { channel?: unknown };
      switch (message.event) {
        case 'pusher:ping':
          pings++;
          socket.send(frame('pusher:pong', {}));
          return;
        case 'pusher:subscribe': {
          const channel = typeof data.channel === 'string' ? data.channel : '';
          if (!channel || /^(private|presence)-/.test(channel)) {
            socket.send(
              frame('pusher:error', { code: null, message: `Cannot subscribe to ${channel || '(nothing)'}` }),
            );
            return;
          }
          client.channels.add(channel);
          subscribed.push(channel);
          socket.send(frame('pusher_internal:subscription_succeeded', {}, channel));
          checkWaiters();
          return;
        }
        case 'pusher:unsubscribe': {
          if (typeof data.channel === 'string') client.channels.delete(data.channel);
          return;
        }
        default:
          return;
      }
    });
    socket.send(
      frame('pusher:connection_established', {
        socket_id: `${Math.floor(Math.random() * 1e6)}.${Math.floor(Math.random() * 1e6)}`,
        activity_timeout: activityTimeout,
      }),
    );
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `ws://127.0.0.1:${port}/app/${appKey}`;
  return fake;
}
