// Runs `overlay-daemon` as a user does, a child process on its TypeScript sources, and collects what it prints.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI's entry, run under tsx from the sources. */
export const ENTRY = fileURLToPath(new URL('../daemon/fixtures/cli-entry.ts', import.meta.url));
const running = new Set<ChildProcess>();

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The exit status (null when killed by a signal). */
  exited: Promise<number | null>;
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How the CLI is run: as another user, or under a command that changes its rights (e.g. `setpriv …`). */
export interface CliAs {
  uid?: number;
  gid?: number;
  /** A command and its arguments that run the CLI (node and its arguments follow them). */
  prefix?: string[];
}

/** Starts the CLI with `args`; `env` is laid over this process's environment; `as` runs it otherwise. */
export function spawnCli(args: string[], env: Record<string, string> = {}, as: CliAs = {}): CliRun {
  const { prefix = [], ...user } = as;
  const [file, ...before] = [...prefix, process.execPath];
  const child = spawn(file!, [...before, '--import', 'tsx', ENTRY, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
    ...user,
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs the CLI to its end, bounded: killed after `timeoutMs`. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<CliResult> {
  const run = spawnCli(args, env);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** For afterEach/afterAll: kills every CLI process a test left running. */
export function killCliProcesses(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}
