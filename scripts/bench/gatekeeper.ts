// Benchmark 4, Gatekeeper: requests/s and workerd CPU per request for /health, /validate and /tunnels/status/:userId.
//
// Both Workers run in one workerd started by Miniflare's JS API: the Gatekeeper as `wrangler deploy
// --dry-run` bundles it, and a bare Hono Worker (scripts/bench/workers/bare-worker.ts) as the baseline,
// told apart by Host (routes). The membership check hits its cache: a fresh member record is seeded
// in KV, so /validate measures JWT verify + KV read + JWT sign in the Worker, never the platform.
import { execFile } from 'node:child_process';
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { importJWK, type JWK, SignJWT } from 'jose';
import { Miniflare } from 'miniflare';
import { WebSocket } from 'ws';
import { startFakeCloudflare } from '../../test/support/fakes/cloudflare-api.js';
import { startFakeKickApi } from '../../test/support/fakes/kick-api.js';
import {
  createKickWebhookSender,
  type KickDelivery,
  kickSamples,
  SAMPLE_BROADCASTER,
  ulidLike,
} from '../../test/support/fakes/kick-webhooks.js';
import type { BenchContext } from './context.js';
import { childrenNamed, cpuSeconds } from './proc.js';
import { type Section, table } from './report.js';
import { fmt, kib, median, ratio } from './stats.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COMPATIBILITY_DATE = '2026-05-01';
const CONNECTIONS = 8;
const DURATION_S = 2;
const ROUNDS = 2;
const BUNDLE_TARGET_BYTES = 150 * 1024;
const VALIDATE_CPU_TARGET_MS = 1;
/** Socket cycles (open, first frame, close) per round, this many at once. */
const SOCKET_CYCLES = 240;
const SOCKET_LANES = 4;
/** Signed Kick deliveries posted per round (each one new: a repeat would be a cheaper duplicate). */
const WEBHOOKS_PER_ROUND = 600;
const PUBLIC_BASE_URL = 'http://gatekeeper.bench';
const USER_ID = 'bench-user';

const run = promisify(execFile);

/** `wrangler deploy --dry-run --outdir`: the bundle exactly as it would be uploaded. */
export async function bundle(
  config: string,
  outdir: string,
): Promise<{ file: string; wranglerLine: string }> {
  const { stdout, stderr } = await run(
    process.execPath,
    [
      join(ROOT, 'node_modules/wrangler/bin/wrangler.js'),
      'deploy',
      '--dry-run',
      '--outdir',
      outdir,
      '--config',
      config,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: 'false',
        CLOUDFLARE_CF_FETCH_ENABLED: 'false',
        NO_COLOR: '1',
      },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const wranglerLine = /Total Upload:[^\n]*/.exec(stdout + stderr)?.[0] ?? '';
  const main = /^main\s*=\s*"([^"]+)"/m.exec(await readFile(config, 'utf8'))?.[1] ?? 'index.ts';
  const base = main.split('/').pop()?.replace(/\.ts$/, '.js') ?? 'index.js';
  return { file: join(outdir, base), wranglerLine };
}

interface RouteFigures {
  requestsPerSec: number;
  cpuMsPerRequest: number;
  p50: number;
  p99: number;
  bad: number;
}

