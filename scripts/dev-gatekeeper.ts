// Runs the Gatekeeper locally against the fake Patreon: `npm run dev:gatekeeper`, then log in at /auth/membership.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DEFAULT_CONFIG, type RemoteConfig } from '../shared/config.js';
import { FAKE_PATREON_CAMPAIGN, startFakePatreon } from './fakes/patreon.js';

const GATEKEEPER_PORT = Number(process.env.GATEKEEPER_PORT ?? 8787);
const PATREON_PORT = Number(process.env.FAKE_PATREON_PORT ?? 8790);
const STATE_DIR = '.wrangler/dev-gatekeeper';
const ENV_FILE = `${STATE_DIR}/gatekeeper.env`;
// Wrangler's own launcher, not `npx`: signals then reach wrangler, and stopping this script stops it.
const WRANGLER = createRequire(import.meta.url).resolve('wrangler/bin/wrangler.js');
const offline = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' };

// Demo users of the fake, chosen at the fake's authorize step with `login_hint`.
const USERS = {
  'patron-premium': { patron_status: 'active_patron', tiers: [{ id: 'premium-tier', amount_cents: 500 }] },
  'patron-declined': { patron_status: 'declined_patron', tiers: [{ id: 'premium-tier', amount_cents: 500 }] },
  'never-pledged': { patron_status: null },
} as const;
const CONFIG: RemoteConfig = { ...DEFAULT_CONFIG, membership: { tiers: { 'premium-tier': 'premium' } } };

const patreon = await startFakePatreon({ port: PATREON_PORT });
for (const [id, setup] of Object.entries(USERS)) {
  await fetch(`${patreon.url}/__fake/users/${id}`, { method: 'PUT', body: JSON.stringify(setup) });
}

const { privateKey } = generateKeyPairSync('ed25519');
const vars: Record<string, string> = {
  PUBLIC_BASE_URL: `http://127.0.0.1:${GATEKEEPER_PORT}`,
  MEMBERSHIP_CLIENT_ID: 'test-client-id',
  MEMBERSHIP_CLIENT_SECRET: 'test-client-secret',
  MEMBERSHIP_AUTHORIZE_URL: `${patreon.url}/oauth2/authorize`,
  MEMBERSHIP_API_BASE: patreon.url,
  MEMBERSHIP_CAMPAIGN_ID: FAKE_PATREON_CAMPAIGN,
  APP_DEEP_LINK: 'overlay-daemon://auth',
  JWT_PRIVATE_JWK: JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid: 'dev' }),
  TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  SUBDOMAIN_SECRET: randomBytes(32).toString('base64'),
  CLOUDFLARE_API_TOKEN: 'dev-token',
  CLOUDFLARE_ACCOUNT_ID: '0'.repeat(32),
  CLOUDFLARE_ZONE_ID: '0'.repeat(32),
  TUNNEL_DOMAIN: 'overlays.localhost',
};
mkdirSync(STATE_DIR, { recursive: true });
// Single quotes: dotenv takes the JSON key literally.
writeFileSync(
  ENV_FILE,
  Object.entries(vars)
    .map(([k, v]) => `${k}='${v}'`)
    .join('\n'),
  {
    mode: 0o600,
  },
);

// The tier map lives in KV as operators keep it in production (decisions §2).
const seeded = spawnSync(
  process.execPath,
  [
    WRANGLER,
    'kv',
    'key',
    'put',
    'config',
    JSON.stringify(CONFIG),
    '--binding',
    'GATEKEEPER_KV',
    '--local',
    '--persist-to',
    STATE_DIR,
  ],
  { env: offline, stdio: ['ignore', 'ignore', 'inherit'] },
);
if (seeded.status !== 0) {
  console.error('could not seed the remote config into local KV; every login will be Free');
}

const wrangler = spawn(
  process.execPath,
  [
    WRANGLER,
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(GATEKEEPER_PORT),
    '--persist-to',
    STATE_DIR,
    '--env-file',
    ENV_FILE,
  ],
  { env: offline, stdio: 'inherit' },
);

console.log(`fake Patreon on ${patreon.url}; users: ${Object.keys(USERS).join(', ')}`);
console.log(
  `log in: open http://127.0.0.1:${GATEKEEPER_PORT}/auth/membership, then add &login_hint=<user> to the fake's authorize URL`,
);

// Ctrl-C stops wrangler first; the fake closes once wrangler has exited.
process.on('SIGINT', () => wrangler.kill('SIGINT'));
process.on('SIGTERM', () => wrangler.kill('SIGTERM'));
wrangler.on('exit', async (code) => {
  await patreon.close();
  process.exit(code ?? 0);
});
