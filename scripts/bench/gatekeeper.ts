// Benchmark 4, Gatekeeper: requests/s and workerd CPU per request for /health, /validate and /tunnels/status/:userId.
//
// Both Workers run in one workerd started by Miniflare's JS API: the Gatekeeper as `wrangler deploy
// --dry-run` bundles it, and a bare Hono Worker (scripts/bench/workers/bare-worker.ts) as the baseline,
// told apart by Host (routes). The membership check hits its cache: a fresh member record is seeded
// in KV, so /validate measures JWT verify + KV read + JWT sign in the Worker, never the platform.
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { importJWK, SignJWT } from 'jose';
import { Miniflare } from 'miniflare';
import { startFakeCloudflare } from '../../test/support/fakes/cloudflare-api.js';
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
const VALIDATE_CPU_TARGET_MS = 2;
const PUBLIC_BASE_URL = 'http://gatekeeper.bench';
const USER_ID = 'bench-user';

const run = promisify(execFile);

/** `wrangler deploy --dry-run --outdir`: the bundle exactly as it would be uploaded. */
async function bundle(config: string, outdir: string): Promise<{ file: string; wranglerLine: string }> {
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
  options: { method: string; host: string; headers?: Record<string, string> },
): Promise<RouteFigures> {
  const cpuBefore = await cpuSeconds(workerdPid);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: DURATION_S,
    method: options.method,
    headers: { host: options.host, 'CF-Connecting-IP': '203.0.113.7', ...options.headers },
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

export async function runGatekeeper(ctx: BenchContext): Promise<Section> {
  const scratch = await mkdtemp(join(tmpdir(), 'overlay-bench-gk-'));
  const cloudflare = await startFakeCloudflare();
  let mf: Miniflare | undefined;
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
            SUBDOMAIN_SECRET: randomBytes(32).toString('base64'),
            TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
          },
          kvNamespaces: ['GATEKEEPER_KV'],
          durableObjects: {
            ONE_TIME_STORE: { className: 'OneTimeStore', useSQLite: true },
            MEMBERSHIP_RECHECK: { className: 'MembershipRecheck', useSQLite: true },
          },
          // The production limit (30/min per IP) would refuse nearly every request: raised, still consulted.
          ratelimits: { RATE_LIMITER: { simple: { limit: 100_000_000, period: 60 } } },
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

    // A premium member checked a moment ago (workers/src/membership/member-store.ts), and its licence.
    const kv = await mf.getKVNamespace('GATEKEEPER_KV', 'gatekeeper');
    await kv.put(
      `member:${USER_ID}`,
      JSON.stringify({ tier: 'premium', checked_at: Date.now(), refresh_token: null }),
    );
    const now = Math.floor(Date.now() / 1000);
    const licence = await new SignJWT({ tier: 'premium' })
      .setProtectedHeader({ alg: 'EdDSA', kid: jwk.kid, typ: 'JWT' })
      .setIssuer(PUBLIC_BASE_URL)
      .setAudience('overlay-daemon')
      .setSubject(USER_ID)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .setJti(crypto.randomUUID())
      .sign(await importJWK(jwk, 'EdDSA'));
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
    for (const route of routes) {
      const d: RouteFigures[] = [];
      const b: RouteFigures[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        d.push(await load(`${base.origin}${route.path}`, workerd, { ...route, host: 'gatekeeper.bench' }));
        b.push(await load(`${base.origin}${route.path}`, workerd, { ...route, host: 'bare.bench' }));
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
        target: '< 2 ms',
        met: validate.d.cpuMsPerRequest < VALIDATE_CPU_TARGET_MS && validate.d.bad === 0,
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
        '- `/tunnels/status/:userId`: licence verify, KV read, and two calls to the local fake Cloudflare API',
        '  (test/support/fakes/cloudflare-api.ts, in the bench process) through the Cloudflare SDK.',
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
    await mf?.dispose();
    await cloudflare.close();
    await rm(scratch, { recursive: true, force: true });
  }
}