async function load(
  url: string,
  workerdPid: number,
  options: {
    method: string;
    host: string;
    headers?: Record<string, string>;
    /** A fixed number of requests, each made by `next` (instead of DURATION_S of one request). */
    each?: { amount: number; next: () => { headers: Record<string, string>; body: string } };
  },
): Promise<RouteFigures> {
  const headers = { host: options.host, 'CF-Connecting-IP': '203.0.113.7', ...options.headers };
  const cpuBefore = await cpuSeconds(workerdPid);
  const each = options.each;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    pipelining: 1,
    ...(each
      ? {
          amount: each.amount,
          requests: [
            {
              method: options.method as 'POST',
              setupRequest: (req: Record<string, unknown>) => {
                const made = each.next();
                return { ...req, headers: { ...headers, ...made.headers }, body: made.body };
              },
            },
          ],
        }
      : { duration: DURATION_S }),
    method: options.method as 'GET',
    headers,
    timeout: 10,
  });
  const cpuAfter = await cpuSeconds(workerdPid);
  return {
    requestsPerSec: result.requests.average,
    cpuMsPerRequest: ((cpuAfter - cpuBefore) * 1000) / Math.max(1, result.requests.total),
    p50: result.latency.p50,
    p99: result.latency.p99,
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

function medianOf(list: RouteFigures[]): RouteFigures {
  const pick = (f: (r: RouteFigures) => number) => median(list.map(f));
  return {
    requestsPerSec: pick((r) => r.requestsPerSec),
    cpuMsPerRequest: pick((r) => r.cpuMsPerRequest),
    p50: pick((r) => r.p50),
    p99: pick((r) => r.p99),
    bad: list.reduce((s, r) => s + r.bad, 0),
  };
}

/** One socket: opened with `headers`, `greet` sent once open (if any), closed by us after its first frame. */
function socketCycle(url: string, headers: Record<string, string>, greet?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`${url}: no frame within 10 s`));
    }, 10_000);
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`${url} answered ${res.statusCode}`));
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    ws.on('open', () => {
      if (greet !== undefined) ws.send(greet);
    });
    ws.once('message', () => ws.close(1000, 'bye'));
    ws.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * A premium member checked a moment ago (workers/src/membership/member-store.ts) in the Gatekeeper's KV,
 * and a licence for it valid for an hour, signed with the bench's key.
 */
export async function premiumMemberLicence(
  kv: { put(key: string, value: string): Promise<unknown> },
  jwk: JWK & { kid: string },
  userId: string,
  issuer: string,
): Promise<string> {
  await kv.put(
    `member:${userId}`,
    JSON.stringify({ tier: 'premium', checked_at: Date.now(), refresh_token: null }),
  );
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ tier: 'premium' })
    .setProtectedHeader({ alg: 'EdDSA', kid: jwk.kid, typ: 'JWT' })
    .setIssuer(issuer)
    .setAudience('overlay-daemon')
    .setSubject(userId)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(crypto.randomUUID())
    .sign(await importJWK(jwk, 'EdDSA'));
}

/** A member's subdomain as the Gatekeeper derives it: `o-` + base32 of HMAC-SHA256(secret, id)'s first 80 bits. */
export function subdomainOf(secret: string, userId: string): string {
  const mac = createHmac('sha256', secret).update(userId).digest();
  const bits = [...mac.subarray(0, 10)].map((b) => b.toString(2).padStart(8, '0')).join('');
  let out = 'o-';
  for (let i = 0; i < 80; i += 5)
    out += 'abcdefghijklmnopqrstuvwxyz234567'[Number.parseInt(bits.slice(i, i + 5), 2)];
  return out;
}

interface SocketTarget {
  url: string;
  headers: Record<string, string>;
  /** Sent once the socket is open. */
  greet?: string;
}

