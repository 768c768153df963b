// What a paired device's role may do through the tunnel (decisions-3 §11): the one table the daemon
// enforces (daemon/src/http/device-access.ts) and the dashboard follows, so a phone never offers a
// button the daemon would refuse. No Node or DOM imports.
import type { DeviceRole } from './protocol/devices.js';

/** The path as the router matches it: no query, lowercase, no trailing slashes; also its decoded form. */
function pathForms(url: string | undefined): string[] {
  const raw = (url ?? '').split('?', 1)[0]!.toLowerCase().replace(/\/+$/, '');
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw).replace(/\/+$/, '');
  } catch {}
  return decoded === raw ? [raw] : [raw, decoded];
}

/**
 * What a moderator may do, and nothing else (§11): read status, history, leaderboards and the action
 * log, send test events, test a rule, skip or clear queues. The overlay and rule lists are read too:
 * the test panel shows which overlays an event reaches, and a rule is tested from the list.
 */
const MODERATOR_ROUTES: readonly (readonly [method: 'GET' | 'POST', pattern: RegExp])[] = [
  ['GET', /^\/api\/session$/],
  ['GET', /^\/api\/status$/],
  ['GET', /^\/api\/clients$/],
  ['GET', /^\/api\/overlays$/],
  ['GET', /^\/api\/rules$/],
  ['GET', /^\/api\/events$/],
  ['GET', /^\/api\/events\/caught-up$/],
  ['GET', /^\/api\/sessions$/],
  ['GET', /^\/api\/sessions\/[^/]+\/(minutes|events\.csv)$/],
  ['GET', /^\/api\/leaderboard$/],
  ['GET', /^\/api\/actions\/log$/],
  ['GET', /^\/api\/actions\/queues$/],
  ['POST', /^\/api\/actions\/queues\/[^/]+\/(skip|clear)$/],
  ['POST', /^\/api\/events$/],
  ['POST', /^\/api\/rules\/test$/],
];

/** What stays the admin key's alone, even for an owner (§11): pairing, the devices, the audit, backup and restore. */
const ADMIN_ONLY_PREFIXES = ['/api/pairings', '/api/devices', '/api/audit', '/api/backup', '/api/restore'];

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** Whether `role` may make this request (the route itself still decides whether it exists). */
export function roleAllows(role: DeviceRole, method: string, url: string | undefined): boolean {
  const forms = pathForms(url);
  const upper = method.toUpperCase();
  const verb = upper === 'HEAD' ? 'GET' : upper;
  if (role === 'owner') return !forms.some((path) => ADMIN_ONLY_PREFIXES.some((p) => under(path, p)));
  return forms.every((path) => MODERATOR_ROUTES.some(([m, pattern]) => m === verb && pattern.test(path)));
}
