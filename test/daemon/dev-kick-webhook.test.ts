// `npm run dev:kick-webhook`: --help is a usage text a person reads; a kind the stack does not know is said
// in words with the usage, not as the stack's raw JSON.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeServer, listenLoopback } from '../support/fakes/listen.js';

const ROOT = join(import.meta.dirname, '../..');
let stack: FakeServer;

/** Runs the script with `args` against the stand-in of the stack's webhook control. */
function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts/dev-kick-webhook.ts'), ...args],
      {
        cwd: ROOT,
        env: { ...process.env, DEV_STACK_KICK_WEBHOOK_PORT: new URL(stack.url).port },
        timeout: 20_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  // As dev:stack answers: 404 with a JSON error for a kind it has no sample of.
  stack = await listenLoopback((req, res) => {
    req.resume();
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: 'POST /<kind>, kind one of: chat, follow' }));
  });
});
afterAll(() => stack.close());

describe('npm run dev:kick-webhook', () => {
  it('--help prints a usage text, not JSON, and sends nothing', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: npm run dev:kick-webhook -- \[kind\]/);
    expect(stdout).toMatch(/^ {2}kicks {6}Kicks gifted \(kicks\.gifted\)$/m);
    expect(stdout).not.toContain('{');
  });

  it('a kind the stack does not know is said in words, with the usage', async () => {
    const { code, stdout, stderr } = await run(['nonsense']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /^dev:kick-webhook: the stack did not send "nonsense": POST \/<kind>, kind one of: chat, follow\n/,
    );
    expect(stderr).toContain('Usage: npm run dev:kick-webhook');
    expect(stderr).not.toContain('{"error"');
  });
});
