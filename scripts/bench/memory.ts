// Benchmark 2, memory: resident memory of the server process per idle subscribed WebSocket connection at N = 1000.

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerChild } from './child.js';
import { Subscribers, type Target } from './clients.js';
import { type BenchContext, startBaselineChild, startDaemonChild } from './context.js';
import { residentBytes } from './proc.js';
import { type Section, table } from './report.js';
import { fmt, kib, ratio } from './stats.js';

const N = 1000;
const TARGET_BYTES = 64 * 1024;
/**
 * How long a server is left alone before an idle reading. V8's memory reducer runs a few seconds after
 * allocation stops and gives back the young generation that a burst of work made grow; a process whose
 * connections sit idle (overlays between events) is in that state, so that is where "per idle
 * connection" is read. Measured: the young generation is back at 1–2 MiB well within this time.
 */
const IDLE_MS = 10_000;

interface Reading {
  rss: number;
  /** RssAnon: the part of RSS the process allocated (what connections can add to). */
  anon: number;
  heapUsed: number;
  /** The young generation's committed size after the GCs (part of RssAnon). */
  young: number;
}

interface MemoryFigures {
  /** What the clients are measured against: the settled reading before they came. */
  before: Reading;
  /** Before the clients came, settled (see `steady`). */
  first: Reading;
  /** Settled, with the clients gone. */
  after: Reading;
  /** Read 300 ms after the last client subscribed. */
  burst: Reading;
  /** Settled, with the clients connected and idle. */
  idle: Reading;
}

/** RSS and V8 heap in use after two full GCs in the child, once the connections have settled. */
async function settled(child: ServerChild, waitMs: number): Promise<Reading> {
  await sleep(waitMs);
  const { heapUsed, young } = await child.gc();
  await sleep(100);
  return { ...(await residentBytes(child.pid)), heapUsed, young };
}

/** A reading counts as settled once VmRSS has held within this for STEADY_MS (at most STEADY_MAX_MS). */
const STEADY_BYTES = 256 * 1024;
/** Longer than the 8 s after a full GC at which V8's memory reducer gives back what the heap no longer needs. */
const STEADY_MS = 12_000;
const STEADY_MAX_MS = 36_000;

/**
 * A settled reading, as anyone outside the process can take it: `firstWaitMs` after the last traffic, two
 * full GCs, then VmRSS read from /proc every second, untouched, until it has held within STEADY_BYTES for
 * STEADY_MS. A process gives pages back for a while after a burst of work (V8's memory reducer, some 8 s
 * after a full GC; the allocator): the daemon ten MiB and more after it starts. A GC asked for every second
 * puts the memory reducer off each time, so a reading taken that way held "steady" above what the process
 * gave back as soon as the GCs stopped, while the clients connected (it read the daemon's clients at
 * −5 KiB each).
 */
async function steady(child: ServerChild, firstWaitMs: number): Promise<Reading> {
  await sleep(firstWaitMs);
  const { heapUsed, young } = await child.gc();
  const started = performance.now();
  let last = await residentBytes(child.pid);
  let since = started;
  while (performance.now() - started < STEADY_MAX_MS) {
    await sleep(1000);
    const now = await residentBytes(child.pid);
    if (Math.abs(now.rss - last.rss) > STEADY_BYTES) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= STEADY_MS) return { ...now, heapUsed, young };
  }
  return { ...last, heapUsed, young };
}

async function measure(child: ServerChild, target: Target, overlayId: string): Promise<MemoryFigures> {
  // Warm the code paths (page, upgrade, init) so that first-use compilation is not counted as per-connection memory.
  const warm = new Subscribers(target);
  await warm.add(20, [overlayId]);
  await warm.close();
  const first = await steady(child, IDLE_MS);
  const subs = new Subscribers(target);
  let burst: Reading;
  let idle: Reading;
  try {
    await subs.add(N, [overlayId]);
    burst = await settled(child, 300);
    idle = await steady(child, IDLE_MS);
  } finally {
    await subs.close();
  }
  // The reading after they left is shown beside the figure: a process that gave back, after they left, pages
  // it held before they came (the daemon has: V8's slack from its start-up) reads dearer against it.
  const after = await steady(child, IDLE_MS);
  return { before: first, first, after, burst, idle };
}

const perConnection = (m: MemoryFigures, at: 'burst' | 'idle', field: Exclude<keyof Reading, 'young'>) =>
  (m[at][field] - m.before[field]) / N;
/** The same figure against the settled reading after the clients left (VmRSS). */
const perConnectionAfter = (m: MemoryFigures) => (m.idle.rss - m.after.rss) / N;

