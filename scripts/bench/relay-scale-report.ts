// Benchmark 12's section of BENCHMARKS.md: the relay beside the bare room (same workerd) and the daemon's direct fan-out.
import type { Headline, Section } from './report.js';
import { table } from './report.js';
import { fmt, kib, ratio, type Summary } from './stats.js';

export interface JoinFigures {
  joins: number;
  seconds: number;
  perSecond: number;
  /** CPU of the server process per join, ms. */
  cpuMs: number;
  /** Whole-process CPU over wall time while they joined (1.0 = one core busy). */
  busy: number;
}

/** What one population's figures are made of, for the relay, the bare room and the daemon. */
export interface Side {
  join: JoinFigures;
  /** Anonymous RSS per socket since before the first viewer, bytes. */
  bytes: number;
  latency: Summary;
  /** Server CPU per delivery over the paced events, µs. */
  cpuUs: number;
}

export interface Point {
  n: number;
  relay: Side;
  bare: Side;
  daemon: Side;
  /** p99 relay ÷ daemon of each latency round (the figures are the median round's). */
  ratios: number[];
}

export interface RelayFigures {
  points: Point[];
  plainJoin: JoinFigures;
  resumeJoin: JoinFigures;
  keptBytes: number;
  skipped: number[];
  limit: number;
  threads: number;
  method: {
    events: Record<number, number>;
    warmup: number;
    rounds: number;
    spacingMs: number;
    joinConcurrency: number;
    fillMessages: number;
    sampleJoins: number;
    sampleConcurrency: number;
    settleMs: number;
    p99TargetRatio: number;
  };
}

const trio = (p: Point, f: (s: Side) => string, between = ' / ') =>
  [f(p.relay), f(p.bare), f(p.daemon)].join(between);

function headlines(f: RelayFigures): Headline[] {
  const out: Headline[] = [];
  const first = f.points.find((p) => p.n === 1000);
  const last = f.points.at(-1);
  if (first) {
    out.push({
      benchmark: '12 relay',
      measure: 'p99 event → viewer at N=1000 (workerd)',
      value: `${fmt(first.relay.latency.p99)} ms`,
      baseline: `${fmt(first.daemon.latency.p99)} ms (daemon direct)`,
      ratio: ratio(first.relay.latency.p99, first.daemon.latency.p99),
      target: `≤ ${f.method.p99TargetRatio}× direct`,
      met: first.relay.latency.p99 <= f.method.p99TargetRatio * first.daemon.latency.p99,
    });
  }
  if (!last) return out;
  if (last !== first) {
    out.push({
      benchmark: '12 relay',
      measure: `p99 event → viewer at N=${last.n} (workerd)`,
      value: `${fmt(last.relay.latency.p99)} ms`,
      baseline: `${fmt(last.daemon.latency.p99)} ms (daemon direct)`,
      ratio: ratio(last.relay.latency.p99, last.daemon.latency.p99),
      target: 'reported',
    });
  }
  out.push(
    {
      benchmark: '12 relay',
      measure: `viewers joining per second through one hub (to N=${last.n})`,
      value: fmt(last.relay.join.perSecond),
      baseline: `${fmt(last.daemon.join.perSecond)} (daemon pages)`,
      ratio: ratio(last.relay.join.perSecond, last.daemon.join.perSecond),
      target: 'reported',
    },
    {
      benchmark: '12 relay',
      measure: 'workerd CPU per join, full resume buffer: no resume / 2 MiB replayed',
      value: `${fmt(f.plainJoin.cpuMs)} / ${fmt(f.resumeJoin.cpuMs)} ms`,
      baseline: `${fmt(last.daemon.join.cpuMs)} ms (daemon page)`,
      ratio: ratio(f.plainJoin.cpuMs, last.daemon.join.cpuMs),
      target: 'reported',
    },
    {
      benchmark: '12 relay',
      measure: `memory per viewer socket (workerd RssAnon, N=${last.n})`,
      value: kib(last.relay.bytes),
      baseline: `${kib(last.daemon.bytes)} (daemon page); bare room ${kib(last.bare.bytes)}`,
      ratio: ratio(last.relay.bytes, last.daemon.bytes),
      target: 'reported',
    },
    {
      benchmark: '12 relay',
      measure: `workerd CPU per delivery (N=${last.n})`,
      value: `${fmt(last.relay.cpuUs)} µs`,
      baseline: `${fmt(last.daemon.cpuUs)} µs (daemon); bare room ${fmt(last.bare.cpuUs)} µs`,
      ratio: ratio(last.relay.cpuUs, last.daemon.cpuUs),
      target: 'reported',
    },
  );
  return out;
}

