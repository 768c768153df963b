// Benchmark 1, fan-out: one stream event ingested through POST /api/events reaching N subscribed WebSocket clients.
import type { ServerChild } from './child.js';
import { ControlClient, Subscribers, type Target } from './clients.js';
import { type BenchContext, startBaselineChild, startDaemonChild } from './context.js';
import {
  type LatencyFigures,
  measureLatency,
  measureThroughput,
  medianThroughput,
  type ThroughputFigures,
} from './fanout-measure.js';
import { type Section, table } from './report.js';
import { fmt, ratio, summarize } from './stats.js';

const FANOUT_SIZES = [10, 100, 1000] as const;

/** Paced events per size (latency), and how long each throughput round lasts. */
const LATENCY_EVENTS: Record<number, number> = { 10: 300, 100: 400, 1000: 60 };
const THROUGHPUT_MS = 1500;
const THROUGHPUT_MAX_EVENTS = 20_000;
const WINDOW = 4;
/** Throughput rounds per server and size, alternating daemon and baseline so drift hits both. */
const ROUNDS = 3;

export interface FanoutPoint {
  n: number;
  latency: LatencyFigures;
  throughput: ThroughputFigures;
}

export interface FanoutResult {
  daemon: FanoutPoint[];
  baseline: FanoutPoint[];
}

interface Side {
  name: 'daemon' | 'baseline';
  child: ServerChild;
  subs: Subscribers;
  control: ControlClient;
  overlayIds: string[];
}

function emptyLatency(): LatencyFigures {
  return { latency: summarize([]), events: 0 };
}

