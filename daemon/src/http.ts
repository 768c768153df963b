// The daemon's HTTP routes on polka; WebSocket upgrades are handled beside it in the same server.
import { randomBytes } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import polka from 'polka';
import sirv from 'sirv';
import { ERROR_STATUS, type ErrorCode, errorBody, parseWith, Uuid } from '../../shared/protocol.js';
import { PAGE_DIST_DIR } from './package-root.js';
import { compiledOverlayPage, injectGlobals } from './page.js';
import type { OverlayRegistry } from './registry.js';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(data),
  });
  res.end(data);
}

export function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  sendJson(res, ERROR_STATUS[code], errorBody(code, message));
}

export interface HttpContext {
  server: Server;
  registry: OverlayRegistry;
  /** The port actually bound (known after listen; 0 before). */
  port: () => number;
}

export function createHttpApp(ctx: HttpContext) {
  const app = polka({
    server: ctx.server,
    onNoMatch: (_req, res) => sendError(res, 'not_found', 'No such route'),
    onError: (err, _req, res) => {
      console.error('[http] unhandled error:', err);
      if (!res.headersSent) sendError(res, 'internal', 'Internal error');
      else res.end();
    },
  });

  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });

  app.get('/status', (_req, res) => sendJson(res, 200, { running: true, port: ctx.port() }));

  app.get('/overlay/:overlayId', (req, res) => {
    const id = req.params.overlayId ?? '';
    if (!parseWith(Uuid, id).ok || !ctx.registry.get(id)) {
      return sendError(res, 'not_found', 'No overlay has that id');
    }
    const token = randomBytes(24).toString('base64url');
    const html = injectGlobals(compiledOverlayPage(), { overlayId: id, port: ctx.port(), token });
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
    });
    res.end(html);
  });

  app.use('/overlay-assets', sirv(PAGE_DIST_DIR, { dev: false, etag: true, gzip: false }));

  return app;
}
