// `npm run bench`: runs every benchmark in turn against its baseline and writes BENCHMARKS.md at the repository root.
//
// Options: --only a,b (fanout memory pages gatekeeper screen growth actions journal platforms kick chat relay), --out FILE (default BENCHMARKS.md).
// BENCH_CPU_PROF=DIR starts the server children with --cpu-prof so their profiles land in DIR.
import { mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchContext } from './context.js';
import { machineInfo } from './machine.js';
import { type Section, writeReport } from './report.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Each benchmark's time budget: one past it is abandoned, so a stuck run ends (a whole run takes about ten minutes: seven before the relay at scale, which adds two to four). */
const BUDGET_MS: Record<string, number> = {
  fanout: 90_000,
  memory: 200_000,
  pages: 45_000,
  gatekeeper: 150_000,
  screen: 120_000,
  growth: 70_000,
  actions: 100_000,
  journal: 120_000,
  platforms: 60_000,
  kick: 60_000,
  chat: 90_000,
  relay: 360_000,
};

type Runner = (ctx: BenchContext) => Promise<Section[]>;

const BENCHMARKS: Record<string, { title: string; run: Runner }> = {
  fanout: {
    title: '1. Fan-out',
    run: async (ctx) => {
      const { runFanout } = await import('./fanout.js');
      const { section, result } = await runFanout(ctx);
      shared.fanout = result;
      return [section];
    },
  },
  memory: {
    title: '2. Memory per connection',
    run: async (ctx) => [await (await import('./memory.js')).runMemory(ctx)],
  },
  pages: {
    title: '3. Page serving',
    run: async (ctx) => [await (await import('./page-serving.js')).runPageServing(ctx)],
  },
  gatekeeper: {
    title: '4. Gatekeeper',
    run: async (ctx) => [await (await import('./gatekeeper.js')).runGatekeeper(ctx)],
  },
  screen: {
    title: '5. Event to screen',
    run: async (ctx) => [await (await import('./event-to-screen.js')).runEventToScreen(ctx)],
  },
  growth: {
    title: '6. Growth',
    run: async (ctx) => [await (await import('./growth.js')).runGrowth(ctx, shared.fanout)],
  },
  actions: {
    title: '7. Actions',
    run: async (ctx) => [await (await import('./actions.js')).runActions(ctx)],
  },
  journal: {
    title: '8. Journal',
    run: async (ctx) => [await (await import('./journal.js')).runJournal(ctx)],
  },
  platforms: {
    title: '9. Platforms',
    run: async (ctx) => [await (await import('./platforms.js')).runPlatforms(ctx)],
  },
  kick: {
    title: '10. Kick',
    run: async (ctx) => [await (await import('./kick.js')).runKick(ctx)],
  },
  chat: {
    title: '11. Chat',
    run: async (ctx) => [await (await import('./chat.js')).runChat(ctx)],
  },
  relay: {
    title: '12. Relay at scale',
    run: async (ctx) => [await (await import('./relay-scale.js')).runRelayScale(ctx)],
  },
};

/** Results one benchmark hands to a later one (growth reuses the fan-out sizes). */
const shared: { fanout?: import('./fanout.js').FanoutResult } = {};

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
    }),
  ]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { only: { type: 'string' }, out: { type: 'string' } },
  });
  const names = values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(BENCHMARKS);
  for (const name of names) if (!BENCHMARKS[name]) throw new Error(`unknown benchmark "${name}"`);
  const cpuProfileDir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
  if (cpuProfileDir) await mkdir(cpuProfileDir, { recursive: true });
  const started = performance.now();
  const ctx: BenchContext = {
    log: (line) =>
      process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`),
    ...(cpuProfileDir ? { cpuProfileDir } : {}),
  };
  const machine = machineInfo();
  const date = new Date();
  const sections: Section[] = [];
  const failures: { title: string; error: string }[] = [];
  for (const name of names) {
    const bench = BENCHMARKS[name];
    if (!bench) continue;
    ctx.log(`${bench.title}: starting`);
    try {
      sections.push(...(await withTimeout(bench.run(ctx), BUDGET_MS[name] ?? 60_000, bench.title)));
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      ctx.log(`${bench.title}: FAILED: ${error}`);
      failures.push({ title: bench.title, error });
    }
  }
  const out = resolve(ROOT, values.out ?? 'BENCHMARKS.md');
  await writeReport(out, {
    machine,
    date,
    durationSec: (performance.now() - started) / 1000,
    loadAverageEnd: loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
    sections,
    failures,
  });
  ctx.log(`wrote ${out}`);
  // Keep-alive agents and Chromium's leftovers must not hold the run open.
  process.exit(failures.length ? 1 : 0);
}

await main();
