// The daemon's HTTP routes on polka: status, overlay pages, media, compiled page assets and the control API.
import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import polka, { type Polka, type Request } from 'polka';
import sirv from 'sirv';
import { type DaemonStatus, type DeviceSession, parseWith, Uuid } from '../../../shared/protocol/index.js';
import { TTS_FILE } from '../actions/speech.js';
import { MediaFiles } from '../media/media.js';
import { PAGE_DIST_DIR } from '../package-root.js';
import type { OverlayStore } from '../store/overlay-store.js';
import type { PageTokens } from '../ws/page-tokens.js';
import { type ControlApiContext, mountControlApi } from './control-api.js';
import { isLocalDashboardClient, mountDashboard } from './dashboard.js';
import { mountFavicon } from './favicon.js';
import { homePageHandler } from './home-page.js';
import { classifyHost, isLocalControlClient } from './policy.js';
import { sendError, sendJson } from './responses.js';

/** Produces the overlay page's HTML with the globals injected (compiled page, or Vite in --dev). */
export interface PageRenderer {
  /** The compiled page renders at once; the dev page asks Vite (a promise). */
  render(overlayId: string, token: string): string | Promise<string>;
}

/** What the routes serve from. */
export interface HttpAppContext extends ControlApiContext {
  overlays: OverlayStore;
  tokens: PageTokens;
  page: PageRenderer;
  /** Extra handlers tried before the routes (the Vite dev server's middlewares in --dev). */
  devMiddleware?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  /** In --dev, the dashboard from Vite's dev server instead of dist/dashboard. */
  dashboardDevMiddleware?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  /** The port and the parts of GET /status in force now (more are added while running, e.g. the tunnel). */
  status: () => Omit<DaemonStatus, 'running'>;
  /** The tunnel hostname in force, if any: its requests get the public view of /status. */
  tunnelHost?: () => string | undefined;
  log: (line: string) => void;
  /** Per-request checks that run before any route (front-door.ts). */
  frontDoor: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  server: Server;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

/**
 * The methods the router answers on `path`, asked of the router itself (decisions §1: a 405 carries
 * `Allow`). No route answers TRACE, so what matches it are the middlewares every method meets; a
 * method with more handlers than that has a route. HEAD is answered wherever GET is.
 */
function allowedMethods(app: Polka, path: string): string[] {
  const middlewares = app.find('TRACE', path).handlers.length;
  return METHODS.filter((method) => app.find(method, path).handlers.length > middlewares);
}

/**
 * `GET /overlay/<uuid>`, the route every overlay load takes, answered without the router's walk over all
 * the routes (no middleware is mounted on it: the router would run this same handler and nothing else).
 * Any other form of the target (a query, a trailing slash, escapes, HEAD) goes through the router.
 */
const OVERLAY_PAGE_TARGET = /^\/overlay\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const pageRoutes = new WeakMap<Polka, (res: ServerResponse, rawId: string) => void>();

/** The server's `request` listener: every request meets the front door first, whatever its target. */
export function requestListener(app: Polka, frontDoor: HttpAppContext['frontDoor']) {
  const page = pageRoutes.get(app);
  return (req: IncomingMessage, res: ServerResponse) =>
    frontDoor(req, res, () => {
      const id = req.method === 'GET' && page ? OVERLAY_PAGE_TARGET.exec(req.url ?? '')?.[1] : undefined;
      if (id !== undefined && page) return page(res, id);
      void app.handler(req as Request, res, undefined as never);
    });
}

/** An error no handler caught: logged, and a 500 when the answer has not begun (else the socket goes). */
function unhandled(ctx: Pick<HttpAppContext, 'log'>, err: unknown, res: ServerResponse): void {
  ctx.log(`[http] unhandled error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  if (!res.headersSent) sendError(res, 'internal', 'Internal error');
  else res.destroy();
}

export function createHttpApp(ctx: HttpAppContext): Polka {
  const app = polka({
    server: ctx.server,
    onNoMatch: (req, res) => {
      const methods = allowedMethods(app, req.path);
      if (methods.length > 0 && !methods.includes(req.method)) {
        return sendError(res, 'method_not_allowed', `${req.method} is not allowed here`, {
          Allow: methods.join(', '),
        });
      }
      sendError(res, 'not_found', 'No such route');
    },
    onError: (err, _req, res) => unhandled(ctx, err, res),
  });

  // The front door wraps the whole router (see `requestListener`), not `app.use`: polka runs `use`
  // middleware only for targets that start with "/", and `GET http://evil.com/status` or `OPTIONS *`
  // would reach onNoMatch without it (every response carries nosniff).

  if (ctx.devMiddleware) {
    const dev = ctx.devMiddleware;
    app.use((req, res, next) =>
      req.path.startsWith('/overlay-dev/') ? dev(req, res, () => void next()) : next(),
    );
  }

  mountStatus(app, ctx);
  mountPageRoutes(app, ctx);
  mountControlApi(app, ctx);
  mountLocalViews(app, ctx);
  return app;
}

/** The home page, the favicon and GET /status (the details for a local control client only). */
function mountStatus(app: Polka, ctx: HttpAppContext): void {
  app.get(
    '/',
    homePageHandler({
      overlays: () => ctx.overlays.list(),
      ...(ctx.tunnelHost ? { tunnelHost: ctx.tunnelHost } : {}),
    }),
  );

  mountFavicon(app);

  app.get('/status', (req, res) => {
    // The details (licence, tunnel, TikTok state) are the streamer's business: a request that is not
    // a local control client (e.g. through the tunnel) sees only the interface's {running, port}.
    const local = isLocalControlClient(req, classifyHost(req.headers.host, ctx.tunnelHost?.()));
    const status: DaemonStatus = local ? localStatus(ctx) : { running: true, port: ctx.status().port };
    sendJson(res, 200, status);
  });
}

/** What GET /status says to a local control client: every part in force now. */
function localStatus(ctx: HttpAppContext): DaemonStatus {
  const { port, ...details } = ctx.status();
  return { running: true, port, ...details };
}

/** The overlay pages, their media, the speech the daemon rendered and the compiled page's assets. */
function mountPageRoutes(app: Polka, ctx: HttpAppContext): void {
  const sendPage = (res: ServerResponse, html: string) => {
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'Content-Length': Buffer.byteLength(html),
    });
    res.end(html);
  };
  const servePage = (res: ServerResponse, rawId: string) => {
    const id = rawId.toLowerCase();
    if (!parseWith(Uuid, id).ok || !ctx.overlays.get(id)) {
      return sendError(res, 'not_found', 'No overlay has that id');
    }
    // interface §5.2: every load gets its own token, usable once, for this overlay only.
    const html = ctx.page.render(id, ctx.tokens.issue(id));
    // The compiled page is answered in the same turn; only the dev page waits for Vite.
    if (typeof html === 'string') return sendPage(res, html);
    return html.then((text) => sendPage(res, text));
  };
  app.get('/overlay/:overlayId', (req, res) => servePage(res, req.params.overlayId ?? ''));
  // The same handler, for requestListener's way round the router; its errors end where the router's would.
  pageRoutes.set(app, (res, rawId) => {
    try {
      servePage(res, rawId)?.catch((err: unknown) => unhandled(ctx, err, res));
    } catch (err) {
      unhandled(ctx, err, res);
    }
  });

