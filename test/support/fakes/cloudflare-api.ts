// A stateful local fake of the Cloudflare API v4 (tunnels and DNS records) with failure injection.
//
// It speaks the real envelope `{success, errors:[{code,message}], messages, result}` (plus
// `result_info` on lists) on the real paths under /client/v4. Error codes 1013 (duplicate tunnel
// name) and 81053 (a record with that host already exists) are the ones the real API returns;
// the other codes are stand-ins with the real HTTP statuses. Control endpoints under /__fake/:
//   POST /__fake/fail     {route, status, match?, nth?, count?, code?, message?, hang?, after?, stale?,
//                          retry_after?, hold?}
//   POST /__fake/held     {match}   answers once a call held by a `hold` rule about `match` waits
//   POST /__fake/release  {match}   lets the held calls about `match` go on (and fail as the rule says)
//   POST /__fake/connect  {tunnel_id, connections, status?}   (0 connections: the connector drops)
//   GET  /__fake/state    every tunnel (deleted ones too) and DNS record, and the request log
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type FakeServer, listenLoopback, readBody, sendJson } from './listen.js';

export const FAKE_CLOUDFLARE_TOKEN = 'test-cloudflare-token';

type TunnelStatus = 'inactive' | 'degraded' | 'healthy' | 'down';

interface FakeTunnel {
  id: string;
  account_tag: string;
  name: string;
  config_src: 'local' | 'cloudflare';
  status: TunnelStatus;
  created_at: string;
  deleted_at: string | null;
  conns_active_at: string | null;
  conns_inactive_at: string | null;
  secret: string;
  config: { version: number; config: unknown; created_at: string } | null;
  clients: FakeClient[];
}

interface FakeClient {
  id: string;
  run_at: string;
  version: string;
  arch: string;
  config_version: number;
  features: string[];
  conns: { id: string; client_id: string; colo_name: string; opened_at: string; origin_ip: string }[];
}

interface FakeDnsRecord {
  id: string;
  zone_id: string;
  type: string;
  name: string;
  content: string;
  proxied: boolean;
  ttl: number;
  comment: string | null;
  created_on: string;
  modified_on: string;
}

/** One injected failure: the `nth` matching call to `route` (and the `count - 1` after it) fails. */
interface FailureRule {
  route: string;
  match: string | undefined;
  nth: number;
  count: number;
  status: number;
  code: number;
  message: string;
  hang: boolean;
  /** Apply the call's effect first, then fail: the caller cannot know whether it happened. */
  after: boolean;
  /** Answer success with an empty list: a read that does not see recent writes yet. */
  stale: boolean;
  /** Seconds in the `Retry-After` header of an injected 429. */
  retryAfter: number;
  /** Keep the call waiting until /__fake/release, then fail it: a slow step, without a clock. */
  hold: boolean;
  seen: number;
}

interface LoggedCall {
  route: string;
  method: string;
  path: string;
  subject: string;
  status: number;
}

interface Route {
  name: string;
  method: string;
  pattern: RegExp;
  handle(ctx: CallContext): ApiResult;
}

interface CallContext {
  params: string[];
  query: URLSearchParams;
  body: unknown;
}

type ApiResult =
  | { ok: true; status?: number; result: unknown; resultInfo?: Record<string, number> }
  | { ok: false; status: number; code: number; message: string };

const ACCOUNT = '([0-9a-f]{32})';
const ID = '([0-9a-zA-Z-]+)';

