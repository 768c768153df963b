// Benchmark 1, fan-out: one stream event ingested through POST /api/events reaching N subscribed WebSocket clients.
import type { ServerChild } from './child.js';
import { ControlClient, Subscribers, type Target } from './clients.js';
import { type BenchContext, startBaselineChild, startDaemonChild } from './context.js';
import {
  type LatencyFigures,
  measureThroughput,
  medianThroughput,
  pairedLatencyRuns,
  type ThroughputFigures,
} from './fanout-measure.js';
import { type Section, table } from './report.js';
import { fmt, ratio, summarize } from './stats.js';

const FANOUT_SIZES = [10, 100, 1000] as const;

/** Paced events per latency run and size, runs per server and size, and how long each throughput round lasts. */
const LATENCY_EVENTS: Record<number, number> = { 10: 100, 100: 120, 1000: 30 };
const LATENCY_RUNS: Record<number, number> = { 10: 3, 100: 5, 1000: 3 };
/** The p99 at N=100 the daemon is held to, against bare `ws` in the same runs. */
const P99_TARGET_RATIO = 1.2;
const THROUGHPUT_MS = 1500;
const THROUGHPUT_MAX_EVENTS = 20_000;
const WINDOW = 4;
/** Throughput rounds per server and size, alternating daemon and baseline so drift hits both. */
const ROUNDS = 3;

export interface FanoutPoint {
  n: number;
  latency: LatencyFigures;
  /** The p99 ratio, daemon / baseline, of each pair of latency runs (the daemon's point only). */
  p99Ratios?: number[];
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
      const [daemonSide, bareSide] = sides as [Side, Side];
      const paired = await pairedLatencyRuns(
        [daemonSide, bareSide],
        LATENCY_EVENTS[n] ?? 100,
        LATENCY_RUNS[n] ?? 3,
      );
      const latency = new Map<Side, LatencyFigures>([
        [daemonSide, paired.first],
        [bareSide, paired.second],
      ]);
      // pairedLatencyRuns reports baseline / daemon: the table shows daemon / baseline.
      const p99Ratios = paired.ratios.map((r) => 1 / r);
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
          ...(side.name === 'daemon' ? { p99Ratios } : {}),
          throughput: medianThroughput(rounds.get(side) ?? []),
        };
        result[side.name].push(point);
        ctx.log(
          `fan-out: ${side.name} N=${n}: ${fmt(point.throughput.eventsPerSec)} events/s, p50 ${fmt(point.latency.latency.p50)} ms, p99 ${fmt(point.latency.latency.p99)} ms, ${fmt(point.throughput.serverCpuUsPerEvent)} µs CPU/event${point.p99Ratios ? `, p99 ratio per pair ${point.p99Ratios.map((r) => r.toFixed(2)).join(' ')}` : ''}`,
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
      (d.p99Ratios ?? []).map((r) => `${r.toFixed(2)}×`).join(', '),
      `${fmt(d.throughput.serverCpuUsPerEvent)} / ${fmt(b.throughput.serverCpuUsPerEvent)}`,
      `${fmt(d.throughput.serverCpuUsPerEvent / d.n, 2)} / ${fmt(b.throughput.serverCpuUsPerEvent / b.n, 2)}`,
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
        target: `≤ ${P99_TARGET_RATIO}× baseline`,
        met: d100.latency.latency.p99 <= P99_TARGET_RATIO * b100.latency.latency.p99,
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
      'The latency runs give each server the event series alone, the next event posted as soon as the last reached',
      'every client: that is how a page sees a paced series, and what interleaving event by event hid (the other',
      "server's event put a millisecond or more before each of the daemon's). Counted in the daemon (each first",
      'message of a turn, written straight or gathered, and how long the event loop had waited before it), with',
      'write turns that took "quiet" to mean a millisecond of waiting since the last turn that sent, about a quarter',
      'of such a series waited for the end of its turn (journal insert, pipeline, 202): the loop had waited only',
      "0.2–1 ms, the time the bench took to post again. The daemon's p50 read 2.7× the baseline's in that run. Now a",
      'turn gathers only within a burst (the last turn that sent had more than one message, and the loop has not',
      'waited a millisecond since): each of those events leaves at once (daemon/src/ws/write-turns.ts).',
      'The p99 of a paced run is set by its slowest 1 % of deliveries, about one event per run here, and those are',
      'the ones during which the scheduler ran something else: both processes and the clients share two cores with',
      'whatever else runs (load average above), so compare the p99 ratios of the pairs, not one run.',
    ],
    body: [
      'One `gift` POSTed to `/api/events` (admin key, from 127.0.0.1) reaching N subscribed clients of one overlay,',
      'each subscribed the real way (page load for a token, WebSocket, `init`) from 127.1.x.y, ten per address, so the',
      "daemon's 10-per-IP limit stays on. Baseline: a bare `ws` server plus a bare `node:http` POST handler that",
      'broadcasts the body (scripts/bench/servers/bare-broadcast-server.ts). Both servers run in child processes started',
      'the same way; the clients and the clock are in the bench process.',
      '',
      `Throughput: ${WINDOW} POSTs kept in flight for ${THROUGHPUT_MS / 1000} s, ${ROUNDS} rounds per server alternating,`,
      'median shown; rate = events / (first POST → last receipt). Latency: runs of paced events, one at a time, the next',
      'posted as soon as every client has the last (after 10 warm-up events), each server alone in its run; the two',
      'servers take runs in turn, pair by pair, the first of each pair alternating. Each delivery is timed from the',
      'moment the POST is issued to the client receiving it; p50 / p99 / max over every delivery of a run, the median',
      'over the runs shown, and the p99 ratio of each pair beside it.',
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
          'p99 ratio of each pair of runs',
          'server CPU µs/event daemon / baseline',
          'server CPU µs/delivery daemon / baseline',
        ],
        rows,
      ),
    ],
  };
}
