// Paired devices through the tunnel (decisions-3 §11): who the caller is, what its role may do, the CSRF
// header, and the audit of its changes. The one place a device's request is let in or refused, for
// HTTP (the front door) and WebSocket upgrades (closed when the device is revoked).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { roleAllows } from '../../../shared/device-roles.js';
import type { DeviceView } from '../../../shared/protocol/index.js';
import type { AuditLog } from '../devices/audit.js';
import { DEVICE_COOKIE } from '../devices/pairing.js';
import { constantTimeEqual, type DeviceStore } from '../devices/store.js';

/** Where a device's accepted changes go (the audit, devices/audit.ts). */
export type AuditSink = Pick<AuditLog, 'record'>;

export { roleAllows };

export const CSRF_HEADER = 'x-overlay-csrf';

/** The value of the device cookie in a Cookie header, if there is one (the token is base64url). */
export function deviceCookieValue(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== DEVICE_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : '';
  }
  return undefined;
}

export type DeviceDecision =
  | { ok: true; device: DeviceView }
  | {
      ok: false;
      code: 'not_found' | 'unauthenticated' | 'forbidden';
      message: string;
      /** A cookie of no active device (revoked, replaced) opened the dashboard: it is signed out. */
      signedOut?: true;
    };

/** Devices' sessions: the device a request was let in as, its CSRF value, and its open WebSockets. */
export class DeviceAccess {
  readonly #callers = new WeakMap<IncomingMessage, DeviceView>();
  /** What a device's request acted on, in words, for its audit entry (set by the route). */
  readonly #details = new WeakMap<IncomingMessage, string>();
  readonly #sockets = new Map<string, Set<{ close(code: number, reason: string): void }>>();
  #audit: AuditSink | undefined;

  constructor(
    private readonly devices: DeviceStore,
    private readonly log: (line: string) => void = () => {},
  ) {
    devices.onRevoke((device) => {
      const open = this.#sockets.get(device.id);
      this.#sockets.delete(device.id);
      for (const socket of open ?? []) socket.close(1008, 'this device was revoked');
    });
  }

  /** Where accepted changes are journaled (set once the journal is open). */
  set audit(sink: AuditSink | undefined) {
    this.#audit = sink;
  }

  csrfOf(device: Pick<DeviceView, 'id'>): string | undefined {
    return this.devices.csrf(device.id);
  }

  /** The device a request was let in as (undefined: the admin key, or no device). */
  deviceOf(req: IncomingMessage): DeviceView | undefined {
    return this.#callers.get(req);
  }

  /** Names what a device's request acted on in its audit entry, when the path does not say (the rule tested). */
  noteForAudit(req: IncomingMessage, detail: string): void {
    if (this.#callers.has(req)) this.#details.set(req, detail);
  }

  /**
   * Decides a request through the tunnel to `/api/*` or `/dashboard`: without the cookie nothing is
   * there (404); a cookie of no active device is 401 on the API, and signed out on the dashboard (its
   * page says so, its files stay 404);
   * then the role and, on a change, the CSRF header. A request let in is noted (last seen, audit).
   */
  admit(req: IncomingMessage, res: ServerResponse, ip: string, api: boolean): DeviceDecision {
    const cookie = deviceCookieValue(req.headers.cookie);
    if (cookie === undefined) return { ok: false, code: 'not_found', message: 'No such route' };
    const device = cookie ? this.devices.authenticate(cookie) : undefined;
    if (!device) {
      return api
        ? {
            ok: false,
            code: 'unauthenticated',
            message:
              'This device is not paired (or was revoked): pair it again from the streamer’s dashboard',
          }
        : { ok: false, code: 'not_found', message: 'No such route', signedOut: true };
    }
    const method = req.method ?? 'GET';
    if (api && !roleAllows(device.role, method, req.url)) {
      return { ok: false, code: 'forbidden', message: `A ${device.role} device may not do this` };
    }
    const change = method !== 'GET' && method !== 'HEAD';
    if (change) {
      const sent = req.headers[CSRF_HEADER];
      const expected = this.csrfOf(device);
      if (typeof sent !== 'string' || expected === undefined || !constantTimeEqual(sent, expected)) {
        return {
          ok: false,
          code: 'forbidden',
          message: 'Send the X-Overlay-CSRF header with the csrf value of GET /api/session',
        };
      }
    }
    this.#callers.set(req, device);
    this.devices.touch(device.id, ip).catch((err: unknown) => {
      this.log(`[devices] could not note when ${device.name} was last seen: ${String(err)}`);
    });
    if (change && api) {
      res.once('finish', () => {
        if (res.statusCode < 200 || res.statusCode >= 300) return;
        try {
          this.#audit?.record({
            deviceId: device.id,
            deviceName: device.name,
            method,
            path: (req.url ?? '').split('?', 1)[0]!,
            status: res.statusCode,
            detail: this.#details.get(req),
          });
        } catch (err) {
          this.log(`[devices] the audit could not record ${method} by ${device.name}: ${String(err)}`);
        }
      });
    }
    return { ok: true, device };
  }

  /** The active device of an upgrade's cookie, if any (overlay sockets need none). */
  deviceOfUpgrade(req: IncomingMessage): DeviceView | undefined {
    const cookie = deviceCookieValue(req.headers.cookie);
    return cookie ? this.devices.authenticate(cookie) : undefined;
  }

  /** Keeps `socket` to close it when `deviceId` is revoked; forgets it when it closes. */
  trackSocket(
    deviceId: string,
    socket: {
      close(code: number, reason: string): void;
      once(event: 'close', listener: () => void): unknown;
    },
  ): void {
    let open = this.#sockets.get(deviceId);
    if (!open) {
      open = new Set();
      this.#sockets.set(deviceId, open);
    }
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      if (open.size === 0 && this.#sockets.get(deviceId) === open) this.#sockets.delete(deviceId);
    });
  }
}
