// `npm run deploy` runs this before `wrangler deploy`: it refuses a wrangler.toml still holding the local
// placeholders (the all-zero KV id, a PUBLIC_BASE_URL on this machine), saying what to set.
//
// Usage: tsx scripts/check-deploy.ts [--config wrangler.toml]
import { parseArgs } from 'node:util';
import { experimental_readRawConfig } from 'wrangler';

interface Problem {
  what: string;
  fix: string;
}

/** What stands between this configuration and a working deployment. */
export function deployProblems(config: {
  kv_namespaces?: { binding: string; id?: string }[];
  vars?: Record<string, unknown>;
}): Problem[] {
  const problems: Problem[] = [];
  const kv = config.kv_namespaces?.find((n) => n.binding === 'GATEKEEPER_KV');
  if (!kv?.id || /^0+$/.test(kv.id)) {
    problems.push({
      what: 'the GATEKEEPER_KV namespace id in wrangler.toml is the placeholder',
      fix: 'run "npx wrangler kv namespace create GATEKEEPER_KV" and put the id it prints in [[kv_namespaces]]',
    });
  }
  const base = config.vars?.PUBLIC_BASE_URL;
  let host = '';
  try {
    host = typeof base === 'string' ? new URL(base).hostname : '';
  } catch {
    host = '';
  }
  if (!host || host === 'localhost' || host === '[::1]' || /^127\./.test(host) || host.endsWith('.invalid')) {
    problems.push({
      what: `PUBLIC_BASE_URL is ${typeof base === 'string' ? `"${base}"` : 'not set'}, not the Worker's public address`,
      fix: 'set [vars] PUBLIC_BASE_URL to https://<your worker>.workers.dev or your custom domain (licences name it as issuer, and Patreon redirects to it)',
    });
  }
  return problems;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { config: { type: 'string' } } });
  const { rawConfig } = experimental_readRawConfig({ config: values.config ?? 'wrangler.toml' });
  const problems = deployProblems(rawConfig);
  if (problems.length === 0) return 0;
  process.stderr.write('Not deploying: wrangler.toml is not set up for production yet.\n');
  for (const p of problems) process.stderr.write(`  - ${p.what}: ${p.fix}\n`);
  process.stderr.write('See docs/deploying.md for every step.\n');
  return 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main();
