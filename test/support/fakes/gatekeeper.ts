// A small stand-in for the Gatekeeper on 127.0.0.1:0 that speaks its documented bodies and error codes (decisions §2).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwtPayload } from '../../../daemon/src/licence/jwt-payload.js';
import { DEFAULT_CONFIG, type RemoteConfig } from '../../../shared/config.js';
import type { Tier } from '../../../shared/protocol/index.js';
import { licenceSigner } from '../licence-signer.js';

export type ValidateMode = 'ok' | 'membership_inactive' | 'invalid_token' | 'unreachable' | 'server_error';

export interface FakeGatekeeper {
  url: string;
  /** What /validate answers next. */
  validateMode: ValidateMode;
  tier: Tier;
  config: RemoteConfig;
  requests: { method: string; path: string; authorization: string | undefined }[];
  tunnels: Map<string, { tunnel_id: string; subdomain: string; tunnel_token: string; created_at: string }>;
  tunnelDomain: string;
  /** Signs a licence as the Gatekeeper does (EdDSA, published in its JWKS, `iss` = its URL). */
  issueToken(sub: string, tier: Tier, ttlSeconds?: number): string;
  /** How long the licences of sign-ins and /validate last (`LICENCE_TTL_SECONDS`): 7 days by default. */
  licenceTtlSeconds: number;
  /** The Gatekeeper's clock (a test's fake one): `iat` of what it signs, and when a licence is past its `exp`. */
  now: () => number;
  /** A fresh signing key under the same `kid` (a dev stack run again): its JWKS changes with it. */
  rotateKey(): void;
  /** Published at /.well-known/jwks.json instead of the signing key's set (a Gatekeeper that misleads). */
  publishedJwks: { keys: Record<string, unknown>[] } | undefined;
  /** Members whose licences were revoked by POST /auth/logout. */
  loggedOut: Set<string>;
  close(): Promise<void>;
}

