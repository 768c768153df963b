// Checks every request and upgrade before any route runs: per-IP slots, Host, Origin/CORS, nosniff, /api access.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Hub } from '../ws/hub.js';
import type { ConnectionLimiter } from './connection-limit.js';
import type { DeviceAccess } from './device-access.js';
import { bearerMatches, classifyHost, clientIp, isLocalControlClient, originAllowed } from './policy.js';
import { refuseUpgrade, sendError, sendNoContent } from './responses.js';
import { isDashboardPage, sendSignedOutPage } from './signed-out-page.js';

interface FrontDoorOptions {
  limiter: ConnectionLimiter;
  /** The tunnel's public hostname, when a tunnel is configured. */
  tunnelHost?: () => string | undefined;
  adminKey: string;
  hub: Hub;
  /** In --dev, Vite's own HMR socket shares the port: its upgrades are left to Vite's listener. */
  dev: boolean;
  /** Paired devices: through the tunnel, `/api/*` and `/dashboard` are theirs alone (decisions-3 §11). */
  devices?: DeviceAccess | undefined;
}

const RETRY_AFTER_SECONDS = '1';
const CORS_METHODS = 'GET, HEAD, POST, PUT, DELETE, OPTIONS';
const CORS_HEADERS = 'Authorization, Content-Type, If-Match';

/** The router matches paths case-insensitively (regexparam's `i` flag), so `/API/…` is the control API too. */
function isUnder(url: string | undefined, prefix: string): boolean {
  const path = (url ?? '').split('?', 1)[0]!.toLowerCase();
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The control API's own guard, mounted on the router's `/api` prefix so it matches exactly what the
 * routes match: only a local control client with the admin key, or a device the front door let in,
 * gets through (decisions §3, decisions-3 §11). The front door checks the same first; this is the
 * second lock on the same door.
 */
export function createControlGuard(options: Pick<FrontDoorOptions, 'tunnelHost' | 'adminKey' | 'devices'>) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const hostKind = classifyHost(req.headers.host, options.tunnelHost?.());
    if (hostKind === 'tunnel' && options.devices?.deviceOf(req)) return next();
    if (!isLocalControlClient(req, hostKind)) return sendError(res, 'not_found', 'No such route');
    if (!bearerMatches(req.headers.authorization, options.adminKey)) {
      return sendError(res, 'unauthenticated', 'Send Authorization: Bearer <contents of admin.key>', {
        'WWW-Authenticate': 'Bearer',
      });
    }
    next();
  };
}

/** The per-IP slot a keep-alive socket holds while any request on it from that IP is open. */
interface SocketSlot {
  ip: string;
  active: number;
}

/**
 * Takes the per-IP slot for one request, or returns false when the IP is at its limit. A socket holds
 * at most one slot for its client IP across its sequential requests: the next request on a keep-alive
 * connection can arrive before the previous response's `close`, and must not count as a second
 * connection (decisions §3 counts connections). The slot is released once no request on the socket is
 * open, so an idle keep-alive socket holds none. Through the tunnel one connector socket carries many
 * visitors (CF-Connecting-IP): a request from another IP than the socket's slot takes its own slot.
 */
function acquireSlot(
  limiter: ConnectionLimiter,
  slots: WeakMap<Socket, SocketSlot>,
  socket: Socket,
  ip: string,
  res: ServerResponse,
): boolean {
  const held = slots.get(socket);
  if (held && held.ip === ip) {
    held.active++;
    res.once('close', () => endOnSocket(limiter, slots, socket, held));
    return true;
  }
  if (!limiter.take(ip)) return false;
  if (held) {
    // Another visitor on a socket that holds another IP's slot (the tunnel): its slot lasts this request.
    res.once('close', () => limiter.give(ip));
    return true;
  }
  const slot: SocketSlot = { ip, active: 1 };
  slots.set(socket, slot);
  res.once('close', () => endOnSocket(limiter, slots, socket, slot));
  return true;
}

function endOnSocket(
  limiter: ConnectionLimiter,
  slots: WeakMap<Socket, SocketSlot>,
  socket: Socket,
  slot: SocketSlot,
): void {
  slot.active--;
  if (slot.active > 0) return;
  limiter.give(slot.ip);
  if (slots.get(socket) === slot) slots.delete(socket);
}

