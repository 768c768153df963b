// Benchmark 2, memory: resident memory of the server process per idle subscribed WebSocket connection at N = 1000.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerChild } from './child.js';
import { Subscribers, type Target } from './clients.js';
import { type BenchContext, startBaselineChild, startDaemonChild } from './context.js';
import { rssBytes } from './proc.js';
import { type Section, table } from './report.js';
import { fmt, kib, ratio } from './stats.js';

const N = 1000;
const TARGET_BYTES = 64 * 1024;

interface MemoryFigures {
  before: number;
  after: number;
  perConnection: number;
}

/** RSS after two full GCs in the child, once the connections have settled. */
async function settledRss(child: ServerChild): Promise<number> {
  await sleep(300);
  await child.gc();
  await sleep(100);
  return rssBytes(child.pid);
}

async function measure(child: ServerChild, target: Target, overlayId: string): Promise<MemoryFigures> {
  // Warm the code paths (page, upgrade, init) so that first-use compilation is not counted as per-connection memory.
  const warm = new Subscribers(target);
  await warm.add(20, [overlayId]);
  await warm.close();
  const before = await settledRss(child);
  const subs = new Subscribers(target);
  try {
    await subs.add(N, [overlayId]);
    const after = await settledRss(child);
    return { before, after, perConnection: (after - before) / N };
  } finally {
    await subs.close();
  }
}

export async function runMemory(ctx: BenchContext): Promise<Section> {
  const daemon = await startDaemonChild(ctx);
  let d: MemoryFigures;
  try {
    d = await measure(daemon, { port: daemon.port, adminKey: daemon.adminKey }, daemon.overlayIds[0] ?? '');
  } finally {
    await daemon.stop();
  }
  ctx.log(`memory: daemon ${kib(d.perConnection)} per connection`);
  const bare = await startBaselineChild(ctx, 'bare-broadcast-server');
  let b: MemoryFigures;
  try {
    b = await measure(bare, { port: bare.ready.port }, 'bare');
  } finally {
    await bare.stop();
  }
  ctx.log(`memory: baseline ${kib(b.perConnection)} per connection`);
  const row = (name: string, m: MemoryFigures) => [
    name,
    `${fmt(m.before / 2 ** 20)} MiB`,
    `${fmt(m.after / 2 ** 20)} MiB`,
    kib(m.perConnection),
  ];
  return {
    title: '2. Memory per idle subscribed connection',
    headlines: [
      {
        benchmark: '2 memory',
        measure: `RSS per idle subscribed connection, N=${N}`,
        value: kib(d.perConnection),
        baseline: kib(b.perConnection),
        ratio: ratio(d.perConnection, b.perConnection),
        target: '< 64 KiB',
        met: d.perConnection < TARGET_BYTES,
      },
    ],
    body: [
      `VmRSS of the server process (/proc/<pid>/status) after two full GCs (the child runs with --expose-gc; the GC is`,
      `asked for over IPC), before and after ${N} clients subscribed through the real flow and then sat idle; 20 clients`,
      'connected and left first so that code compiled on first use is not counted. Fresh processes for each server.',
      '',
      ...table(
        ['server', 'RSS before', `RSS with ${N} clients`, 'per connection'],
        [row('daemon', d), row('baseline (bare ws)', b)],
      ),
    ],
  };
}