/** Stable per user, like the real one (decisions §2), so a test knows the hostname before provisioning. */
export function fakeSubdomain(userId: string): string {
  return `o-${createHash('sha256').update(userId).digest('hex').slice(0, 16)}`;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, code: string, message: string, extra = {}): void {
  sendJson(res, status, { error: { code, message }, ...extra });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

export async function startFakeGatekeeper(
  options: { userId?: string; tunnelDomain?: string } = {},
): Promise<FakeGatekeeper> {
  const userId = options.userId ?? '55501';
  /** PKCE as the real one: each code remembers its login's challenge. */
  const codes = new Map<string, { tier: Tier; challenge: string | null }>();
  let signer = licenceSigner('fake-gatekeeper');
  const issueToken = (sub: string, tier: Tier, ttlSeconds = fake.licenceTtlSeconds) =>
    signer.sign({ sub, tier, iss: fake.url, ttlSeconds, now: fake.now() });

  const authorised = (
    req: IncomingMessage,
    res: ServerResponse,
  ): { sub: string; tier: string } | undefined => {
    const header = req.headers.authorization ?? '';
    const claims = header.startsWith('Bearer ') ? decodeJwtPayload(header.slice(7)) : undefined;
    if (!claims) {
      sendError(res, 401, 'unauthenticated', 'A licence token is required');
      return undefined;
    }
    return { sub: claims.sub, tier: claims.tier ?? 'free' };
  };
  const premium = (req: IncomingMessage, res: ServerResponse, pathUser?: string) => {
    const claims = authorised(req, res);
    if (!claims) return undefined;
    if (claims.tier !== 'premium')
      return void sendError(res, 403, 'premium_required', 'Tunnels need Premium');
    if (pathUser !== undefined && pathUser !== claims.sub)
      return void sendError(res, 403, 'forbidden', 'Not yours');
    return claims;
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    fake.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      authorization: req.headers.authorization,
    });
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /health') return sendJson(res, 200, { status: 'ok', version: '1.0.0' });
    if (route === 'GET /config') return sendJson(res, 200, fake.config);
    if (route === 'GET /.well-known/jwks.json') return sendJson(res, 200, fake.publishedJwks ?? signer.jwks);
    if (route === 'POST /auth/logout') {
      const claims = authorised(req, res);
      if (!claims) return;
      fake.loggedOut.add(claims.sub);
      res.writeHead(204);
      return res.end();
    }
    if (route === 'GET /auth/membership') {
      // The real one goes through the platform first; the end of the journey is the same redirect.
      const port = Number(url.searchParams.get('redirect_port'));
      const code = randomBytes(12).toString('hex');
      const challenge = url.searchParams.get('code_challenge');
      if (challenge !== null && url.searchParams.get('code_challenge_method') !== 'S256')
        return sendError(res, 400, 'bad_request', 'code_challenge_method must be S256');
      codes.set(code, { tier: fake.tier, challenge });
      res.writeHead(302, { Location: `http://127.0.0.1:${port}/auth/done?code=${code}` });
      return res.end();
    }
    if (route === 'POST /auth/exchange') {
      const body = await readJson(req);
      const field = (name: string) =>
        typeof body === 'object' && body && name in body
          ? String((body as Record<string, unknown>)[name])
          : undefined;
      const code = field('code') ?? '';
      const pending = codes.get(code);
      if (!pending) return sendError(res, 400, 'invalid_code', 'Unknown, used or expired code');
      codes.delete(code);
      const verifier = field('code_verifier');
      const matches =
        pending.challenge === null
          ? verifier === undefined
          : verifier !== undefined &&
            createHash('sha256').update(verifier).digest('base64url') === pending.challenge;
      if (!matches) return sendError(res, 400, 'invalid_code', 'The code_verifier does not match this login');
      return sendJson(res, 200, { token: issueToken(userId, pending.tier), tier: pending.tier });
    }
    if (route === 'POST /validate') {
      if (fake.validateMode === 'unreachable') return req.socket.destroy();
      if (fake.validateMode === 'server_error') return sendError(res, 502, 'upstream_error', 'Platform down');
      const claims = authorised(req, res);
      if (!claims) return;
      if (fake.validateMode === 'invalid_token') return sendError(res, 401, 'invalid_token', 'Token expired');
      // As the real one: a licence more than 30 s past its `exp` is no longer renewed.
      const exp = decodeJwtPayload((req.headers.authorization ?? '').slice(7))?.exp;
      if (exp !== undefined && exp * 1000 + 30_000 < fake.now())
        return sendError(res, 401, 'invalid_token', 'The licence expired');
      if (fake.validateMode === 'membership_inactive') {
        return sendError(res, 403, 'membership_inactive', 'Membership lapsed', { tier: 'free' });
      }
      const token = issueToken(claims.sub, fake.tier);
      const expiresAt = new Date((decodeJwtPayload(token)?.exp ?? 0) * 1000).toISOString();
      return sendJson(res, 200, { token, tier: fake.tier, expires_at: expiresAt });
    }
    if (route === 'POST /tunnels/provision') {
      const body = await readJson(req);
      const bodyUser = typeof body === 'object' && body && 'user_id' in body ? String(body.user_id) : '';
      const claims = premium(req, res, bodyUser);
      if (!claims) return;
      const existing = fake.tunnels.get(claims.sub);
      const record = existing ?? {
        tunnel_id: randomUUID(),
        subdomain: fakeSubdomain(claims.sub),
        tunnel_token: Buffer.from(
          JSON.stringify({ a: 'account', t: randomUUID(), s: randomBytes(32).toString('base64') }),
        ).toString('base64'),
        created_at: new Date().toISOString(),
      };
      fake.tunnels.set(claims.sub, record);
      const { created_at: _c, ...rest } = record;
      return sendJson(res, existing ? 200 : 201, {
        ...rest,
        public_url: `https://${record.subdomain}.${fake.tunnelDomain}`,
      });
    }
    const status = /^\/tunnels\/status\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && status?.[1]) {
      if (!premium(req, res, decodeURIComponent(status[1]))) return;
      const record = fake.tunnels.get(decodeURIComponent(status[1]));
      if (!record) return sendError(res, 404, 'not_found', 'No tunnel');
      return sendJson(res, 200, {
        tunnel_id: record.tunnel_id,
        subdomain: record.subdomain,
        public_url: `https://${record.subdomain}.${fake.tunnelDomain}`,
        active: false,
        state: 'provisioned',
        connections: 0,
        created_at: record.created_at,
      });
    }
    const del = /^\/tunnels\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'DELETE' && del?.[1]) {
      if (!premium(req, res, decodeURIComponent(del[1]))) return;
      if (!fake.tunnels.delete(decodeURIComponent(del[1])))
        return sendError(res, 404, 'not_found', 'No tunnel');
      res.writeHead(204);
      return res.end();
    }
    sendError(res, 404, 'not_found', 'No such route');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: FakeGatekeeper = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    validateMode: 'ok',
    tier: 'premium',
    config: structuredClone(DEFAULT_CONFIG),
    requests: [],
    tunnels: new Map(),
    tunnelDomain: options.tunnelDomain ?? 'overlays.test',
    issueToken,
    licenceTtlSeconds: 7 * 86_400,
    now: () => Date.now(),
    publishedJwks: undefined,
    rotateKey: () => {
      signer = licenceSigner('fake-gatekeeper');
    },
    loggedOut: new Set(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return fake;
}