export function startFakeCloudflare(port = 0, options: { apiToken?: string } = {}): Promise<FakeServer> {
  const apiToken = options.apiToken ?? FAKE_CLOUDFLARE_TOKEN;
  const tunnels = new Map<string, FakeTunnel>();
  const records = new Map<string, FakeDnsRecord>();
  let failures: FailureRule[] = [];
  let held: { subject: string; release: () => void }[] = [];
  let heldWaiters: { match: string; wake: () => void }[] = [];
  const holdCall = (subject: string) =>
    new Promise<void>((release) => {
      held.push({ subject, release });
      const woken = heldWaiters.filter((w) => subject.includes(w.match));
      heldWaiters = heldWaiters.filter((w) => !woken.includes(w));
      for (const w of woken) w.wake();
    });
  const log: LoggedCall[] = [];

  const now = () => new Date().toISOString();
  const fail = (status: number, code: number, message: string): ApiResult => ({
    ok: false,
    status,
    code,
    message,
  });
  const liveTunnel = (account: string, id: string): FakeTunnel | undefined => {
    const tunnel = tunnels.get(id);
    return tunnel && tunnel.account_tag === account && !tunnel.deleted_at ? tunnel : undefined;
  };
  const activeConns = (tunnel: FakeTunnel) => tunnel.clients.reduce((n, c) => n + c.conns.length, 0);
  const tunnelView = (t: FakeTunnel) => ({
    id: t.id,
    account_tag: t.account_tag,
    name: t.name,
    config_src: t.config_src,
    remote_config: t.config_src === 'cloudflare',
    status: t.status,
    tun_type: 'cfd_tunnel',
    created_at: t.created_at,
    deleted_at: t.deleted_at,
    conns_active_at: t.conns_active_at,
    conns_inactive_at: t.conns_inactive_at,
    connections: [],
    metadata: {},
  });
  const recordView = (r: FakeDnsRecord) => ({
    ...r,
    proxiable: true,
    settings: {},
    meta: {},
    tags: [],
  });
  const tunnelNotFound = () => fail(404, 1003, 'Tunnel not found');
  const page = <T>(items: T[], query: URLSearchParams): ApiResult => {
    const perPage = Math.min(Math.max(Number(query.get('per_page') ?? 20) || 20, 1), 1000);
    const pageNo = Math.max(Number(query.get('page') ?? 1) || 1, 1);
    const slice = items.slice((pageNo - 1) * perPage, pageNo * perPage);
    return {
      ok: true,
      result: slice,
      resultInfo: {
        page: pageNo,
        per_page: perPage,
        count: slice.length,
        total_count: items.length,
        total_pages: Math.ceil(items.length / perPage),
      },
    };
  };
  const stringField = (body: unknown, key: string): string | undefined => {
    if (typeof body !== 'object' || body === null) return undefined;
    const value: unknown = Reflect.get(body, key);
    return typeof value === 'string' ? value : undefined;
  };

  // Mirrors cloudflared's ingress validation, which the API applies to remote configurations:
  // only the last rule, and every last rule, matches all hosts (no hostname or "*", no path).
  const validateIngress = (config: unknown): string | null => {
    const ingress =
      typeof config === 'object' && config !== null ? Reflect.get(config, 'ingress') : undefined;
    if (!Array.isArray(ingress) || ingress.length === 0) return 'The config contains no ingress rules';
    for (const [i, rule] of ingress.entries()) {
      const service = stringField(rule, 'service');
      if (!service) return `Rule #${i + 1} has no service`;
      const hostname = stringField(rule, 'hostname') ?? '';
      const path = stringField(rule, 'path') ?? '';
      const catchAll = (hostname === '' || hostname === '*') && path === '';
      const last = i === ingress.length - 1;
      if (last && !catchAll) {
        return 'The last ingress rule must match all URLs (i.e. it should not have a hostname or path filter)';
      }
      if (!last && catchAll) return `Rule #${i + 1} is matching every hostname`;
    }
    return null;
  };

  const routes: Route[] = [
    {
      name: 'tunnel.create',
      method: 'POST',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel$`),
      handle: ({ params: [account = ''], body }) => {
        const name = stringField(body, 'name');
        if (!name) return fail(400, 1001, 'Tunnel name is required');
        const configSrc = stringField(body, 'config_src') ?? 'local';
        if (configSrc !== 'local' && configSrc !== 'cloudflare') return fail(400, 1001, 'Invalid config_src');
        for (const t of tunnels.values()) {
          if (t.account_tag === account && t.name === name && !t.deleted_at) {
            return fail(409, 1013, 'You already have a tunnel with this name');
          }
        }
        const tunnel: FakeTunnel = {
          id: randomUUID(),
          account_tag: account,
          name,
          config_src: configSrc,
          status: 'inactive',
          created_at: now(),
          deleted_at: null,
          conns_active_at: null,
          conns_inactive_at: null,
          secret: stringField(body, 'tunnel_secret') ?? randomBytes(32).toString('base64'),
          config: null,
          clients: [],
        };
        tunnels.set(tunnel.id, tunnel);
        return { ok: true, result: tunnelView(tunnel) };
      },
    },
    {
      name: 'tunnel.list',
      method: 'GET',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel$`),
      handle: ({ params: [account = ''], query }) => {
        const name = query.get('name');
        const isDeleted = query.get('is_deleted');
        const status = query.get('status');
        const found = [...tunnels.values()].filter(
          (t) =>
            t.account_tag === account &&
            (name === null || t.name === name) &&
            (isDeleted === null || (isDeleted === 'true') === (t.deleted_at !== null)) &&
            (status === null || t.status === status),
        );
        return page(found.map(tunnelView), query);
      },
    },
    {
      name: 'tunnel.get',
      method: 'GET',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel/${ID}$`),
      handle: ({ params: [account = '', id = ''] }) => {
        const tunnel = tunnels.get(id);
        // Like the real API, a deleted tunnel still answers by id, with `deleted_at` set.
        if (!tunnel || tunnel.account_tag !== account) return tunnelNotFound();
        return { ok: true, result: tunnelView(tunnel) };
      },
    },
    {
      name: 'tunnel.delete',
      method: 'DELETE',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel/${ID}$`),
      handle: ({ params: [account = '', id = ''] }) => {
        const tunnel = liveTunnel(account, id);
        if (!tunnel) return tunnelNotFound();
        if (activeConns(tunnel) > 0) return fail(400, 1022, 'Cannot delete a tunnel with active connections');
        tunnel.deleted_at = now();
        return { ok: true, result: tunnelView(tunnel) };
      },
    },
    {
      name: 'config.put',
      method: 'PUT',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel/${ID}/configurations$`),
      handle: ({ params: [account = '', id = ''], body }) => {
        const tunnel = liveTunnel(account, id);
        if (!tunnel) return tunnelNotFound();
        if (tunnel.config_src !== 'cloudflare') {
          return fail(400, 1055, 'Tunnel is locally configured; its configuration cannot be set remotely');
        }
        const config = typeof body === 'object' && body !== null ? Reflect.get(body, 'config') : undefined;
        const invalid = validateIngress(config);
        if (invalid) return fail(400, 1055, `Bad Configuration: Validation failed: ${invalid}`);
        tunnel.config = { version: (tunnel.config?.version ?? 0) + 1, config, created_at: now() };
        return {
          ok: true,
          result: { tunnel_id: id, account_id: account, source: 'cloudflare', ...tunnel.config },
        };
      },
    },
    {
      name: 'config.get',
      method: 'GET',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel/${ID}/configurations$`),
      handle: ({ params: [account = '', id = ''] }) => {
        const tunnel = liveTunnel(account, id);
        if (!tunnel) return tunnelNotFound();
        const config = tunnel.config ?? { version: 0, config: null, created_at: tunnel.created_at };
        return { ok: true, result: { tunnel_id: id, account_id: account, source: 'cloudflare', ...config } };
      },
    },
    {
      name: 'token.get',
      method: 'GET',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel/${ID}/token$`),
      handle: ({ params: [account = '', id = ''] }) => {
        const tunnel = liveTunnel(account, id);
        if (!tunnel) return tunnelNotFound();
        // The real connector token: base64 of {"a": account tag, "t": tunnel id, "s": secret}.
        const token = Buffer.from(JSON.stringify({ a: account, t: id, s: tunnel.secret })).toString('base64');
        return { ok: true, result: token };
      },
    },
    {
      name: 'connections.get',
      method: 'GET',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel/${ID}/connections$`),
      handle: ({ params: [account = '', id = ''] }) => {
        const tunnel = liveTunnel(account, id);
        if (!tunnel) return tunnelNotFound();
        return { ok: true, result: tunnel.clients };
      },
    },
    {
      name: 'connections.delete',
      method: 'DELETE',
      pattern: new RegExp(`^/accounts/${ACCOUNT}/cfd_tunnel/${ID}/connections$`),
      handle: ({ params: [account = '', id = ''], query }) => {
        const tunnel = liveTunnel(account, id);
        if (!tunnel) return tunnelNotFound();
        const clientId = query.get('client_id');
        const hadConns = activeConns(tunnel) > 0;
        tunnel.clients = clientId ? tunnel.clients.filter((c) => c.id !== clientId) : [];
        if (hadConns && activeConns(tunnel) === 0) {
          tunnel.status = 'down';
          tunnel.conns_inactive_at = now();
        }
        return { ok: true, result: null };
      },
    },
    {
      name: 'dns.create',
      method: 'POST',
      pattern: new RegExp(`^/zones/${ACCOUNT}/dns_records$`),
      handle: ({ params: [zone = ''], body }) => {
        const type = stringField(body, 'type');
        const name = stringField(body, 'name')?.toLowerCase();
        const content = stringField(body, 'content');
        if (!type || !name || !content)
          return fail(400, 9000, 'DNS record type, name and content are required');
        const clash = [...records.values()].some(
          (r) => r.zone_id === zone && r.name === name && (r.type === 'CNAME' || type === 'CNAME'),
        );
        if (clash) return fail(400, 81053, 'An A, AAAA, or CNAME record with that host already exists.');
        const proxied = typeof body === 'object' && body !== null && Reflect.get(body, 'proxied') === true;
        const ttl = typeof body === 'object' && body !== null ? Number(Reflect.get(body, 'ttl') ?? 1) : 1;
        const record: FakeDnsRecord = {
          id: randomBytes(16).toString('hex'),
          zone_id: zone,
          type,
          name,
          content,
          proxied,
          ttl: Number.isFinite(ttl) ? ttl : 1,
          comment: stringField(body, 'comment') ?? null,
          created_on: now(),
          modified_on: now(),
        };
        records.set(record.id, record);
        return { ok: true, result: recordView(record) };
      },
    },
    {
      name: 'dns.list',
      method: 'GET',
      pattern: new RegExp(`^/zones/${ACCOUNT}/dns_records$`),
      handle: ({ params: [zone = ''], query }) => {
        // `name` and `name.exact` are both exact matches in the real API; so are content and type.
        const name = (query.get('name.exact') ?? query.get('name'))?.toLowerCase();
        const content = query.get('content.exact') ?? query.get('content');
        const type = query.get('type');
        const found = [...records.values()].filter(
          (r) =>
            r.zone_id === zone &&
            (name === undefined || r.name === name) &&
            (content === null || r.content === content) &&
            (type === null || r.type === type),
        );
        return page(found.map(recordView), query);
      },
    },
    {
      name: 'dns.get',
      method: 'GET',
      pattern: new RegExp(`^/zones/${ACCOUNT}/dns_records/${ID}$`),
      handle: ({ params: [zone = '', id = ''] }) => {
        const record = records.get(id);
        if (!record || record.zone_id !== zone) return fail(404, 81044, 'Record does not exist.');
        return { ok: true, result: recordView(record) };
      },
    },
    {
      name: 'dns.delete',
      method: 'DELETE',
      pattern: new RegExp(`^/zones/${ACCOUNT}/dns_records/${ID}$`),
      handle: ({ params: [zone = '', id = ''] }) => {
        const record = records.get(id);
        if (!record || record.zone_id !== zone) return fail(404, 81044, 'Record does not exist.');
        records.delete(id);
        return { ok: true, result: { id } };
      },
    },
  ];

  /** What a call is about, for scoping injected failures: its URL, body and the names it refers to. */
  const subjectOf = (path: string, text: string, params: string[]): string => {
    const names = params.flatMap((p) => [tunnels.get(p)?.name ?? '', records.get(p)?.name ?? '']);
    return [path, text, ...names].join(' ');
  };

  const envelope = (result: ApiResult) =>
    result.ok
      ? {
          success: true,
          errors: [],
          messages: [],
          result: result.result,
          ...(result.resultInfo ? { result_info: result.resultInfo } : {}),
        }
      : {
          success: false,
          errors: [{ code: result.code, message: result.message }],
          messages: [],
          result: null,
        };

  const control = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (req.method === 'GET' && path === '/__fake/state') {
      sendJson(res, 200, {
        tunnels: [...tunnels.values()].map((t) => ({
          ...tunnelView(t),
          config: t.config,
          connections: activeConns(t),
        })),
        dns_records: [...records.values()].map(recordView),
        calls: log,
      });
      return;
    }
    const text = await readBody(req);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      sendJson(res, 400, { error: 'body is not JSON' });
      return;
    }
    const num = (key: string, fallback: number) => {
      const value: unknown = typeof body === 'object' && body !== null ? Reflect.get(body, key) : undefined;
      return typeof value === 'number' ? value : fallback;
    };
    const flag = (key: string) =>
      typeof body === 'object' && body !== null && Reflect.get(body, key) === true;
    if (req.method === 'POST' && path === '/__fake/fail') {
      const route = stringField(body, 'route');
      if (!route || !routes.some((r) => r.name === route)) {
        sendJson(res, 400, { error: `unknown route; one of ${routes.map((r) => r.name).join(', ')}` });
        return;
      }
      const status = num('status', 500);
      failures.push({
        route,
        match: stringField(body, 'match'),
        nth: num('nth', 1),
        count: num('count', 1),
        status,
        code: num('code', status === 429 ? 10000 : 1000),
        message: stringField(body, 'message') ?? 'Injected failure',
        hang: flag('hang'),
        after: flag('after'),
        stale: flag('stale'),
        retryAfter: num('retry_after', 0),
        hold: flag('hold'),
        seen: 0,
      });
      sendJson(res, 200, { ok: true });
      return;
    }
    if (req.method === 'POST' && path === '/__fake/held') {
      const match = stringField(body, 'match') ?? '';
      if (!held.some((h) => h.subject.includes(match))) {
        await new Promise<void>((wake) => heldWaiters.push({ match, wake }));
      }
      sendJson(res, 200, { ok: true });
      return;
    }
    if (req.method === 'POST' && path === '/__fake/release') {
      const match = stringField(body, 'match') ?? '';
      const released = held.filter((h) => h.subject.includes(match));
      held = held.filter((h) => !released.includes(h));
      for (const h of released) h.release();
      sendJson(res, 200, { ok: true, released: released.length });
      return;
    }
    if (req.method === 'POST' && path === '/__fake/clear-failures') {
      failures = [];
      sendJson(res, 200, { ok: true });
      return;
    }
    if (req.method === 'POST' && path === '/__fake/connect') {
      const tunnel = tunnels.get(stringField(body, 'tunnel_id') ?? '');
      if (!tunnel || tunnel.deleted_at) {
        sendJson(res, 404, { error: 'no such tunnel' });
        return;
      }
      const connections = num('connections', 1);
      if (connections > 0) {
        const clientId = randomUUID();
        tunnel.clients = [
          {
            id: clientId,
            run_at: now(),
            version: '2026.1.0',
            arch: 'linux_amd64',
            config_version: tunnel.config?.version ?? 0,
            features: [],
            conns: Array.from({ length: connections }, (_, i) => ({
              id: randomUUID(),
              client_id: clientId,
              colo_name: ['ams', 'fra', 'lhr', 'cdg'][i % 4] ?? 'ams',
              opened_at: now(),
              origin_ip: '203.0.113.7',
            })),
          },
        ];
        const status = stringField(body, 'status');
        tunnel.status = status === 'degraded' ? 'degraded' : 'healthy';
        tunnel.conns_active_at = now();
        tunnel.conns_inactive_at = null;
      } else {
        tunnel.clients = [];
        tunnel.status = tunnel.conns_active_at ? 'down' : 'inactive';
        tunnel.conns_inactive_at = now();
      }
      sendJson(res, 200, { ok: true, tunnel: tunnelView(tunnel) });
      return;
    }
    sendJson(res, 404, { error: 'unknown control endpoint' });
  };

  return listenLoopback(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    if (url.pathname.startsWith('/__fake/')) return control(req, res, url.pathname);

    const prefix = '/client/v4';
    const path = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : '';
    const method = req.method ?? 'GET';
    let route: Route | undefined;
    let params: string[] = [];
    for (const candidate of routes) {
      const m = candidate.method === method ? candidate.pattern.exec(path) : null;
      if (m) {
        route = candidate;
        params = m.slice(1);
        break;
      }
    }
    const text = await readBody(req);
    // Taken before the call runs: a deleted record's name is still known to the log.
    const subject = subjectOf(`${path}${url.search}`, text, params);
    const reply = (status: number, result: ApiResult, name = route?.name ?? 'unknown') => {
      log.push({ route: name, method, path, subject, status });
      sendJson(res, status, envelope(result));
    };

    if (!route) return reply(404, fail(404, 7003, 'Could not route to the requested path'));
    const auth = req.headers.authorization;
    if (!auth?.startsWith('Bearer ')) return reply(400, fail(400, 6003, 'Invalid request headers'));
    if (auth !== `Bearer ${apiToken}`) return reply(403, fail(403, 10000, 'Authentication error'));

    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        return reply(400, fail(400, 6007, 'Malformed JSON in request body'));
      }
    }

    const rule = failures.find(
      (f) => f.route === route.name && (f.match === undefined || subject.includes(f.match)),
    );
    let injected: FailureRule | undefined;
    if (rule) {
      rule.seen += 1;
      if (rule.seen >= rule.nth && rule.seen < rule.nth + rule.count) injected = rule;
      if (rule.seen >= rule.nth + rule.count - 1) failures = failures.filter((f) => f !== rule);
    }

    if (injected?.hold) await holdCall(subject);
    if (injected && !injected.after) return injectFailure(injected);
    const result = route.handle({ params, query: url.searchParams, body });
    if (injected) return injectFailure(injected);
    return reply(result.ok ? (result.status ?? 200) : result.status, result);

    function injectFailure(f: FailureRule) {
      if (f.stale) {
        const empty = page([], url.searchParams);
        log.push({ route: route?.name ?? 'unknown', method, path, subject, status: 200 });
        sendJson(res, 200, envelope(empty));
        return;
      }
      if (f.hang) {
        // Never answer; the caller's timeout ends it. The socket is freed when the caller aborts.
        log.push({ route: route?.name ?? 'unknown', method, path, subject, status: 0 });
        return;
      }
      const headers: Record<string, string> = f.status === 429 ? { 'Retry-After': String(f.retryAfter) } : {};
      log.push({ route: route?.name ?? 'unknown', method, path, subject, status: f.status });
      sendJson(res, f.status, envelope(fail(f.status, f.code, f.message)), headers);
    }
  }, port);
}