/** The first middleware of the app: runs for every request, before routing. */
export function createFrontDoor(options: FrontDoorOptions) {
  const slots = new WeakMap<Socket, SocketSlot>();
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    // decisions §3: on every response, errors included.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Vary', 'Origin');
    const tunnelHost = options.tunnelHost?.();
    const hostKind = classifyHost(req.headers.host, tunnelHost);

    // The per-IP limit counts this request until its response is finished or aborted (decisions §3).
    const ip = clientIp(req, hostKind);
    if (!acquireSlot(options.limiter, slots, req.socket, ip, res)) {
      return sendError(res, 'rate_limited', 'Too many open connections from this address', {
        'Retry-After': RETRY_AFTER_SECONDS,
        Connection: 'close',
      });
    }

    if (!hostKind) return sendError(res, 'forbidden', 'Host not allowed');
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!originAllowed(origin, tunnelHost))
        return sendError(res, 'forbidden', 'Cross-origin requests are limited to localhost');
      res.setHeader('Access-Control-Allow-Origin', origin);
    }
    const api = isUnder(req.url, '/api');
    // Through the tunnel the API and the dashboard are a paired device's alone, by its role; the admin
    // key is never accepted there (decisions-3 §11).
    if (hostKind === 'tunnel' && options.devices && (api || isUnder(req.url, '/dashboard'))) {
      const decision = options.devices.admit(req, res, ip, api);
      if (decision.ok) return next();
      const page = decision.signedOut && (req.method === 'GET' || req.method === 'HEAD');
      if (page && isDashboardPage(req.url)) return sendSignedOutPage(req, res);
      return sendError(res, decision.code, decision.message);
    }
    // Never answered through the tunnel or for another machine: as if it did not exist (decisions §3).
    if (api && !isLocalControlClient(req, hostKind)) return sendError(res, 'not_found', 'No such route');
    if (req.method === 'OPTIONS') {
      return sendNoContent(res, 204, {
        Allow: CORS_METHODS,
        ...(origin !== undefined
          ? {
              'Access-Control-Allow-Methods': CORS_METHODS,
              'Access-Control-Allow-Headers': CORS_HEADERS,
              'Access-Control-Max-Age': '600',
            }
          : {}),
      });
    }
    if (api && !bearerMatches(req.headers.authorization, options.adminKey)) {
      return sendError(res, 'unauthenticated', 'Send Authorization: Bearer <contents of admin.key>', {
        'WWW-Authenticate': 'Bearer',
      });
    }
    next();
  };
}

/** One listener for every upgrading socket (not a closure each): an error ends the socket. */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

export function createUpgradeListener(options: FrontDoorOptions) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', destroyOnError);
    const tunnelHost = options.tunnelHost?.();
    const hostKind = classifyHost(req.headers.host, tunnelHost);
    if (!hostKind) return refuseUpgrade(socket, 'forbidden', 'Host not allowed');
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, tunnelHost)) {
      return refuseUpgrade(socket, 'forbidden', 'WebSocket origin not allowed');
    }
    const protocol = req.headers['sec-websocket-protocol'];
    if (options.dev && typeof protocol === 'string' && protocol.startsWith('vite-')) return;
    // Decisions-2 §5: a connection counts against the per-IP limit once it has sent `init`; before
    // that it has a budget of its own in the hub, so idle sockets cannot lock OBS or the dashboard out.
    // A paired device's sockets close when it is revoked.
    const device = hostKind === 'tunnel' ? options.devices?.deviceOfUpgrade(req) : undefined;
    const devices = options.devices;
    options.hub.handleUpgrade(
      req,
      socket,
      head,
      clientIp(req, hostKind),
      device && devices ? (ws) => devices.trackSocket(device.id, ws) : undefined,
    );
    // The upgrade completed in this call (or the socket is gone): `ws` now handles the socket's errors,
    // and an idle overlay connection keeps one error listener rather than two.
    socket.off('error', destroyOnError);
  };
}
