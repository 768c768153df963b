// What the runner hands every benchmark: progress logging, optional CPU profiling, temporary data directories.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerChild, startServerChild } from './child.js';

export interface BenchContext {
  log(line: string): void;
  /** When set, server children write V8 CPU profiles here (BENCH_CPU_PROF). */
  cpuProfileDir?: string;
}

export interface DaemonChild extends ServerChild {
  port: number;
  adminKey: string;
  overlayIds: string[];
  dataDir: string;
}

/** The real daemon in a child process, on a fresh data directory (removed on stop). */
export async function startDaemonChild(ctx: BenchContext, extraArgs: string[] = []): Promise<DaemonChild> {
  const dataDir = await mkdtemp(join(tmpdir(), 'overlay-bench-'));
  const child = await startServerChild('daemon-server', {
    args: ['--data-dir', dataDir, ...extraArgs],
    ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}),
  });
  const { adminKey, overlayIds } = child.ready;
  if (!adminKey || !overlayIds?.length) throw new Error('the daemon reported no admin key or overlay');
  return {
    ...child,
    port: child.ready.port,
    adminKey,
    overlayIds,
    dataDir,
    async stop() {
      await child.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A baseline server (scripts/bench/servers/<name>.ts) in a child process started the same way. */
export async function startBaselineChild(
  ctx: BenchContext,
  name: string,
  args: string[] = [],
): Promise<ServerChild> {
  return startServerChild(name, {
    args,
    ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}),
  });
}