export async function runFanout(ctx: BenchContext): Promise<{ section: Section; result: FanoutResult }> {
  const daemon = await startDaemonChild(ctx);
  const bare = await startBaselineChild(ctx, 'bare-broadcast-server');
  const sides: Side[] = [];
  try {
    const daemonTarget: Target = { port: daemon.port, adminKey: daemon.adminKey };
    const bareTarget: Target = { port: bare.ready.port };
    sides.push(
      {
        name: 'daemon',
        child: daemon,
        subs: new Subscribers(daemonTarget),
        control: new ControlClient(daemonTarget),
        overlayIds: daemon.overlayIds.slice(0, 1),
      },
      {
        name: 'baseline',
        child: bare,
        subs: new Subscribers(bareTarget),
        control: new ControlClient(bareTarget),
        overlayIds: ['bare'],
      },
    );
    const result: FanoutResult = { daemon: [], baseline: [] };
    for (const n of FANOUT_SIZES) {
      for (const side of sides) await side.subs.add(n - side.subs.count, side.overlayIds);
      ctx.log(`fan-out: N=${n} clients connected to both servers`);
      const latencies = await measureLatency(sides, LATENCY_EVENTS[n] ?? 100);
      const latency = new Map<Side, LatencyFigures>(sides.map((s, i) => [s, latencies[i] ?? emptyLatency()]));
      const rounds = new Map<Side, ThroughputFigures[]>(sides.map((s) => [s, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
          rounds.get(side)?.push(
            await measureThroughput(side.subs, side.control, side.child.pid, {
              durationMs: THROUGHPUT_MS,
              maxEvents: THROUGHPUT_MAX_EVENTS,
              window: WINDOW,
            }),
          );
        }
      }
      for (const side of sides) {
        const point: FanoutPoint = {
          n,
          latency: latency.get(side) ?? emptyLatency(),
          throughput: medianThroughput(rounds.get(side) ?? []),
        };
        result[side.name].push(point);
        ctx.log(
          `fan-out: ${side.name} N=${n}: ${fmt(point.throughput.eventsPerSec)} events/s, p50 ${fmt(point.latency.latency.p50)} ms, p99 ${fmt(point.latency.latency.p99)} ms`,
        );
      }
    }
    return { section: fanoutSection(result), result };
  } finally {
    for (const side of sides) {
      await side.subs.close();
      side.control.close();
    }
    await Promise.all([daemon.stop(), bare.stop()]);
  }
}

function fanoutSection(result: FanoutResult): Section {
  const rows: string[][] = [];
  for (const [i, d] of result.daemon.entries()) {
    const b = result.baseline[i];
    if (!b) continue;
    rows.push([
      String(d.n),
      `${fmt(d.throughput.eventsPerSec)} (${fmt(d.throughput.deliveriesPerSec)})`,
      `${fmt(b.throughput.eventsPerSec)} (${fmt(b.throughput.deliveriesPerSec)})`,
      ratio(d.throughput.eventsPerSec, b.throughput.eventsPerSec),
      `${fmt(d.latency.latency.p50)} / ${fmt(d.latency.latency.p99)} / ${fmt(d.latency.latency.max)}`,
      `${fmt(b.latency.latency.p50)} / ${fmt(b.latency.latency.p99)} / ${fmt(b.latency.latency.max)}`,
      ratio(d.latency.latency.p99, b.latency.latency.p99),
      `${fmt(d.throughput.serverCpuUsPerEvent)} / ${fmt(b.throughput.serverCpuUsPerEvent)}`,
    ]);
  }
  const d100 = result.daemon.find((p) => p.n === 100);
  const b100 = result.baseline.find((p) => p.n === 100);
  const headlines: Section['headlines'] = [];
  if (d100 && b100) {
    const tputRatio = d100.throughput.eventsPerSec / b100.throughput.eventsPerSec;
    headlines.push(
      {
        benchmark: '1 fan-out',
        measure: 'events/s at N=100',
        value: fmt(d100.throughput.eventsPerSec),
        baseline: fmt(b100.throughput.eventsPerSec),
        ratio: ratio(d100.throughput.eventsPerSec, b100.throughput.eventsPerSec),
        target: '≥ 0.8× baseline',
        met: tputRatio >= 0.8,
      },
      {
        benchmark: '1 fan-out',
        measure: 'p99 ingest→receipt at N=100',
        value: `${fmt(d100.latency.latency.p99)} ms`,
        baseline: `${fmt(b100.latency.latency.p99)} ms`,
        ratio: ratio(d100.latency.latency.p99, b100.latency.latency.p99),
        target: '< 5 ms',
        met: d100.latency.latency.p99 < 5,
      },
    );
  }
  return {
    title: '1. Fan-out: one event to N overlay clients',
    headlines,
    diagnosis: [
      'Profiled with `BENCH_CPU_PROF` (daemon child, N=10 and N=100, 4 POSTs in flight): about 70 % of the',
      "daemon's CPU is `ws` sending — one `writev` system call per client per message (`Hub.#deliver` →",
      '`WebSocket.send` → `Socket._writev`), exactly what the baseline does; the daemon serialises and encodes each',
      'broadcast once and hands every client the same bytes. The work only the daemon does per event',
      '(front door: Host, per-IP slot, one SHA-256 for the admin-key compare; body read; valibot parse; the rules',
      'engine and widget-state steps of the event pipeline) is the difference in the CPU column at N=10, about',
      '30–90 µs per event in recent runs, and it does not grow with N.',
      d100 && b100
        ? `In this run at N=100 the daemon's p50 was ${fmt(d100.latency.latency.p50)} ms against the baseline's ${fmt(b100.latency.latency.p50)} ms, and its p99 ${fmt(d100.latency.latency.p99)} ms against ${fmt(b100.latency.latency.p99)} ms.`
        : '',
      'The p99 of a paced run is set by the few slowest events (1 % of them), and those are the ones during which',
      'the scheduler ran something else: both processes and the clients share two cores with whatever else runs',
      '(load average above). Across runs on this machine the p99 ratio to the baseline moved between 0.8× and 1.6×',
      'while the p50 stayed within about 0.3 ms of the baseline. With the load average at 1.3–2.8, nine runs gave',
      'the daemon a p99 at N=100 of 3.3–6.4 ms (median 4.9) and the baseline 3.5–5.7 ms (median 4.0); with it',
      "near 5, 7–10 ms for both. The daemon's tail sits about 1 ms above the baseline's, and no step of the",
      'daemon shows in the profile as holding events back; the 5 ms target is met in about half the runs.',
    ],
    body: [
      'One `gift` POSTed to `/api/events` (admin key, from 127.0.0.1) reaching N subscribed clients of one overlay,',
      'each subscribed the real way (page load for a token, WebSocket, `init`) from 127.1.x.y, ten per address, so the',
      "daemon's 10-per-IP limit stays on. Baseline: a bare `ws` server plus a bare `node:http` POST handler that",
      'broadcasts the body (scripts/bench/servers/bare-broadcast-server.ts). Both servers run in child processes started',
      'the same way; the clients and the clock are in the bench process.',
      '',
      `Throughput: ${WINDOW} POSTs kept in flight for ${THROUGHPUT_MS / 1000} s, ${ROUNDS} rounds per server alternating,`,
      'median shown; rate = events / (first POST → last receipt). Latency: one event at a time (after 10 warm-up events),',
      'alternating between the daemon and the baseline,',
      'from the moment the POST is issued to each client receiving it; p50 / p99 / max over every delivery.',
      'Server CPU: utime+stime of the server process over the throughput rounds ÷ events.',
      '',
      ...table(
        [
          'N',
          'daemon events/s (deliveries/s)',
          'baseline events/s (deliveries/s)',
          'throughput ratio',
          'daemon p50 / p99 / max ms',
          'baseline p50 / p99 / max ms',
          'p99 ratio',
          'server CPU µs/event daemon / baseline',
        ],
        rows,
      ),
    ],
  };
}
