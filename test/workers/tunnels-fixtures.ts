// Shared pieces of the tunnel suites: licences, calls into the Worker, and the fake Cloudflare API's controls.

import { env, exports } from 'cloudflare:workers';
import { expect, inject } from 'vitest';
import { ErrorBody, parseWith } from '../../shared/protocol/index.js';
import { signLicence } from '../../workers/src/licence.js';

declare module 'vitest' {
  // Provided by test/workers/global-setup.ts (which the Workers test project does not type-check).
  export interface ProvidedContext {
    cloudflareBase: string;
  }
}

export const cloudflareBase = inject('cloudflareBase');

/** A fresh user id per test, so tests never see each other's tunnels in the shared fake. */
export const newUserId = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`;

export async function licence(sub: string, tier: 'free' | 'premium' = 'premium'): Promise<string> {
  return (await signLicence(env, { sub, tier })).token;
}

/** Each call has its own client IP: the per-IP limit of /tunnels/* is not what these suites test. */
const randomIp = () => `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 250) + 1).join('.')}`;

export async function callGatekeeper(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string | ReadableStream<Uint8Array> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'CF-Connecting-IP': randomIp() };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | ReadableStream<Uint8Array> | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  // A streamed body has no Content-Length: it is sent chunked.
  const duplex = typeof body === 'object' ? { duplex: 'half' } : {};
  return exports.default.fetch(`http://gatekeeper.test${path}`, { method, headers, body, ...duplex });
}

export const provision = async (userId: string, token?: string) =>
  callGatekeeper('POST', '/tunnels/provision', {
    token: token ?? (await licence(userId)),
    body: { user_id: userId },
  });
export const tunnelStatus = async (userId: string, token?: string) =>
  callGatekeeper('GET', `/tunnels/status/${encodeURIComponent(userId)}`, {
    token: token ?? (await licence(userId)),
  });
export const deleteTunnel = async (userId: string, token?: string) =>
  callGatekeeper('DELETE', `/tunnels/${encodeURIComponent(userId)}`, {
    token: token ?? (await licence(userId)),
  });

/** Asserts the common error body (decisions §1) with this status and code. */
export async function expectError(res: Response, status: number, code: string): Promise<string> {
  expect(res.status).toBe(status);
  const body: unknown = await res.json();
  const parsed = parseWith(ErrorBody, body);
  expect(parsed.ok, JSON.stringify(body)).toBe(true);
  expect(body).toMatchObject({ error: { code } });
  return parsed.ok ? parsed.value.error.message : '';
}

// --- Independent reference of the subdomain rule (decisions §2): HMAC, then RFC 4648 bit by bit ----

const RFC4648 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export async function referenceSubdomain(userId: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    'raw',
    enc.encode(env.SUBDOMAIN_SECRET),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(userId)));
  const bits = [...mac].map((b) => b.toString(2).padStart(8, '0')).join('');
  let out = '';
  for (let i = 0; out.length < 16; i += 5) out += RFC4648[Number.parseInt(bits.slice(i, i + 5), 2)];
  return `o-${out.toLowerCase()}`;
}

// --- The fake Cloudflare API -----------------------------------------------------------------------

export interface FakeTunnel {
  id: string;
  name: string;
  config_src: string;
  status: string;
  deleted_at: string | null;
  conns_active_at: string | null;
  connections: number;
  config: { version: number; config: unknown } | null;
}
interface FakeRecord {
  id: string;
  type: string;
  name: string;
  content: string;
  proxied: boolean;
}
interface FakeCall {
  route: string;
  method: string;
  subject: string;
  status: number;
}
interface FakeState {
  tunnels: FakeTunnel[];
  dns_records: FakeRecord[];
  calls: FakeCall[];
}

async function fakeState(): Promise<FakeState> {
  const res = await fetch(`${cloudflareBase}/__fake/state`);
  expect(res.status).toBe(200);
  // The fake is our own test server: its dump has exactly the shape written in test/support/fakes.
  return res.json<FakeState>();
}

/** What the fake holds for one subdomain: live tunnels named after it, DNS records at its host. */
export async function cloudflareHolds(subdomain: string) {
  const state = await fakeState();
  const tunnels = state.tunnels.filter((t) => t.name === `overlay-${subdomain}` && !t.deleted_at);
  const records = state.dns_records.filter((r) => r.name === `${subdomain}.${env.TUNNEL_DOMAIN}`);
  const calls = state.calls.filter((c) => c.subject.includes(subdomain));
  return { tunnels, records, calls };
}

export async function expectNothingLeft(subdomain: string) {
  const { tunnels, records } = await cloudflareHolds(subdomain);
  expect(tunnels, 'live tunnels left behind').toEqual([]);
  expect(records, 'DNS records left behind').toEqual([]);
}

export interface FailureSpec {
  route: string;
  status?: number;
  code?: number;
  nth?: number;
  count?: number;
  hang?: boolean;
  after?: boolean;
  /** Answer a list call with success and no results, as a read that does not see recent writes. */
  stale?: boolean;
  /** Seconds in the Retry-After header of an injected 429. */
  retry_after?: number;
  /** Keep the call waiting until releaseCloudflare, then fail it as the rest of the spec says. */
  hold?: boolean;
}

/** Makes calls to one fake route about this subdomain fail (the fake's /__fake/fail). */
export async function injectFailure(subdomain: string, spec: FailureSpec) {
  const res = await fetch(`${cloudflareBase}/__fake/fail`, {
    method: 'POST',
    body: JSON.stringify({ match: subdomain, ...spec }),
  });
  expect(res.status).toBe(200);
}

/** Returns once the fake holds a call about this subdomain (a `hold` failure). */
export async function cloudflareHolding(subdomain: string) {
  const res = await fetch(`${cloudflareBase}/__fake/held`, {
    method: 'POST',
    body: JSON.stringify({ match: subdomain }),
  });
  expect(res.status).toBe(200);
}

/** Lets the held calls about this subdomain go on. */
export async function releaseCloudflare(subdomain: string) {
  const res = await fetch(`${cloudflareBase}/__fake/release`, {
    method: 'POST',
    body: JSON.stringify({ match: subdomain }),
  });
  expect(res.status).toBe(200);
}

/** Simulates cloudflared connecting with `connections` connections, or dropping (0). */
export async function connector(tunnelId: string, connections: number, status?: 'healthy' | 'degraded') {
  const res = await fetch(`${cloudflareBase}/__fake/connect`, {
    method: 'POST',
    body: JSON.stringify({ tunnel_id: tunnelId, connections, status }),
  });
  expect(res.status).toBe(200);
}

/** Calls the fake's API directly, as another program holding the same API token would. */
export async function cloudflareApi(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${cloudflareBase}/client/v4${path}`, {
    method,
    headers: { Authorization: `Bearer ${env.CLOUDFLARE_API_TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * The first tunnel call of a test file loads the Cloudflare SDK into the isolate, which takes
 * seconds under the test runner's module loader; suites do it once, before their timed tests:
 * `beforeAll(loadTunnelRoutes, LOAD_TUNNEL_ROUTES_TIMEOUT_MS)`.
 */
export async function loadTunnelRoutes() {
  await expectError(await tunnelStatus(newUserId('warm-up')), 404, 'not_found');
}
export const LOAD_TUNNEL_ROUTES_TIMEOUT_MS = 120_000;
