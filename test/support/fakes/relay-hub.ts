// A stand-in for the Gatekeeper's overlay relay on 127.0.0.1:0, as the daemon's publisher sees it: the
// publisher socket (`/relay/publish/<overlayId>`, bearer licence, `hello`, `viewers`, close codes) and the
// media routes (`HEAD`/`PUT /relay/media/<sha256>.<ext>`). It records every frame and request.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { decodeJwtPayload } from '../../../daemon/src/licence/jwt-payload.js';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { PublisherToHub, RELAY_MEDIA_NAME } from '../../../shared/protocol/relay.js';

type Frame = PublisherToHub;

export interface PublisherConnection {
  overlayId: string;
  ws: WebSocket;
  authorization: string | undefined;
  /** Frames this connection sent, parsed (a frame that does not parse is recorded as `{type: 'invalid'}`). */
  frames: (Frame | { type: 'invalid'; text: string })[];
  open: boolean;
  closed: Promise<{ code: number; reason: string }>;
}

export interface FakeRelayHub {
  /** The Gatekeeper origin the daemon is given. */
  url: string;
  /** Every publisher socket accepted, oldest first. */
  connections: PublisherConnection[];
  /** Upgrades refused, and why. */
  refused: { overlayId: string; status: number }[];
  /** What `hello.lastSeq` says for an overlay: `track` (the highest seq received; null before a snapshot), or a fixed value. */
  lastSeq: Map<string, number | null | 'track'>;
  /** The viewer count sent right after `hello`. */
  viewers: Map<string, number>;
  /** false: a new socket gets no `hello` (a relay that never answers). */
  sendHello: boolean;
  /** Whether a token may publish (default: a JWT whose tier is premium). */
  accept: (token: string) => boolean;
  /** Media uploaded, by relay name. */
  media: Map<string, Buffer>;
  mediaRequests: { method: string; name: string }[];
  /** Open publisher sockets of an overlay. */
  open(overlayId: string): PublisherConnection[];
  /** The newest connection of an overlay (open or not). */
  latest(overlayId: string): PublisherConnection | undefined;
  /** Every frame of every connection of an overlay, in order. */
  frames(overlayId: string): PublisherConnection['frames'];
  /** Waits until the overlay has an open socket that got past `hello` with a snapshot; returns it. */
  published(overlayId: string, timeoutMs?: number): Promise<PublisherConnection>;
  /** Sends `{"type":"viewers","count":n}` to the overlay's open sockets. */
  sendViewers(overlayId: string, count: number): void;
  /** Closes the overlay's open sockets with this code. */
  closeWith(overlayId: string, code: number, reason?: string): Promise<void>;
  close(): Promise<void>;
}

const PUBLISH = /^\/relay\/publish\/([0-9a-f-]{36})$/;
const MEDIA = /^\/relay\/media\/([^/]+)$/;

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? header.slice(7) : undefined;
}

export async function startFakeRelayHub(): Promise<FakeRelayHub> {
  const wss = new WebSocketServer({ noServer: true });
  const highest = new Map<string, number | null>();

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const media = MEDIA.exec(url.pathname);
    if (!media?.[1]) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      return res.end('{"error":{"code":"not_found","message":"No such route"}}');
    }
    const name = media[1];
    fake.mediaRequests.push({ method: req.method ?? '', name });
    const token = bearer(req);
    if (!token || !fake.accept(token)) {
      res.writeHead(403, { 'Content-Type': 'application/json' });
      return res.end('{"error":{"code":"premium_required","message":"Premium only"}}');
    }
    if (!RELAY_MEDIA_NAME.test(name)) {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      return res.end('{"error":{"code":"validation_failed","message":"bad name"}}');
    }
    if (req.method === 'HEAD') {
      res.writeHead(fake.media.has(name) ? 200 : 404);
      return res.end();
    }
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      if (`${createHash('sha256').update(body).digest('hex')}.${name.split('.')[1]}` !== name) {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        return res.end('{"error":{"code":"validation_failed","message":"hash mismatch"}}');
      }
      const had = fake.media.has(name);
      fake.media.set(name, body);
      res.writeHead(had ? 200 : 201, { 'Content-Type': 'application/json' });
      return res.end('{}');
    }
    res.writeHead(405);
    res.end();
  });

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const overlayId = PUBLISH.exec(url.pathname)?.[1];
    const token = bearer(req);
    const refuse = (status: number, code: string) => {
      fake.refused.push({ overlayId: overlayId ?? '', status });
      const body = JSON.stringify({ error: { code, message: code } });
      socket.end(
        `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    if (!overlayId) return refuse(404, 'not_found');
    if (!token) return refuse(401, 'unauthenticated');
    if (!fake.accept(token)) return refuse(403, 'premium_required');
    wss.handleUpgrade(req, socket, head, (ws) => {
      let resolveClosed: (info: { code: number; reason: string }) => void = () => {};
      const connection: PublisherConnection = {
        overlayId,
        ws,
        authorization: req.headers.authorization,
        frames: [],
        open: true,
        closed: new Promise((resolve) => {
          resolveClosed = resolve;
        }),
      };
      fake.connections.push(connection);
      ws.on('message', (data) => {
        const text = String(data);
        const parsed = parseJsonWith(PublisherToHub, text);
        if (!parsed.ok) return void connection.frames.push({ type: 'invalid', text });
        const frame = parsed.value;
        connection.frames.push(frame);
        if (frame.type === 'snapshot') highest.set(overlayId, highest.get(overlayId) ?? null);
        if (frame.type === 'message' && frame.msg.type !== 'overlay-update' && frame.msg.seq !== undefined)
          highest.set(overlayId, Math.max(highest.get(overlayId) ?? 0, frame.msg.seq));
        if (frame.type === 'unpublish') highest.delete(overlayId);
      });
      ws.on('close', (code, reason) => {
        connection.open = false;
        resolveClosed({ code, reason: reason.toString() });
      });
      if (!fake.sendHello) return;
      const mode = fake.lastSeq.get(overlayId) ?? 'track';
      const lastSeq = mode === 'track' ? (highest.get(overlayId) ?? null) : mode;
      ws.send(JSON.stringify({ type: 'hello', lastSeq, viewerUrl: `${fake.url}/v/o-fake/${overlayId}` }));
      ws.send(JSON.stringify({ type: 'viewers', count: fake.viewers.get(overlayId) ?? 0 }));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: FakeRelayHub = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: [],
    refused: [],
    lastSeq: new Map(),
    viewers: new Map(),
    sendHello: true,
    accept: (token) => decodeJwtPayload(token)?.tier === 'premium',
    media: new Map(),
    mediaRequests: [],
    open: (overlayId) => fake.connections.filter((c) => c.overlayId === overlayId && c.open),
    latest: (overlayId) => fake.connections.filter((c) => c.overlayId === overlayId).at(-1),
    frames: (overlayId) => fake.connections.filter((c) => c.overlayId === overlayId).flatMap((c) => c.frames),
    async published(overlayId, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = fake.open(overlayId).find((c) => c.frames.some((f) => f.type === 'snapshot'));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`overlay ${overlayId} was not published in time`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    sendViewers(overlayId, count) {
      for (const c of fake.open(overlayId)) c.ws.send(JSON.stringify({ type: 'viewers', count }));
    },
    async closeWith(overlayId, code, reason = '') {
      const open = fake.open(overlayId);
      for (const c of open) c.ws.close(code, reason);
      await Promise.all(open.map((c) => c.closed));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of fake.connections) c.ws.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return fake;
}