/** One server's figure with its three readings and the young generation at each, for the log. */
function readingsLine(who: string, m: MemoryFigures): string {
  const three = (field: 'rss' | 'anon' | 'young') =>
    [m.first, m.idle, m.after].map((r) => kib(r[field])).join(' / ');
  return `memory: ${who} ${kib(perConnection(m, 'idle', 'rss'))} VmRSS per idle connection (VmRSS before / idle / after ${three('rss')}, RssAnon ${three('anon')}, young generation ${three('young')})`;
}

export async function runMemory(ctx: BenchContext): Promise<Section> {
  // Both servers at once, each in its own process: every settled reading waits up to half a minute, and
  // what one server's process holds does not depend on the other's.
  const daemon = await startDaemonChild(ctx);
  const bare = await startBaselineChild(ctx, 'bare-broadcast-server');
  let d: MemoryFigures;
  let b: MemoryFigures;
  try {
    [d, b] = await Promise.all([
      measure(daemon, { port: daemon.port, adminKey: daemon.adminKey }, daemon.overlayIds[0] ?? ''),
      measure(bare, { port: bare.ready.port }, 'bare'),
    ]);
  } finally {
    await Promise.all([daemon.stop(), bare.stop()]);
  }
  ctx.log(readingsLine('daemon', d));
  ctx.log(readingsLine('baseline', b));
  const mib = (r: Reading) => `${fmt(r.rss / 2 ** 20)} / ${fmt(r.anon / 2 ** 20)} MiB`;
  const row = (name: string, m: MemoryFigures) => [
    name,
    mib(m.first),
    mib(m.idle),
    mib(m.after),
    kib(perConnection(m, 'idle', 'rss')),
    kib(perConnectionAfter(m)),
    kib(perConnection(m, 'idle', 'anon')),
    kib(perConnection(m, 'idle', 'heapUsed')),
    kib(perConnection(m, 'burst', 'anon')),
  ];
  const dIdle = perConnection(d, 'idle', 'rss');
  const bIdle = perConnection(b, 'idle', 'rss');
  return {
    title: '2. Memory per idle subscribed connection',
    headlines: [
      {
        benchmark: '2 memory',
        measure: `settled VmRSS per idle subscribed connection, N=${N}`,
        value: kib(dIdle),
        baseline: kib(bIdle),
        ratio: ratio(dIdle, bIdle),
        target: '< 64 KiB and ≤ 1.3× baseline',
        // RSS that fell while clients were added is no reading (the process gave pages back meanwhile).
        met: dIdle > 0 && bIdle > 0 && dIdle < TARGET_BYTES && dIdle <= 1.3 * bIdle,
      },
      {
        benchmark: '2 memory',
        measure: `V8 heap per idle subscribed connection, N=${N}`,
        value: kib(perConnection(d, 'idle', 'heapUsed')),
        baseline: kib(perConnection(b, 'idle', 'heapUsed')),
        ratio: ratio(perConnection(d, 'idle', 'heapUsed'), perConnection(b, 'idle', 'heapUsed')),
        // What the server keeps in objects per connection: the steady figure where the host reclaims pages.
        target: 'reported',
      },
    ],
    body: [
      'VmRSS of the server process as anyone outside it reads it (/proc/<pid>/status), settled: after two full GCs',
      '(the child runs with --expose-gc; the GC is asked for over IPC), then read every second, untouched, until it has held',
      `within ${STEADY_BYTES / 1024} KiB for ${STEADY_MS / 1000} s (at most ${STEADY_MAX_MS / 1000} s; the GCs ${IDLE_MS / 1000} s after the last traffic), before and with ${N} clients`,
      'subscribed through the real flow (page load for a token, WebSocket, `init`, reply) and sitting idle; 20 clients',
      'connected and left first so that code compiled on first use is not counted. Both servers are measured at',
      'the same time, each in its own fresh process. A process gives pages back for a while after a burst of work',
      "(V8's memory reducer, the allocator): the daemon ten MiB and more some 15 s after it starts, which is why each",
      'reading waits until VmRSS holds. The figure against the settled reading after the clients left is shown',
      'beside it: where it reads higher, the process gave back after they left pages it held before they came.',
      'RssAnon (the anonymous part of VmRSS: heap, buffers, stacks) and the V8 heap in use per connection (what the',
      'server\'s own objects cost) are shown too. "0.3 s after the burst" adds the young generation that the burst of',
      'page loads and handshakes made V8 grow (up to 16 MiB here): allocation churn, not memory any connection holds.',
      '',
      ...table(
        [
          'server',
          'VmRSS / RssAnon before',
          `VmRSS / RssAnon with ${N} idle clients`,
          'VmRSS / RssAnon after they left',
          'VmRSS per idle connection',
          'VmRSS per idle connection, against the reading after they left',
          'RssAnon per idle connection',
          'V8 heap per connection',
          'RssAnon per connection 0.3 s after the burst',
        ],
        [row('daemon', d), row('baseline (bare ws)', b)],
      ),
    ],
  };
}