  // Media: traversal checks first, on the raw path and then the decoded one (interface §5.3), then the file.
  const media = new MediaFiles(ctx.mediaDir);
  app.get('/assets/*', async (req, res) => {
    const rawPath = (req.originalUrl.split('?')[0] ?? '').slice('/assets/'.length);
    await media.serve(req, res, rawPath, (status, reason) =>
      status === 403
        ? sendError(res, 'forbidden', `Invalid media path: ${reason}`)
        : sendError(res, 'not_found', 'No media file at that path'),
    );
  });

  // Speech the daemon rendered: only names of the cache's own form, nothing else.
  app.get('/tts/:file', (req, res) => {
    const name = req.params.file ?? '';
    if (!TTS_FILE.test(name)) return sendError(res, 'not_found', 'No speech file has that name');
    const path = ctx.speech.path(name);
    stat(path).then(
      (info) => {
        res.writeHead(200, {
          'Content-Type': 'audio/wav',
          'Content-Length': info.size,
          'Cache-Control': 'public, max-age=3600',
        });
        if (req.method === 'HEAD') return res.end();
        createReadStream(path)
          .on('error', () => res.destroy())
          .pipe(res);
      },
      () =>
        sendError(
          res,
          'not_found',
          'No speech file has that name (files are kept for an hour at most, fewer when the speech cache is full)',
        ),
    );
  });

  if (!ctx.devMiddleware) {
    if (existsSync(PAGE_DIST_DIR)) {
      // Vite names bundles by content hash, so they can be cached for good.
      app.use('/overlay-assets', sirv(PAGE_DIST_DIR, { etag: true, maxAge: 31_536_000, immutable: true }));
    } else {
      ctx.log(`[http] ${PAGE_DIST_DIR} is missing: run "npm run build" to serve the compiled overlay page`);
    }
  }
}

/** GET /api/status and /api/session (behind the control API's guard), and the dashboard. */
function mountLocalViews(app: Polka, ctx: HttpAppContext): void {
  // The local view for the admin key and paired devices (after the control API's guard, which lets only them in).
  app.get('/api/status', (_req, res) =>
    sendJson(res, 200, localStatus(ctx), { 'Cache-Control': 'no-store' }),
  );
  app.get('/api/session', (req, res) => {
    const device = ctx.deviceAccess?.deviceOf(req);
    const csrf = device && ctx.deviceAccess?.csrfOf(device);
    if (!device || !csrf) return sendError(res, 'not_found', 'The admin key has no device session');
    const session: DeviceSession = { deviceId: device.id, name: device.name, role: device.role, csrf };
    sendJson(res, 200, session, { 'Cache-Control': 'no-store' });
  });
  const deviceAccess = ctx.deviceAccess;
  mountDashboard(app, {
    log: ctx.log,
    // Locally by the admin key's policy; through the tunnel a device the front door let in.
    isLocal: (req) => isLocalDashboardClient(req) || deviceAccess?.deviceOf(req) !== undefined,
    ...(ctx.dashboardDevMiddleware ? { devMiddleware: ctx.dashboardDevMiddleware } : {}),
  });
}