/** workerd CPU per socket cycle: SOCKET_CYCLES cycles, SOCKET_LANES at a time; `socket(i)` says what to open. */
async function socketLoad(workerdPid: number, socket: (i: number) => SocketTarget): Promise<RouteFigures> {
  const latencies: number[] = [];
  let next = 0;
  const cpuBefore = await cpuSeconds(workerdPid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: SOCKET_LANES }, async () => {
      while (next < SOCKET_CYCLES) {
        const i = next++;
        const { url, headers, greet } = socket(i);
        const t0 = performance.now();
        await socketCycle(url, headers, greet);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuSeconds(workerdPid);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requestsPerSec: SOCKET_CYCLES / seconds,
    cpuMsPerRequest: ((cpuAfter - cpuBefore) * 1000) / SOCKET_CYCLES,
    p50: at(0.5),
    p99: at(0.99),
    bad: 0,
  };
}

export async function runGatekeeper(ctx: BenchContext): Promise<Section> {
  const scratch = await mkdtemp(join(tmpdir(), 'overlay-bench-gk-'));
  const cloudflare = await startFakeCloudflare();
  const kickSender = createKickWebhookSender();
  const kick = await startFakeKickApi({ publicKeyPem: kickSender.publicKeyPem });
  let mf: Miniflare | undefined;
  let stays: WebSocket | undefined;
  try {
    const [gatekeeper, bare] = await Promise.all([
      bundle(join(ROOT, 'wrangler.toml'), join(scratch, 'gatekeeper')),
      bundle(join(ROOT, 'scripts/bench/workers/wrangler.toml'), join(scratch, 'bare')),
    ]);
    const bundleBytes = (await readFile(gatekeeper.file)).length;
    const bundleGzip = gzipSync(await readFile(gatekeeper.file)).length;
    ctx.log(`gatekeeper: bundle ${kib(bundleBytes)}, gzip ${kib(bundleGzip)} (${gatekeeper.wranglerLine})`);

    const { privateKey } = generateKeyPairSync('ed25519');
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench-key' };
    const subdomainSecret = randomBytes(32).toString('base64');
    mf = new Miniflare({
      host: '127.0.0.1',
      port: 0,
      workers: [
        {
          name: 'gatekeeper',
          modules: true,
          scriptPath: gatekeeper.file,
          modulesRoot: dirname(gatekeeper.file),
          compatibilityDate: COMPATIBILITY_DATE,
          compatibilityFlags: ['nodejs_compat'],
          routes: ['gatekeeper.bench/*'],
          bindings: {
            PUBLIC_BASE_URL,
            MEMBERSHIP_CLIENT_ID: 'bench',
            MEMBERSHIP_CLIENT_SECRET: 'bench',
            // Never reached: the member record below is fresh, so the platform is not asked.
            MEMBERSHIP_API_BASE: 'http://127.0.0.1:9',
            MEMBERSHIP_CAMPAIGN_ID: '1000',
            JWT_PRIVATE_JWK: JSON.stringify(jwk),
            CLOUDFLARE_API_TOKEN: 'test-cloudflare-token',
            CLOUDFLARE_ACCOUNT_ID: '023e105f4ecef8ad9ca31a8372d0c353',
            CLOUDFLARE_ZONE_ID: '023e105f4ecef8ad9ca31a8372d0c354',
            CLOUDFLARE_API_BASE: `${cloudflare.url}/client/v4`,
            TUNNEL_DOMAIN: 'overlays.test',
            SUBDOMAIN_SECRET: subdomainSecret,
            TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
            // Kick's public key, for the webhook's signature: from the stand-in (fetched once, then kept).
            KICK_API_URL: kick.url,
          },
          kvNamespaces: ['GATEKEEPER_KV'],
          durableObjects: {
            ONE_TIME_STORE: { className: 'OneTimeStore', useSQLite: true },
            MEMBERSHIP_RECHECK: { className: 'MembershipRecheck', useSQLite: true },
            OVERLAY_RELAY: { className: 'OverlayRelay', useSQLite: true },
            RELAY_SHARD: { className: 'RelayShard', useSQLite: true },
            KICK_CHANNEL: { className: 'KickChannel', useSQLite: true },
          },
          // The production limits (30/min, 300/min per IP) would refuse nearly every request: raised, still consulted.
          ratelimits: {
            RATE_LIMITER: { simple: { limit: 100_000_000, period: 60 } },
            VIEWER_RATE_LIMITER: { simple: { limit: 100_000_000, period: 60 } },
          },
        },
        {
          name: 'bare',
          modules: true,
          scriptPath: bare.file,
          modulesRoot: dirname(bare.file),
          compatibilityDate: COMPATIBILITY_DATE,
          routes: ['bare.bench/*'],
        },
      ],
    });
    const base = await mf.ready;
    const [workerd] = await childrenNamed(process.pid, 'workerd');
    if (workerd === undefined) throw new Error('no workerd process found under this one');

    const kv = await mf.getKVNamespace('GATEKEEPER_KV', 'gatekeeper');
    const licence = await premiumMemberLicence(kv, jwk, USER_ID, PUBLIC_BASE_URL);
    const auth = { Authorization: `Bearer ${licence}` };
    const provisioned = await mf.dispatchFetch(`${PUBLIC_BASE_URL}/tunnels/provision`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', 'CF-Connecting-IP': '203.0.113.7' },
      body: JSON.stringify({ user_id: USER_ID }),
    });
    if (provisioned.status !== 201)
      throw new Error(`provision answered ${provisioned.status}: ${await provisioned.text()}`);
    await provisioned.arrayBuffer();
    // A route that refuses is not measured: say why at once rather than time error answers.
    const validated = await mf.dispatchFetch(`${PUBLIC_BASE_URL}/validate`, {
      method: 'POST',
      headers: { ...auth, 'CF-Connecting-IP': '203.0.113.7' },
    });
    if (validated.status !== 200)
      throw new Error(`validate answered ${validated.status}: ${await validated.text()}`);
    await validated.arrayBuffer();

    // The relay: one overlay published by a publisher that stays (viewers join it), others for the
    // publisher cycles (one lane each, so no cycle replaces another's socket).
    const wsBase = base.origin.replace(/^http/, 'ws');
    const subdomain = subdomainOf(subdomainSecret, USER_ID);
    const watched = crypto.randomUUID();
    const publisher = new WebSocket(`${wsBase}/relay/publish/${watched}`, {
      headers: { host: 'gatekeeper.bench', 'CF-Connecting-IP': '203.0.113.7', ...auth },
    });
    await new Promise<void>((resolve, reject) => {
      publisher.once('message', () => resolve());
      publisher.once('error', reject);
      publisher.once('unexpected-response', (_req, res) =>
        reject(new Error(`publish answered ${res.statusCode}`)),
      );
    });
    stays = publisher;
    publisher.send(
      JSON.stringify({
        type: 'snapshot',
        init: { type: 'init', overlay: { name: 'bench', width: 1920, height: 1080 }, widgets: [] },
      }),
    );
    const lanes = Array.from({ length: SOCKET_LANES }, () => crypto.randomUUID());
    const publisherSocket =
      (host: string) =>
      (i: number): SocketTarget => ({
        url: `${wsBase}/relay/publish/${lanes[i % SOCKET_LANES]}`,
        headers: { host, 'CF-Connecting-IP': '203.0.113.7', ...auth },
      });
    // Each viewer from an address of its own: the hub allows 5 sockets of an overlay per address.
    const viewerSocket =
      (host: string) =>
      (i: number): SocketTarget => ({
        url: `${wsBase}/v/${subdomain}/${watched}/ws`,
        headers: {
          host,
          Origin: PUBLIC_BASE_URL,
          'CF-Connecting-IP': `198.51.${(i >> 8) & 255}.${i & 255}`,
        },
        greet: JSON.stringify({ action: 'init', overlayId: watched }),
      });
    // A socket that refuses is not measured: one cycle of each first.
    for (const open of [publisherSocket('gatekeeper.bench')(0), viewerSocket('gatekeeper.bench')(0)])
      await socketCycle(open.url, open.headers, open.greet);

    // Kick: the member links the sample channel; every delivery is signed afresh with a new message id.
    await kv.put(`kick:channel:${SAMPLE_BROADCASTER.user_id}`, USER_ID);
    const signDeliveries = (n: number): Promise<KickDelivery[]> =>
      Promise.all(
        Array.from({ length: n }, () => {
          const messageId = ulidLike();
          return kickSender.signedDelivery(
            'chat.message.sent',
            kickSamples.chat(SAMPLE_BROADCASTER, { messageId }),
            {
              messageId,
            },
          );
        }),
      );
    const [first] = await signDeliveries(1);
    if (!first) throw new Error('no Kick delivery was signed');
    const proven = await mf.dispatchFetch(`${PUBLIC_BASE_URL}/kick/webhook`, {
      method: 'POST',
      headers: first.headers,
      body: first.body,
    });
    const provenBody = await proven.text();
    if (proven.status !== 200 || !provenBody.includes('"stored"'))
      throw new Error(`the Kick webhook answered ${proven.status}: ${provenBody}`);
    const webhookRound = async () => {
      const deliveries = await signDeliveries(WEBHOOKS_PER_ROUND);
      let n = 0;
      return {
        amount: WEBHOOKS_PER_ROUND,
        next: () => deliveries[n++ % deliveries.length] ?? first,
      };
    };

    const routes = [
      { name: 'GET /health', method: 'GET', path: '/health', headers: {} },
      { name: 'POST /validate', method: 'POST', path: '/validate', headers: auth },
      {
        name: 'GET /tunnels/status/:userId',
        method: 'GET',
        path: `/tunnels/status/${USER_ID}`,
        headers: auth,
      },
    ];
    const rows: string[][] = [];
    const figures = new Map<string, { d: RouteFigures; b: RouteFigures }>();
    type Measured = { name: string; measure: (host: string) => Promise<RouteFigures> };
    const measured: Measured[] = [
      ...routes.map((route) => ({
        name: route.name,
        measure: (host: string) => load(`${base.origin}${route.path}`, workerd, { ...route, host }),
      })),
      {
        name: 'publisher upgrade (open, hello, close)',
        measure: (host: string) => socketLoad(workerd, publisherSocket(host)),
      },
      {
        name: "viewer upgrade (open, init, the overlay's init, close)",
        measure: (host: string) => socketLoad(workerd, viewerSocket(host)),
      },
      {
        name: 'POST /kick/webhook (signed, stored)',
        measure: async (host: string) =>
          load(`${base.origin}/kick/webhook`, workerd, { method: 'POST', host, each: await webhookRound() }),
      },
    ];
    for (const route of measured) {
      const d: RouteFigures[] = [];
      const b: RouteFigures[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        d.push(await route.measure('gatekeeper.bench'));
        b.push(await route.measure('bare.bench'));
      }
      const dm = medianOf(d);
      const bm = medianOf(b);
      figures.set(route.name, { d: dm, b: bm });
      ctx.log(
        `gatekeeper: ${route.name}: ${fmt(dm.requestsPerSec)} req/s, ${fmt(dm.cpuMsPerRequest)} ms CPU; bare ${fmt(bm.requestsPerSec)} req/s, ${fmt(bm.cpuMsPerRequest)} ms CPU`,
      );
      rows.push([
        route.name,
        fmt(dm.requestsPerSec),
        fmt(bm.requestsPerSec),
        ratio(dm.requestsPerSec, bm.requestsPerSec),
        fmt(dm.cpuMsPerRequest, 3),
        fmt(bm.cpuMsPerRequest, 3),
        fmt(dm.cpuMsPerRequest - bm.cpuMsPerRequest, 3),
        `${fmt(dm.p50)} / ${fmt(dm.p99)}`,
        `${dm.bad} / ${bm.bad}`,
      ]);
    }
    const validate = figures.get('POST /validate');
    const headlines: Section['headlines'] = [];
    if (validate) {
      headlines.push({
        benchmark: '4 gatekeeper',
        measure: '/validate workerd CPU per request',
        value: `${fmt(validate.d.cpuMsPerRequest, 3)} ms`,
        baseline: `${fmt(validate.b.cpuMsPerRequest, 3)} ms`,
        ratio: ratio(validate.d.cpuMsPerRequest, validate.b.cpuMsPerRequest),
        target: `< ${VALIDATE_CPU_TARGET_MS} ms`,
        met: validate.d.cpuMsPerRequest < VALIDATE_CPU_TARGET_MS && validate.d.bad === 0,
      });
    }
    // Reported beside /validate: what a socket and a webhook cost the edge (the free plan allows 10 ms each).
    for (const [name, measure] of [
      ['publisher upgrade (open, hello, close)', 'publisher upgrade, workerd CPU per socket'],
      ["viewer upgrade (open, init, the overlay's init, close)", 'viewer upgrade, workerd CPU per socket'],
      ['POST /kick/webhook (signed, stored)', 'signed Kick webhook, workerd CPU per delivery'],
    ] as const) {
      const f = figures.get(name);
      if (!f) continue;
      headlines.push({
        benchmark: '4 gatekeeper',
        measure,
        value: `${fmt(f.d.cpuMsPerRequest, 3)} ms`,
        baseline: `${fmt(f.b.cpuMsPerRequest, 3)} ms`,
        ratio: ratio(f.d.cpuMsPerRequest, f.b.cpuMsPerRequest),
        target: 'reported',
      });
    }
    headlines.push({
      benchmark: '4 gatekeeper',
      measure: 'Worker bundle, gzip',
      value: kib(bundleGzip),
      baseline: `${kib(gzipSync(await readFile(bare.file)).length)} (bare Hono)`,
      ratio: '—',
      target: '< 150 KiB',
      met: bundleGzip < BUNDLE_TARGET_BYTES,
    });
    return {
      title: '4. Gatekeeper in workerd',
      headlines,
      body: [
        'The Worker bundled by `wrangler deploy --dry-run --outdir` and run by Miniflare (`new Miniflare({workers: [...]})`)',
        'in one workerd process together with the baseline, a bare Hono Worker answering the same paths with fixed JSON',
        '(scripts/bench/workers/bare-worker.ts); requests go to the same port and are routed by Host. autocannon,',
        `${CONNECTIONS} keep-alive connections, ${DURATION_S} s per round, ${ROUNDS} rounds alternating, median shown.`,
        '',
        '- `/validate`: a real EdDSA licence; the Worker verifies it, reads the member record from KV, signs a fresh one.',
        '  The membership check is served from its cache (a member record checked a moment ago is seeded in KV), so the',
        '  platform is never called: this measures the Worker. The rate limiter binding is consulted on every request,',
        "  with its limit raised (production's 30/min per IP would refuse nearly all of them).",
        "  A verdict checked within the hour needs no trip to the member's Durable Object (one KV read serves",
        '  the epoch check and the tier).',
        '- `/tunnels/status/:userId`: licence verify, KV read, and two calls to the local fake Cloudflare API',
        '  (test/support/fakes/cloudflare-api.ts, in the bench process) through the Cloudflare SDK.',
        `- Sockets: ${SOCKET_CYCLES} cycles per round, ${SOCKET_LANES} at a time, each a WebSocket opened, its first frame`,
        '  read, closed by the client; CPU and latency are per cycle. A publisher upgrade carries the Premium',
        '  licence (one overlay per lane, so no cycle replaces another); a viewer upgrade (Origin of the',
        '  Gatekeeper, an address of its own) sends `init` to an overlay a publisher keeps published and reads the',
        "  overlay's `init`. The bare Worker accepts a `WebSocketPair` and sends one fixed frame.",
        `- \`POST /kick/webhook\`: ${WEBHOOKS_PER_ROUND} chat deliveries per round, each with a new message id, signed as Kick`,
        "  signs them (RSA-2048) with the stand-in's key (test/support/fakes/kick-api.ts serves the public key,",
        "  fetched once and kept); the channel is linked to the member, so each is stored by the member's KickChannel.",
        '- CPU per request: utime+stime of the workerd process over the round ÷ requests, both Workers measured the',
        "  same way. It includes workerd's own HTTP handling and Miniflare's entry routing, which the baseline pays",
        '  too; the difference column is what the Gatekeeper adds.',
        '',
        ...table(
          [
            'route',
            'gatekeeper req/s',
            'bare Hono req/s',
            'ratio',
            'gatekeeper CPU ms/req',
            'bare CPU ms/req',
            'difference ms/req',
            'gatekeeper p50 / p99 ms',
            'non-2xx + errors gatekeeper / bare',
          ],
          rows,
        ),
        '',
        `Bundle: ${kib(bundleBytes)} minified-free ESM, ${kib(bundleGzip)} gzip (node:zlib default level); wrangler says: ${gatekeeper.wranglerLine || 'n/a'}.`,
      ],
    };
  } finally {
    stays?.terminate();
    await mf?.dispose();
    await cloudflare.close();
    await kick.close();
    await rm(scratch, { recursive: true, force: true });
  }
}
