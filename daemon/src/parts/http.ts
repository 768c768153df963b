// The HTTP part: one server on one port for the overlay pages, the dashboard, the control API and
// the WebSocket upgrade, behind the front door; in dev mode the pages come from Vite with hot reload.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ObsConnection } from '../actions/obs.js';
import type { ActionRunner } from '../actions/runner.js';
import type { Speech } from '../actions/speech.js';
import { AuditLog } from '../devices/audit.js';
import { PairingService } from '../devices/pairing.js';
import { DeviceStore } from '../devices/store.js';
import { createHttpApp, type HttpAppContext, type PageRenderer, requestListener } from '../http/app.js';
import type { ConnectionLimiter } from '../http/connection-limit.js';
import type { CreationLimits } from '../http/control-api.js';
import type { DevDashboard, DevPage } from '../http/dev-page.js';
import { DeviceAccess } from '../http/device-access.js';
import { createControlGuard, createFrontDoor, createUpgradeListener } from '../http/front-door.js';
import { compiledPageRenderer } from '../http/page.js';
import type { RelayControl } from '../http/relay-routes.js';
import { obsStatusInWords, StatusParts } from '../http/status-parts.js';
import type { Ingest } from '../ingest/ingest.js';
import type { Journal } from '../journal/journal.js';
import type { KickEdgeFeed } from '../sources/kick/edge-events.js';
import { TwitchSignInService } from '../sources/twitch/sign-in.js';
import type { DataDir } from '../store/data-dir.js';
import type { OverlayStore } from '../store/overlay-store.js';
import type { RulesStore } from '../store/rules-store.js';
import type { SettingsStore } from '../store/settings-store.js';
import type { Hub } from '../ws/hub.js';
import type { PageTokens } from '../ws/page-tokens.js';
import { startPart } from './disposal-stack.js';
import type { PlatformAccess } from './sources.js';

export interface HttpOptions {
  port: number;
  host: string;
  /** Serve the page from the Vite dev server with hot reload. */
  dev?: boolean;
  /** The tunnel's public hostname: accepted as Host and Origin, and its requests read CF-Connecting-IP. */
  tunnelHost?: string;
  /** Tier limits on creating overlays and rules (the licence manager). */
  limits?: CreationLimits;
  /** Clock of the pairing codes and their limits (tests use a fake one). */
  now?: () => number;
}

export interface HttpPart {
  /** devices.json: the paired devices. */
  devices: DeviceStore;
  /** What paired devices changed, in events.db (GET /api/audit). */
  audit: AuditLog;
  /** Devices' sessions through the tunnel (its `audit` is where their changes are journaled). */
  deviceAccess: DeviceAccess;
  /** The Twitch sign-in the dashboard drives. */
  twitchSignIn: TwitchSignInService;
  port: number;
  /** Base URL for local clients, e.g. http://127.0.0.1:7890 */
  url: string;
  /** Parts of GET /status; `obs` is there from the start. */
  statusFields: StatusParts;
  /** The tunnel hostname in force. */
  state: { tunnelHost: string | undefined };
  /** Stops accepting connections (the server part waits for those left) and stops the dev servers. */
  close(): Promise<void>;
}

export interface ServerPart {
  server: Server;
  /** Closes every connection left (the WebSocket part said goodbye to its clients before) and waits for them. */
  close(): Promise<void>;
}

/**
 * The server is made first and closed last of the HTTP side: the connections it waits for include the
 * WebSocket ones, which the hub closes in between.
 */
