// Runs the Gatekeeper locally against the fake Patreon and Cloudflare API: `npm run dev:gatekeeper`, then log in at /auth/membership.
import { DEMO_USERS, startLocalStack } from '../test/support/local-stack.js';

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const STATE_DIR = '.wrangler/dev-gatekeeper';

console.log('starting the Gatekeeper under wrangler dev…');
const stack = await startLocalStack({
  stateDir: STATE_DIR,
  gatekeeperPort: port('GATEKEEPER_PORT', 8787),
  patreonPort: port('FAKE_PATREON_PORT', 8790),
  log: (line) => console.log(line),
});

console.log(`fake Patreon on ${stack.patreon.url}; users: ${Object.keys(DEMO_USERS).join(', ')}`);
console.log(
  `fake Cloudflare API on ${stack.cloudflare.url} (GET /__fake/state shows tunnels and DNS records)`,
);
console.log(
  `log in: open ${stack.gatekeeperUrl}/auth/membership, then add &login_hint=<user> to the fake's authorize URL`,
);

// Ctrl-C stops wrangler first, then the fakes; wrangler stopping by itself takes the fakes down too.
let stopping = false;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await stack.close();
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
void stack.exited.then((code) => stop(code ?? 0));
