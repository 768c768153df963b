// Who may talk to the daemon: Host (DNS rebinding), Origin (CORS), the client IP and the admin key (decisions §3).
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** `local`: a loopback name; `tunnel`: the configured tunnel hostname. */
type HostKind = 'local' | 'tunnel';

const LOCAL_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Splits `name[:port]` (or `[v6][:port]`) and lowercases the name; undefined when malformed. */
function hostnameOf(hostHeader: string): string | undefined {
  const value = hostHeader.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(value);
  return match?.[1];
}

/** Classifies the Host header; undefined means refuse with 403 (decisions §3). */
export function classifyHost(hostHeader: string | undefined, tunnelHost?: string): HostKind | undefined {
  if (hostHeader === undefined) return undefined;
  const name = hostnameOf(hostHeader);
  if (name === undefined) return undefined;
  if (LOCAL_HOSTNAMES.has(name)) return 'local';
  if (tunnelHost !== undefined && name === tunnelHost.toLowerCase()) return 'tunnel';
  return undefined;
}

/** An Origin is allowed when it is a localhost origin (http or https, any port) or the tunnel's. */
export function originAllowed(origin: string, tunnelHost?: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  // An origin is scheme://host[:port] and nothing else; `null` and paths fail here.
  if (url.origin !== origin.toLowerCase().replace(/\/$/, '')) return false;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (LOCAL_HOSTNAMES.has(url.hostname)) return true;
  return tunnelHost !== undefined && url.protocol === 'https:' && url.host === tunnelHost.toLowerCase();
}

/** Normalises `::ffff:127.0.0.1` to `127.0.0.1`, so one client has one key. */
function normaliseIp(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export function isLoopbackIp(address: string): boolean {
  return address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));
}

/**
 * The client IP for per-IP limits: the socket's peer, except that a request arriving from
 * loopback with the tunnel's Host came through cloudflared, whose `CF-Connecting-IP` names
 * the real client (decisions §3). Anywhere else the header is ignored, so it cannot be forged.
 */
export function clientIp(req: IncomingMessage, hostKind: HostKind | undefined): string {
  const peer = normaliseIp(req.socket.remoteAddress);
  if (hostKind !== 'tunnel' || !isLoopbackIp(peer)) return peer;
  const forwarded = req.headers['cf-connecting-ip'];
  if (typeof forwarded === 'string' && isIP(forwarded.trim()) !== 0) {
    const ip = normaliseIp(forwarded.trim());
    // One IPv6 client usually holds a whole /64: counted per address it could open 2^64 budgets.
    return isIP(ip) === 6 ? ipv6Slash64(ip) : ip;
  }
  return peer;
}

/** The /64 prefix of an IPv6 address, as the key its connections are counted under. */
export function ipv6Slash64(address: string): string {
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** True for a request the local control API may answer: a loopback peer with a loopback Host. */
export function isLocalControlClient(req: IncomingMessage, hostKind: HostKind | undefined): boolean {
  return hostKind === 'local' && isLoopbackIp(normaliseIp(req.socket.remoteAddress));
}

/** The admin key's bytes, taken once per key rather than on every request. */
let expected: { key: string; bytes: Buffer } | undefined;

/**
 * Compares the bearer token with the admin key in constant time. Only the key's length can be learnt
 * from the timing, and every admin key has the same length; no hash is taken per request (it was the
 * largest part of checking a request).
 */
export function bearerMatches(header: string | undefined, adminKey: string): boolean {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  if (expected?.key !== adminKey) expected = { key: adminKey, bytes: Buffer.from(adminKey) };
  const presented = Buffer.from(match?.[1] ?? '');
  if (presented.length !== expected.bytes.length) {
    timingSafeEqual(expected.bytes, expected.bytes);
    return false;
  }
  return timingSafeEqual(presented, expected.bytes) && match !== null;
}
