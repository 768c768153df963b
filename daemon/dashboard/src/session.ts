// Who the dashboard speaks for: the admin key (taken once from the sign-in URL's fragment, kept in
// sessionStorage, never in the address bar), or a paired device's session (its cookie, decisions-3 §11).
import { DeviceSession } from '../../../shared/protocol/devices.js';
import { parseWith } from '../../../shared/protocol/index.js';

const STORAGE_KEY = 'overlay-daemon.admin-key';

/**
 * Reads `#key=<admin key>` from the sign-in URL printed by overlay-daemon. The key travels in the
 * fragment so it never reaches a server log or a Referer; once read it is removed from the address
 * bar (and from history) so a screenshot or a shared screen does not show it.
 */
export function takeKeyFromLocation(
  loc: Location = location,
  storage: Storage = sessionStorage,
): string | undefined {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const fromHash = params.get('key')?.trim();
  if (fromHash) {
    storage.setItem(STORAGE_KEY, fromHash);
    history.replaceState(history.state, '', `${loc.pathname}${loc.search}`);
  }
  return storage.getItem(STORAGE_KEY) ?? undefined;
}

export function forgetKey(storage: Storage = sessionStorage): void {
  storage.removeItem(STORAGE_KEY);
}

/**
 * What a page without the admin key is: a paired device (`device`), a device the streamer revoked
 * (`signed-out`), or a browser with neither (`none`: the sign-in URL is what it needs).
 */
export type SessionLookup =
  | { kind: 'device'; session: DeviceSession }
  | { kind: 'signed-out' }
  | { kind: 'none' };

/** The names of this computer: a page opened under one of them is the local dashboard, never a device's. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    host === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/**
 * Reads the answer of `GET /api/session`. Through the tunnel a 401 means the device's cookie matches no
 * active device (revoked); on this computer a 401 only says no admin key was sent.
 */
export function sessionOutcome(status: number, body: unknown, hostname: string): SessionLookup {
  if (status === 200) {
    const parsed = parseWith(DeviceSession, body);
    return parsed.ok ? { kind: 'device', session: parsed.value } : { kind: 'none' };
  }
  if (status === 401 && !isLoopbackHost(hostname)) return { kind: 'signed-out' };
  return { kind: 'none' };
}

/** Asks the daemon whether this browser is a paired device (its cookie goes along by itself). */
export async function lookUpDeviceSession(hostname: string = location.hostname): Promise<SessionLookup> {
  try {
    const response = await fetch('/api/session', { credentials: 'same-origin', cache: 'no-store' });
    const body: unknown = await response.json().catch(() => undefined);
    return sessionOutcome(response.status, body, hostname);
  } catch {
    return { kind: 'none' };
  }
}
