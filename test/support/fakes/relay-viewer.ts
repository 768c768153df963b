// A stand-in for the Gatekeeper's viewer side of the overlay relay, on 127.0.0.1: serves the compiled page
// (dist/page) at /v/<subdomain>/<overlayId> with the viewer globals injected, its files at /overlay-assets/*,
// and speaks the viewer protocol on /v/<subdomain>/<overlayId>/ws (init reply, replay with `resumed`,
// live messages, pong). A test can drop every socket, refuse upgrades with 503, and read every frame sent.
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, normalize } from 'node:path';
import * as v from 'valibot';
import { type WebSocket, WebSocketServer } from 'ws';
import { PAGE_DIST_DIR } from '../../../daemon/src/package-root.js';
import {
  RELAY_CLOSE,
  RELAY_LIMITS,
  VIEWER_PING,
  VIEWER_PONG,
  ViewerInit,
} from '../../../shared/protocol/relay.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

type Numbered = { type: string; seq?: number; replayed?: true } & Record<string, unknown>;

export interface FakeRelayViewer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The viewer page: /v/<subdomain>/<overlayId>. */
  pagePath: string;
  overlayId: string;
  /** Every text frame a viewer sent, in order, across every socket. */
  frames: string[];
  /** Frames the protocol does not allow (each closed its socket with 1008). */
  violations: string[];
  /** WebSocket upgrade attempts, refused ones included. */
  upgrades: number;
  /** Viewer sockets open now. */
  viewers(): number;
  /** The `init` every (re)connecting viewer gets. */
  setInit(init: Numbered): void;
  /** A live message: kept for replays and sent to every viewer past its init. */
  publish(message: Numbered): void;
  /** Cuts every viewer socket without a close frame, as a lost connection does. */
  dropAll(): void;
  /** Closes every viewer socket with 4403, as the relay does when the overlay is unpublished. */
  unpublish(): void;
  /** While true, upgrades are answered 503 (a full relay). */
  refuse: boolean;
  close(): Promise<void>;
}

export async function startFakeRelayViewer(options: {
  overlayId: string;
  subdomain?: string;
  init: Numbered;
}): Promise<FakeRelayViewer> {
  const { overlayId } = options;
  const pagePath = `/v/${options.subdomain ?? 'o-test'}/${overlayId}`;
  const socketPath = `${pagePath}/ws`;
  let init = options.init;
  const buffer: Numbered[] = [];
  const live = new Set<WebSocket>();

  const serveFile = async (res: ServerResponse, file: string) => {
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  };

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === pagePath) {
      const html = await readFile(join(PAGE_DIST_DIR, 'index.html'), 'utf8');
      const globals =
        '<script>' +
        `window.__APP_OVERLAY_ID__=${JSON.stringify(overlayId)};` +
        `window.__APP_RELAY__=${JSON.stringify(socketPath)};` +
        '</script>';
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(html.replace(/<head[^>]*>/i, (head) => head + globals));
      return;
    }
    if (path.startsWith('/overlay-assets/')) {
      const rel = normalize(decodeURIComponent(path.slice('/overlay-assets/'.length)));
      if (rel.startsWith('..')) return void res.writeHead(404).end();
      return serveFile(res, join(PAGE_DIST_DIR, rel));
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'Not found' } }));
  };

  const server = createServer((req, res) => {
    handler(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const relay: FakeRelayViewer = {
    url: '',
    pagePath,
    overlayId,
    frames: [],
    violations: [],
    upgrades: 0,
    refuse: false,
    viewers: () => live.size,
    setInit(next) {
      init = next;
    },
    publish(message) {
      buffer.push(message);
      for (const socket of live) socket.send(JSON.stringify(message));
    },
    dropAll() {
      for (const socket of live) socket.terminate();
      live.clear();
    },
    unpublish() {
      for (const socket of live) socket.close(RELAY_CLOSE.notPublished, 'not published');
      live.clear();
    },
    close: async () => {
      for (const socket of wss.clients) socket.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    relay.upgrades++;
    if (new URL(req.url ?? '/', 'http://x').pathname !== socketPath) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    if (relay.refuse) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws));
  });

  const accept = (ws: WebSocket) => {
    let greeted = false;
    const refuse = (frame: string) => {
      relay.violations.push(frame);
      live.delete(ws);
      ws.close(RELAY_CLOSE.policy, 'viewer frame not allowed');
    };
    ws.on('close', () => live.delete(ws));
    ws.on('message', (data, isBinary) => {
      const frame = isBinary ? `<binary ${String(data)}>` : String(data);
      relay.frames.push(frame);
      if (isBinary || Buffer.byteLength(frame) > RELAY_LIMITS.viewerFrameBytes) return refuse(frame);
      if (greeted) {
        if (frame === VIEWER_PING) ws.send(VIEWER_PONG);
        else refuse(frame);
        return;
      }
      let parsed: v.SafeParseResult<typeof ViewerInit>;
      try {
        parsed = v.safeParse(ViewerInit, JSON.parse(frame));
      } catch {
        return refuse(frame);
      }
      if (!parsed.success || parsed.output.overlayId !== overlayId) return refuse(frame);
      greeted = true;
      ws.send(JSON.stringify(init));
      const from = parsed.output.resumeFrom;
      if (from !== undefined) {
        const missed = buffer.filter((m) => m.seq !== undefined && m.seq > from);
        for (const m of missed) ws.send(JSON.stringify({ ...m, replayed: true }));
        const oldest = buffer.find((m) => m.seq !== undefined)?.seq;
        const to = missed.at(-1)?.seq ?? from;
        ws.send(
          JSON.stringify({
            type: 'resumed',
            from,
            to,
            replayed: missed.length,
            gap: oldest !== undefined && oldest > from + 1,
          }),
        );
      }
      live.add(ws);
    });
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return relay;
}
