// A stand-in for the Gatekeeper's Kick routes on 127.0.0.1:0, as the daemon sees them: the member's link
// (`POST /kick/connect` → a URL, `GET /kick/status`, `DELETE /kick/connect`), the events socket
// `GET /kick/events?after=<seq>` (replay of what is kept after `after`, a `gap` first when `after` is
// older than what is kept, then live), chat sent as the member (`POST /kick/chat {content}` → `{sent, messageId}`,
// the Worker's refusals: 400, 401, 409 when not linked, 429 with Retry-After, 502), and `POST /validate` for
// the licence refresh after a 401. Every request and socket is recorded; sockets can be dropped, tokens
// refused, raw frames sent.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import type { KickEventsFrame, KickFeedEvent } from '../../../shared/protocol/kick.js';
import { KickChatRequest } from '../../../shared/protocol/kick-account.js';
import { readBody } from './listen.js';

export interface EventsConnection {
  ws: WebSocket;
  /** `after` as the daemon asked (undefined when absent). */
  after: string | undefined;
  authorization: string | undefined;
  open: boolean;
}

export interface FakeKickGatekeeper {
  /** The Gatekeeper's origin the daemon is given. */
  url: string;
  /** Whether a licence may use the Kick routes (default: any bearer token). A refused one gets 401. */
  accept: (token: string) => boolean;
  /** What `POST /validate` answers with (the licence refresh); undefined: 401. */
  validate: (() => { token: string; tier: 'free' | 'premium' }) | undefined;
  /** Whether the member linked Kick, and the channel. */
  connected: boolean;
  channel: string;
  /** Every request, in order (`GET /kick/status`, …; the events socket as `WS /kick/events?after=N`). */
  requests: string[];
  /** Authorization headers seen, in order. */
  authorizations: string[];
  connections: EventsConnection[];
  /** Chat the Gatekeeper sent to Kick for the member, in order, with Kick's message id. */
  chat: { content: string; messageId: string; authorization: string | undefined }[];
  /**
   * The next `POST /kick/chat` answers this instead (as the Worker does: `{error: {code, message}}`, and
   * `Retry-After` in seconds with a 429 when given).
   */
  failNextChat(failure: { status: number; code: string; message: string; retryAfterS?: number }): void;
  /** Events kept (after `forgetUpTo`, only the newer ones), oldest first. */
  kept(): { seq: number; at: number; event: KickFeedEvent }[];
  /**
   * Keeps an event under the next seq and sends it to every open socket; returns its seq. `at`: when it
   * happened (ms since the epoch, as the Gatekeeper sends it; default: now).
   */
  push(event: KickFeedEvent, at?: number): number;
  /** Forgets everything and numbers from 1 again (a channel whose store was reset). */
  reset(): void;
  /** Forgets every kept event up to `seq` (older than 24 h, or beyond 10,000). */
  forgetUpTo(seq: number): void;
  /** Sends a text frame as it is to every open socket. */
  sendRaw(text: string): void;
  /** Ends every open events socket abruptly. */
  drop(): void;
  /** Closes every open events socket with a code, as the Gatekeeper ends a feed (4401, 4403, 4409). */
  closeWith(code: number, reason?: string): void;
  /** Open events sockets. */
  open(): EventsConnection[];
  /** The member allows the link at Kick (what the URL of `POST /kick/connect` leads to). */
  approve(channel?: string): void;
  close(): Promise<void>;
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice(7) : undefined;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const error = (code: string, message: string) => ({ error: { code, message } });

export async function startFakeKickGatekeeper(): Promise<FakeKickGatekeeper> {
  let nextSeq = 1;
  let kept: { seq: number; at: number; event: KickFeedEvent }[] = [];
  const frameOf = (item: { seq: number; at: number; event: KickFeedEvent }) =>
    JSON.stringify({
      type: 'event',
      seq: item.seq,
      at: item.at,
      event: item.event,
    } satisfies KickEventsFrame);
  /** The oldest seq still kept once something was forgotten (everything after it is kept). */
  let forgotten = 0;
  const pending = new Set<string>();

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const token = bearer(req);
    fake.requests.push(`${req.method} ${url.pathname}`);
    if (req.headers.authorization) fake.authorizations.push(req.headers.authorization);
    // Only chat reads its body.
    if (!(req.method === 'POST' && url.pathname === '/kick/chat')) req.resume();
    if (req.method === 'POST' && url.pathname === '/validate') {
      const fresh = fake.validate?.();
      if (!fresh) return json(res, 401, error('invalid_token', 'the licence is not valid'));
      return json(res, 200, {
        token: fresh.token,
        tier: fresh.tier,
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      });
    }
    if (url.pathname === '/kick/authorize' && req.method === 'GET') {
      const state = url.searchParams.get('state') ?? '';
      if (!pending.delete(state)) return json(res, 400, error('invalid_state', 'unknown state'));
      fake.approve();
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return void res.end('Kick is connected. You can close this page.');
    }
    if (!url.pathname.startsWith('/kick/')) return json(res, 404, error('not_found', 'no such route'));
    if (!token || !fake.accept(token))
      return json(res, 401, error('invalid_token', 'the licence is not valid'));
    if (url.pathname === '/kick/status' && req.method === 'GET')
      return json(
        res,
        200,
        fake.connected ? { connected: true, channel: fake.channel } : { connected: false },
      );
    if (url.pathname === '/kick/connect' && req.method === 'POST') {
      const state = randomUUID();
      pending.add(state);
      return json(res, 200, { url: `${fake.url}/kick/authorize?state=${state}` });
    }
    if (url.pathname === '/kick/chat' && req.method === 'POST') return void chat(req, res);
    if (url.pathname === '/kick/connect' && req.method === 'DELETE') {
      fake.connected = false;
      for (const c of fake.open()) c.ws.close(1000, 'Kick disconnected');
      res.writeHead(204);
      return void res.end();
    }
    json(res, 404, error('not_found', 'no such route'));
  });

  let chatFailure: { status: number; code: string; message: string; retryAfterS?: number } | undefined;
  /** As the Worker's route (workers/src/kick/routes.ts, chat.ts) answers. */
  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = parseJsonWith(KickChatRequest, await readBody(req));
    if (!body.ok)
      return json(
        res,
        400,
        error('bad_request', body.field ? body.error : `${body.error}; expected {"content": "<text>"}`),
      );
    if (!fake.connected)
      return json(
        res,
        409,
        error('conflict', 'Kick is not connected for this member: connect Kick first (POST /kick/connect)'),
      );
    const failure = chatFailure;
    chatFailure = undefined;
    if (failure) {
      const text = JSON.stringify(error(failure.code, failure.message));
      res.writeHead(failure.status, {
        'Content-Type': 'application/json',
        ...(failure.retryAfterS !== undefined ? { 'Retry-After': String(failure.retryAfterS) } : {}),
      });
      return void res.end(text);
    }
    const messageId = randomUUID();
    fake.chat.push({ content: body.value.content, messageId, authorization: req.headers.authorization });
    json(res, 200, { sent: true, messageId });
  }

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    fake.requests.push(`WS ${url.pathname}${url.search}`);
    if (req.headers.authorization) fake.authorizations.push(req.headers.authorization);
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (url.pathname !== '/kick/events') return refuse(404, 'Not Found');
    const token = bearer(req);
    if (!token || !fake.accept(token)) return refuse(401, 'Unauthorized');
    if (!fake.connected) return refuse(404, 'Not Found');
    const afterText = url.searchParams.get('after') ?? undefined;
    wss.handleUpgrade(req, socket, head, (ws) => {
      const connection: EventsConnection = {
        ws,
        after: afterText,
        authorization: req.headers.authorization,
        open: true,
      };
      fake.connections.push(connection);
      ws.on('close', () => {
        connection.open = false;
      });
      ws.on('error', () => {});
      if (afterText === undefined) return;
      const after = Number(afterText);
      const oldest = kept[0]?.seq ?? nextSeq;
      // Events the daemon has not had are no longer all kept, or its `after` is beyond every seq given
      // (numbers of another store): a gap first.
      const beyond = after > nextSeq - 1;
      if ((forgotten > 0 && after < oldest - 1) || beyond)
        ws.send(JSON.stringify({ type: 'gap', from: oldest } satisfies KickEventsFrame));
      // Beyond every seq given: everything kept follows the gap.
      for (const item of kept) if (beyond || item.seq > after) ws.send(frameOf(item));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const fake: FakeKickGatekeeper = {
    url: `http://127.0.0.1:${port}`,
    accept: () => true,
    validate: undefined,
    connected: false,
    channel: 'streamer',
    requests: [],
    authorizations: [],
    connections: [],
    chat: [],
    failNextChat(failure) {
      chatFailure = failure;
    },
    kept: () => [...kept],
    push(event, at = Date.now()) {
      const seq = nextSeq++;
      const item = { seq, at, event };
      kept.push(item);
      const text = frameOf(item);
      for (const c of fake.open()) c.ws.send(text);
      return seq;
    },
    reset() {
      kept = [];
      nextSeq = 1;
      forgotten = 0;
    },
    forgetUpTo(seq) {
      kept = kept.filter((item) => item.seq > seq);
      forgotten = Math.max(forgotten, seq);
    },
    sendRaw(text) {
      for (const c of fake.open()) c.ws.send(text);
    },
    drop() {
      for (const c of fake.open()) c.ws.terminate();
    },
    closeWith(code, reason = '') {
      for (const c of fake.open()) c.ws.close(code, reason);
    },
    open: () => fake.connections.filter((c) => c.open),
    approve(channel) {
      if (channel) fake.channel = channel;
      fake.connected = true;
    },
    async close() {
      for (const c of fake.connections) c.ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
