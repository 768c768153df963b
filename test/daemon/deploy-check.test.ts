// `npm run deploy` refuses a wrangler.toml that still holds the local placeholders, and says what to set.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'deploy-check-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function check(toml: string): Promise<{ code: number; stderr: string }> {
  const file = join(dir, `wrangler-${Math.random().toString(36).slice(2)}.toml`);
  await writeFile(file, toml);
  try {
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts/check-deploy.ts'), '--config', file],
      { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
    );
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

const config = (kvId: string, baseUrl: string) => `name = "overlay-gatekeeper"
main = "workers/src/index.ts"
compatibility_date = "2026-05-01"
[vars]
PUBLIC_BASE_URL = "${baseUrl}"
[[kv_namespaces]]
binding = "GATEKEEPER_KV"
id = "${kvId}"
`;

describe('the deploy check', () => {
  it("refuses the repository's own placeholders, naming each and what to set", async () => {
    const result = await check(config('00000000000000000000000000000000', 'http://127.0.0.1:8787'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Not deploying');
    expect(result.stderr).toContain('npx wrangler kv namespace create GATEKEEPER_KV');
    expect(result.stderr).toContain('PUBLIC_BASE_URL is "http://127.0.0.1:8787"');
    expect(result.stderr).toContain('docs/deploying.md');
  }, 30_000);

  it('lets a configured Worker through', async () => {
    const result = await check(
      config('3f1e2d4c5b6a79881726354413f1e2d4', 'https://gatekeeper.example.workers.dev'),
    );
    expect(result).toEqual({ code: 0, stderr: '' });
  }, 30_000);
});