export function openServer(): ServerPart {
  const server = createServer();
  // Idle keep-alive sockets are not counted against the per-IP limit; do not let them linger.
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  let listened = false;
  server.once('listening', () => {
    listened = true;
  });
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  return {
    server,
    async close() {
      if (!listened) return;
      if (server.listening) server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** What the HTTP part serves from: the parts started before it. */
export interface HttpContext {
  dataDir: DataDir;
  keys: { current: string };
  overlays: OverlayStore;
  rules: RulesStore;
  settings: SettingsStore;
  journal: Journal;
  server: Server;
  hub: Hub;
  tokens: PageTokens;
  limiter: ConnectionLimiter;
  obs: ObsConnection;
  speech: Speech;
  actions: ActionRunner;
  ingest: Ingest;
  access: PlatformAccess;
  /** Kick's events feed, for the dashboard's Connect Kick. */
  kickEdge?: KickEdgeFeed | undefined;
  /** The relay's publishers (started after the server: asked for when a request comes). */
  relay?: RelayControl | undefined;
  log: (line: string) => void;
}

/** The Vite dev servers of `--dev` (the page and the dashboard with hot reload), once the server listens. */
class DevServers {
  page: DevPage | undefined;
  dashboard: DevDashboard | undefined;

  /** The page through Vite; until it runs, a render fails. */
  renderer(): PageRenderer {
    return {
      render: (id, token) =>
        this.page ? this.page.render(id, token) : Promise.reject(new Error('dev server not ready')),
    };
  }

  middlewares(): Pick<HttpAppContext, 'devMiddleware' | 'dashboardDevMiddleware'> {
    return {
      devMiddleware: (req, res, next) => (this.page ? this.page.middleware(req, res, next) : next()),
      dashboardDevMiddleware: (req, res, next) =>
        this.dashboard ? this.dashboard.middleware(req, res, next) : next(),
    };
  }

  async start(server: Server, port: () => number): Promise<void> {
    const { startDevDashboard, startDevPage } = await import('../http/dev-page.js');
    // Both are kept as they come, so `close` stops the one that started when the other fails.
    const [pageStart, dashboardStart] = await Promise.allSettled([
      startDevPage(server, port),
      startDevDashboard(server),
    ]);
    if (pageStart.status === 'fulfilled') this.page = pageStart.value;
    if (dashboardStart.status === 'fulfilled') this.dashboard = dashboardStart.value;
    if (pageStart.status === 'rejected') throw pageStart.reason;
    if (dashboardStart.status === 'rejected') throw dashboardStart.reason;
  }

  async close(): Promise<void> {
    await this.page?.close();
    await this.dashboard?.close();
  }
}

/** The paired devices: their store, their sessions through the tunnel, the audit of what they changed. */
async function openDevices(
  options: HttpOptions,
  ctx: Pick<HttpContext, 'dataDir' | 'keys' | 'journal' | 'log'>,
): Promise<{ devices: DeviceStore; deviceAccess: DeviceAccess; audit: AuditLog }> {
  const devices = await DeviceStore.open(ctx.dataDir.root, {
    ...(options.now ? { now: options.now } : {}),
    adminKey: () => ctx.keys.current,
  });
  const deviceAccess = new DeviceAccess(devices, ctx.log);
  const audit = new AuditLog(ctx.journal.database, { log: ctx.log, now: options.now });
  deviceAccess.audit = audit;
  return { devices, deviceAccess, audit };
}

/** Requests and upgrades go through the front door; a malformed request gets a bare 400. */
function serve(
  server: Server,
  app: ReturnType<typeof createHttpApp>,
  frontDoor: ReturnType<typeof createFrontDoor>,
  frontDoorOptions: Parameters<typeof createUpgradeListener>[0],
): void {
  server.on('request', requestListener(app, frontDoor));
  server.on('upgrade', createUpgradeListener(frontDoorOptions));
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    socket.end(
      'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\nContent-Length: 0\r\n\r\n',
    );
  });
}

/** The base URL local clients use: a wildcard address is reached on 127.0.0.1. */
function localUrl(host: string, port: number): string {
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  return `http://${hostForUrl === '0.0.0.0' || hostForUrl === '[::]' ? '127.0.0.1' : hostForUrl}:${port}`;
}

export function startHttp(options: HttpOptions, ctx: HttpContext): Promise<HttpPart> {
  const { dataDir, keys, server, hub, obs, access, log } = ctx;
  return startPart(log, async (stack) => {
    const twitchSignIn = new TwitchSignInService({
      authUrl: access.urls.twitchAuth,
      dataDir: dataDir.root,
      clientId: access.twitchClientId,
      configArrival: access.configArrival,
      credentials: access.report,
      log,
    });
    stack.push(() => twitchSignIn.close(), 'the Twitch sign-in');

    let boundPort = 0;
    const statusFields = new StatusParts();
    statusFields.set('obs', () => obsStatusInWords(obs.status()));
    const state = { tunnelHost: options.tunnelHost };
    const dev = options.dev ? new DevServers() : undefined;
    const { devices, deviceAccess, audit } = await openDevices(options, ctx);
    const frontDoorOptions = {
      limiter: ctx.limiter,
      tunnelHost: () => state.tunnelHost,
      get adminKey() {
        return keys.current;
      },
      hub,
      dev: options.dev === true,
      devices: deviceAccess,
    };
    const frontDoor = createFrontDoor(frontDoorOptions);
    const pairing = new PairingService(
      devices,
      { now: options.now ?? Date.now },
      frontDoorOptions.tunnelHost,
    );
    const app = createHttpApp({
      twitchSignIn,
      kickEdge: ctx.kickEdge,
      relay: ctx.relay,
      actions: ctx.actions,
      obs,
      speech: ctx.speech,
      settings: ctx.settings,
      journal: ctx.journal,
      dataDir,
      server,
      frontDoor,
      controlGuard: createControlGuard(frontDoorOptions),
      overlays: ctx.overlays,
      rules: ctx.rules,
      hub,
      tokens: ctx.tokens,
      page: dev ? dev.renderer() : compiledPageRenderer(() => boundPort),
      ingest: ctx.ingest,
      mediaDir: dataDir.mediaDir,
      tunnelHost: frontDoorOptions.tunnelHost,
      pairing: { devices, pairing, tunnelHost: frontDoorOptions.tunnelHost },
      audit,
      deviceAccess,
      log,
      limits: options.limits,
      ...(dev ? dev.middlewares() : {}),
      status: () => ({ port: boundPort, ...statusFields.read() }),
    });
    serve(server, app, frontDoor, frontDoorOptions);

    await listen(server, options.port, options.host);
    stack.push(async () => {
      // Shutdown begins here: no new connection; the WebSocket and server parts close those left.
      server.close();
      server.closeIdleConnections();
      await dev?.close();
    }, 'the HTTP server');
    boundPort = (server.address() as AddressInfo).port;
    await dev?.start(server, () => boundPort);
    const url = localUrl(options.host, boundPort);
    return { twitchSignIn, devices, audit, deviceAccess, port: boundPort, url, statusFields, state };
  });
}
