// Starts the Gatekeeper under `wrangler dev` against the fake Patreon and fake Cloudflare API, all on loopback, offline.
import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_CONFIG, type RemoteConfig } from '../../shared/config.js';
import { FAKE_CLOUDFLARE_TOKEN, startFakeCloudflare } from './fakes/cloudflare-api.js';
import type { FakeServer } from './fakes/listen.js';
import { FAKE_PATREON_CAMPAIGN, startFakePatreon } from './fakes/patreon.js';
import { spawnInGroup, stopGroup } from './process-group.js';

// Wrangler's own launcher rather than `npx`, so signals reach it and stopping us stops it.
const WRANGLER = createRequire(import.meta.url).resolve('wrangler/bin/wrangler.js');
const OFFLINE = { WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' };

/** Demo members of the fake platform, picked with `login_hint=<id>` at its authorize page. */
export const DEMO_USERS = {
  'patron-premium': { patron_status: 'active_patron', tiers: [{ id: 'premium-tier', amount_cents: 500 }] },
  'patron-declined': { patron_status: 'declined_patron', tiers: [{ id: 'premium-tier', amount_cents: 500 }] },
  'never-pledged': { patron_status: null },
} as const;

interface LocalStackOptions {
  /** Where wrangler keeps KV and Durable Object state, and the generated env file. */
  stateDir: string;
  gatekeeperPort?: number;
  patreonPort?: number;
  cloudflarePort?: number;
  tunnelDomain?: string;
  /** Lines from wrangler (default: dropped). */
  log?: (line: string) => void;
  startTimeoutMs?: number;
  /** More of the Gatekeeper's variables and secrets (e.g. KICK_API_URL at a stand-in), over the defaults. */
  vars?: Record<string, string>;
}

export interface LocalStack {
  gatekeeperUrl: string;
  patreon: FakeServer;
  cloudflare: FakeServer;
  tunnelDomain: string;
  /** Settles when `wrangler dev` exits, by itself or through close(), with its exit status. */
  exited: Promise<number | null>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A throwaway certificate for `*.<domain>`, for the stand-in connector's HTTPS "public" port (the edge speaks
 * HTTPS, and browsers open the overlay's WebSocket only from a secure page). Needs openssl on PATH; throws without it.
 */
export function makeEdgeCertificate(
  dir: string,
  domain: string,
  days: number,
): { cert: string; key: string } {
  const cert = join(dir, 'edge-cert.pem');
  const key = join(dir, 'edge-key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      String(days),
      '-subj',
      `/CN=*.${domain}`,
      '-addext',
      `subjectAltName=DNS:*.${domain}`,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const log = options.log ?? (() => {});
  const tunnelDomain = options.tunnelDomain ?? 'overlays.localhost';
  const patreon = await startFakePatreon({ port: options.patreonPort ?? 0 });
  const cloudflare = await startFakeCloudflare(options.cloudflarePort ?? 0);
  for (const [id, setup] of Object.entries(DEMO_USERS)) {
    await fetch(`${patreon.url}/__fake/users/${id}`, { method: 'PUT', body: JSON.stringify(setup) });
  }

  const gatekeeperPort = options.gatekeeperPort || (await freePort());
  const inspectorPort = await freePort();
  const gatekeeperUrl = `http://127.0.0.1:${gatekeeperPort}`;
  const { privateKey } = generateKeyPairSync('ed25519');
  const vars: Record<string, string> = {
    PUBLIC_BASE_URL: gatekeeperUrl,
    MEMBERSHIP_CLIENT_ID: 'test-client-id',
    MEMBERSHIP_CLIENT_SECRET: 'test-client-secret',
    MEMBERSHIP_AUTHORIZE_URL: `${patreon.url}/oauth2/authorize`,
    MEMBERSHIP_API_BASE: patreon.url,
    MEMBERSHIP_CAMPAIGN_ID: FAKE_PATREON_CAMPAIGN,
    APP_DEEP_LINK: 'overlay-daemon://auth',
    JWT_PRIVATE_JWK: JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid: 'local-stack' }),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SUBDOMAIN_SECRET: randomBytes(32).toString('base64'),
    CLOUDFLARE_API_TOKEN: FAKE_CLOUDFLARE_TOKEN,
    CLOUDFLARE_ACCOUNT_ID: '023e105f4ecef8ad9ca31a8372d0c353',
    CLOUDFLARE_ZONE_ID: '023e105f4ecef8ad9ca31a8372d0c354',
    CLOUDFLARE_API_BASE: `${cloudflare.url}/client/v4`,
    TUNNEL_DOMAIN: tunnelDomain,
    TUNNEL_ORIGIN_SERVICE: 'http://localhost:7890',
    ...options.vars,
  };
  mkdirSync(options.stateDir, { recursive: true });
  const envFile = join(options.stateDir, 'gatekeeper.env');
  // Single quotes: dotenv takes the JSON key literally. The file holds a private key: 0600.
  writeFileSync(
    envFile,
    Object.entries(vars)
      .map(([k, v]) => `${k}='${v}'`)
      .join('\n'),
    { mode: 0o600 },
  );

  // The platform's tier id → premium lives in KV, where operators keep it (decisions §2).
  const config: RemoteConfig = {
    ...DEFAULT_CONFIG,
    membership: { tiers: { 'premium-tier': 'premium' } },
    // The stand-ins' credentials (test/support/fakes/twitch.ts, youtube.ts), as an operator publishes theirs.
    platforms: { twitch: { client_id: 'fake-client-id' }, youtube: { api_key: 'dev-stack-youtube-key' } },
  };
  const env = { ...process.env, ...OFFLINE };
  const seeded = spawnSync(
    process.execPath,
    [
      WRANGLER,
      'kv',
      'key',
      'put',
      'config',
      JSON.stringify(config),
      '--binding',
      'GATEKEEPER_KV',
      '--local',
      '--persist-to',
      options.stateDir,
    ],
    { env, encoding: 'utf8', timeout: 60_000 },
  );
  if (seeded.status !== 0) log(`could not seed the remote config into local KV: ${seeded.stderr}`);

  // In a process group of its own: wrangler runs workerd and esbuild, and close() stops them all.
  const wrangler: ChildProcess = spawnInGroup(
    process.execPath,
    [
      WRANGLER,
      'dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(gatekeeperPort),
      '--inspector-port',
      String(inspectorPort),
      '--persist-to',
      options.stateDir,
      '--env-file',
      envFile,
      '--show-interactive-dev-session=false',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => wrangler.once('exit', (code) => resolve(code)));
  for (const stream of [wrangler.stdout, wrangler.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line.trim()) log(`[wrangler] ${line}`);
    });
  }
  const close = async () => {
    // The whole group, also when wrangler itself is gone: a workerd it left behind goes too.
    await stopGroup(wrangler, { graceMs: 5000 });
    await Promise.all([patreon.close(), cloudflare.close()]);
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (wrangler.exitCode !== null) {
      await close();
      throw new Error(`wrangler dev exited with status ${wrangler.exitCode}`);
    }
    try {
      const res = await fetch(`${gatekeeperUrl}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await close();
      throw new Error('wrangler dev did not answer /health in time');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { gatekeeperUrl, patreon, cloudflare, tunnelDomain, exited, close };
}