export function relaySection(f: RelayFigures): Section {
  const m = f.method;
  const rows = f.points.map((p) => [
    String(p.n),
    trio(p, (s) => `${fmt(s.latency.p50)} / ${fmt(s.latency.p99)}`, '; '),
    `${ratio(p.relay.latency.p99, p.daemon.latency.p99)} (${p.ratios.map((r) => r.toFixed(2)).join(', ')})`,
    trio(p, (s) => fmt(s.join.perSecond)),
    trio(p, (s) => fmt(s.join.cpuMs)),
    trio(p, (s) => fmt(s.join.busy, 2)),
    trio(p, (s) => kib(s.bytes)),
    trio(p, (s) => fmt(s.cpuUs)),
  ]);
  return {
    title: '12. The relay at scale: one overlay, 1,000 and 5,000 viewers, beside the daemon’s own fan-out',
    headlines: headlines(f),
    body: [
      'The Gatekeeper bundled by `wrangler deploy --dry-run` and run by Miniflare’s JS API (workerd’s own socket, no',
      '`wrangler dev` proxy), with the shipped relay layout (20 shards of at most 5,000) and the shipped per-address',
      'limits: every viewer socket is bound to a loopback address, five per address (127.20.x.y), and Miniflare passes',
      'the socket’s address to the Worker as `CF-Connecting-IP`. The bench publishes with a Premium licence it signs.',
      'In the same workerd, a bare room (scripts/bench/workers/bare-relay.js: one Durable Object holding every',
      'hibernating socket behind a bare Worker, writing each publisher frame to all; no admission, shards, storage or',
      'batches) with as many sockets. In the same run, the daemon (a child process, as in benchmark 1) with as many',
      'pages subscribed the real way, ten per address.',
      '',
      `- Event → viewer: one gift at a time to the relay, the bare room and the daemon, the order turning each time,`,
      `  every ${m.spacingMs} ms at most (a relay event at least 60 ms after the previous one, past the hub’s 50 ms batch`,
      '  window, as lone events come), timed from the publisher’s frame (relay, bare room) or the POST (daemon) to',
      "  each socket's receipt; p50 / p99 over every delivery of a round, after",
      `  ${m.warmup} warm-up events; ${f.points.map((p) => `${m.events[p.n]} events at N=${p.n}`).join(', ')} per round, ${m.rounds} rounds; the`,
      '  figures are the round whose p99 ratio relay ÷ daemon is the median (every round’s ratio in brackets).',
      '  The relay figure lacks the daemon’s ingest (its publisher sends what its pages get, in the same turn).',
      `- Joins: sockets (pages) opened ${m.joinConcurrency} at a time, each counted at its \`init\`; CPU is the whole`,
      '  server process (workerd: the Worker, the hub and the shards; daemon: page load, token, socket, `init`) ÷ joins;',
      '  "busy" is that CPU over wall time (1.00 is one core).',
      `- Against the full buffer (${m.fillMessages} kept events, ${kib(f.keptBytes)}, past one replay's 2 MiB):`,
      `  ${m.sampleJoins} joins without \`resumeFrom\` and ${m.sampleJoins} with \`resumeFrom: 1\` (the newest 2 MiB replayed),`,
      `  ${m.sampleConcurrency} at a time: ${fmt(f.plainJoin.cpuMs)} ms and ${fmt(f.resumeJoin.cpuMs)} ms of workerd CPU per join,`,
      `  ${fmt(f.plainJoin.perSecond)} and ${fmt(f.resumeJoin.perSecond)} joins/s.`,
      `- Memory: RssAnon a process gained while a population grew (read ${m.settleMs / 1000} s after its joins), ÷ N; the`,
      '  relay and the bare room grow in turn in one workerd (which has no GC to ask for), the daemon after a full GC.',
      '- CPU per delivery: server CPU over the paced events ÷ (events × N) (workerd read around each of its events).',
      `- workerd ran ${f.threads} threads; its JavaScript (Worker, hub, shards, bare room) runs on one, so the 20 shards`,
      '  here take turns, where Cloudflare runs each on its own.',
      f.skipped.length
        ? `- Not run: N=${f.skipped.join(', ')}: ${f.limit} open files allowed, three per viewer needed (raise \`ulimit -n\`).`
        : `- Open files allowed: ${f.limit}.`,
      '',
      ...table(
        [
          'N',
          'p50 / p99 ms: relay; bare room; daemon',
          'p99 relay ÷ daemon (each round)',
          'joins/s',
          'CPU ms per join',
          'busy while joining',
          'RssAnon per socket',
          'CPU µs per delivery',
        ],
        rows,
      ),
      '',
      'Columns after the first two give relay / bare room / daemon.',
    ],
  };
}
