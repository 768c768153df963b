// Benchmark 6, growth: how cost per event moves as clients, overlays and rules grow, and what first grows worse than linearly.
import { ControlClient, Subscribers } from './clients.js';
import { type BenchContext, type DaemonChild, startDaemonChild } from './context.js';
import type { FanoutResult } from './fanout.js';
import { measureLatency, measureThroughput } from './fanout-measure.js';
import { type Section, table } from './report.js';
import { fmt } from './stats.js';

const CLIENTS = 100;
const OVERLAY_COUNTS = [1, 10, 100];
const RULE_COUNTS = [1, 10, 100, 500];
const LATENCY_EVENTS = 100;
const THROUGHPUT = { durationMs: 1000, maxEvents: 10_000, window: 4 };
/** Marginal cost per unit rising by more than this from one step to the next counts as worse than linear. */
const SUPERLINEAR_FACTOR = 1.5;

interface GrowthPoint {
  size: number;
  cpuUsPerEvent: number;
  p50: number;
  p99: number;
  eventsPerSec: number;
}

interface Series {
  what: string;
  unit: string;
  setup: string;
  points: GrowthPoint[];
  /** Same series for the baseline, when there is one. */
  baseline?: GrowthPoint[];
}

async function measurePoint(
  daemon: DaemonChild,
  subs: Subscribers,
  control: ControlClient,
  size: number,
): Promise<GrowthPoint> {
  const [latency] = await measureLatency([{ subs, control }], LATENCY_EVENTS);
  const tput = await measureThroughput(subs, control, daemon.pid, THROUGHPUT);
  return {
    size,
    cpuUsPerEvent: tput.serverCpuUsPerEvent,
    p50: latency?.latency.p50 ?? Number.NaN,
    p99: latency?.latency.p99 ?? Number.NaN,
    eventsPerSec: tput.eventsPerSec,
  };
}

/** A short untimed round first: a fresh process's first events pay for compiling the hot paths. */
async function warmUp(daemon: DaemonChild, subs: Subscribers, control: ControlClient): Promise<void> {
  await measureThroughput(subs, control, daemon.pid, { durationMs: 300, maxEvents: 2000, window: 4 });
}

/** 100 clients spread round-robin over 1, 10, 100 overlays. */
async function overlaysSeries(ctx: BenchContext): Promise<Series> {
  const daemon = await startDaemonChild(ctx);
  const control = new ControlClient({ port: daemon.port, adminKey: daemon.adminKey });
  const points: GrowthPoint[] = [];
  try {
    const ids = [...daemon.overlayIds.slice(0, 1)];
    for (const count of OVERLAY_COUNTS) {
      while (ids.length < count) {
        const res = await control.expect(
          'POST',
          '/api/overlays',
          { name: `Bench ${ids.length}`, width: 1920, height: 1080, widgets: [] },
          201,
        );
        const id = /"id":"([0-9a-f-]{36})"/.exec(res.body)?.[1];
        if (!id) throw new Error('POST /api/overlays returned no id');
        ids.push(id);
      }
      const subs = new Subscribers({ port: daemon.port, adminKey: daemon.adminKey });
      try {
        await subs.add(CLIENTS, ids);
        if (count === OVERLAY_COUNTS[0]) await warmUp(daemon, subs, control);
        points.push(await measurePoint(daemon, subs, control, count));
      } finally {
        await subs.close();
      }
      ctx.log(`growth: ${count} overlays: ${fmt(points.at(-1)?.cpuUsPerEvent ?? Number.NaN)} µs CPU/event`);
    }
  } finally {
    control.close();
    await daemon.stop();
  }
  return {
    what: 'overlays',
    unit: 'overlay',
    setup: `${CLIENTS} clients spread round-robin over the overlays; every event goes to every overlay`,
    points,
  };
}

/** Gift rules: one that fires (show-alert) and the rest with gift names that never match, so all are evaluated. */
function ruleList(count: number, overlayId: string) {
  return Array.from({ length: count }, (_, i) => ({
    id: `rule-${i}`,
    trigger: 'gift',
    conditions: { giftName: i === 0 ? 'Rose' : `Gift ${i}` },
    actions: [
      {
        overlayId,
        widgetId: 'alert',
        command: 'show-alert',
        payload: { text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: 1000 },
      },
    ],
  }));
}

async function rulesSeries(ctx: BenchContext): Promise<Series> {
  const daemon = await startDaemonChild(ctx);
  const control = new ControlClient({ port: daemon.port, adminKey: daemon.adminKey });
  const subs = new Subscribers({ port: daemon.port, adminKey: daemon.adminKey });
  const points: GrowthPoint[] = [];
  try {
    const overlayId = daemon.overlayIds[0] ?? '';
    await subs.add(CLIENTS, [overlayId]);
    await warmUp(daemon, subs, control);
    for (const count of RULE_COUNTS) {
      await control.expect('PUT', '/api/rules', ruleList(count, overlayId), 200);
      points.push(await measurePoint(daemon, subs, control, count));
      ctx.log(`growth: ${count} rules: ${fmt(points.at(-1)?.cpuUsPerEvent ?? Number.NaN)} µs CPU/event`);
    }
  } finally {
    await subs.close();
    control.close();
    await daemon.stop();
  }
  return {
    what: 'rules',
    unit: 'rule',
    setup: `${CLIENTS} clients of one overlay, with the daemon's own event pipeline; rule 1 fires a show-alert on every gift (an overlay-command to all ${CLIENTS}), the others are evaluated and do not match, so the marginal cost is that of evaluating a rule`,
    points,
  };
}

function fromFanout(result: FanoutResult): Series {
  const toPoint = (p: FanoutResult['daemon'][number]): GrowthPoint => ({
    size: p.n,
    cpuUsPerEvent: p.throughput.serverCpuUsPerEvent,
    p50: p.latency.latency.p50,
    p99: p.latency.latency.p99,
    eventsPerSec: p.throughput.eventsPerSec,
  });
  return {
    what: 'clients (N)',
    unit: 'client',
    setup: 'from benchmark 1: N clients of one overlay',
    points: result.daemon.map(toPoint),
    baseline: result.baseline.map(toPoint),
  };
}

/** Extra CPU per event for each unit added between two steps: (c2 − c1) / (s2 − s1). */
function marginal(points: GrowthPoint[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    if (a && b) out.push((b.cpuUsPerEvent - a.cpuUsPerEvent) / (b.size - a.size));
  }
  return out;
}

interface Finding {
  series: Series;
  /** Index into marginal(): the step from points[step] to points[step + 1]. */
  step: number;
  text: string;
}

/** The first step whose marginal cost per unit is well above the previous step's: worse than linear. */
function firstSuperlinear(series: Series): Finding | undefined {
  const m = marginal(series.points);
  for (let i = 1; i < m.length; i++) {
    const prev = m[i - 1] ?? 0;
    const cur = m[i] ?? 0;
    if (prev > 0 && cur > prev * SUPERLINEAR_FACTOR) {
      const from = series.points[i]?.size;
      const to = series.points[i + 1]?.size;
      return {
        series,
        step: i,
        text: `${series.what}: each ${series.unit} added between ${from} and ${to} costs ${fmt(cur)} µs CPU per event, ${fmt(cur / prev)}× what one cost below ${from} (${fmt(prev)} µs)`,
      };
    }
  }
  return undefined;
}

/**
 * Whether a finding is the daemon's own: where the series has a baseline, the daemon's marginal cost at
 * that step must also exceed the baseline's by the same factor; otherwise `ws` and the kernel grow, not
 * the daemon's code.
 */
function ownedByDaemon(finding: Finding): boolean {
  const { series, step } = finding;
  if (!series.baseline) return true;
  const mine = marginal(series.points)[step] ?? 0;
  const theirs = marginal(series.baseline)[step] ?? 0;
  return theirs <= 0 || mine > theirs * SUPERLINEAR_FACTOR;
}

function seriesRows(series: Series): string[][] {
  const m = marginal(series.points);
  const mb = series.baseline ? marginal(series.baseline) : [];
  return series.points.map((p, i) => [
    series.what,
    String(p.size),
    fmt(p.cpuUsPerEvent),
    i === 0 ? '—' : fmt(m[i - 1] ?? Number.NaN),
    i === 0 || !series.baseline ? '—' : fmt(mb[i - 1] ?? Number.NaN),
    fmt(p.eventsPerSec),
    `${fmt(p.p50)} / ${fmt(p.p99)}`,
  ]);
}

export async function runGrowth(ctx: BenchContext, fanout: FanoutResult | undefined): Promise<Section> {
  const series: Series[] = [];
  if (fanout) series.push(fromFanout(fanout));
  series.push(await overlaysSeries(ctx));
  series.push(await rulesSeries(ctx));
  const findings = series.map((s) => firstSuperlinear(s)).filter((f): f is Finding => f !== undefined);
  const own = findings.filter(ownedByDaemon);
  const first = findings[0];
  const baselineMarginal = (f: Finding) => marginal(f.series.baseline ?? [])[f.step];
  return {
    title: '6. Growth: clients, overlays, rules',
    headlines: [
      {
        benchmark: '6 growth',
        measure: 'first cost growing worse than linearly',
        value: first ? first.series.what : 'none',
        baseline: first?.series.baseline
          ? `${fmt(baselineMarginal(first) ?? Number.NaN)} µs/unit at that step`
          : '—',
        ratio: '—',
        target: 'none',
        // Worse than linear in the daemon alone is a miss; the same growth in the bare baseline is not the daemon's.
        met: own.length === 0 ? (findings.length === 0 ? true : undefined) : false,
      },
    ],
    body: [
      'Daemon CPU per event (utime+stime ÷ events over a 1 s throughput round, 4 POSTs in flight) and paced ingest→receipt',
      'latency as one dimension grows and the others stay put. "Per unit" is the extra CPU per event each added',
      'client/overlay/rule costs between two steps; it rising by more than',
      `${SUPERLINEAR_FACTOR}× from one step to the next is counted as growing worse than linearly; where there is a`,
      `baseline (clients), it counts against the daemon only if the daemon's marginal cost at that step is also`,
      `${SUPERLINEAR_FACTOR}× the baseline's.`,
      '',
      ...series.map((s) => `- ${s.what}: ${s.setup}.`),
      '',
      ...table(
        [
          'dimension',
          'size',
          'daemon CPU µs/event',
          'per unit µs (daemon)',
          'per unit µs (baseline)',
          'events/s',
          'p50 / p99 ms',
        ],
        series.flatMap(seriesRows),
      ),
      '',
      first
        ? `First to grow worse than linearly: ${first.text}.${
            ownedByDaemon(first)
              ? ''
              : ` The bare ws baseline pays ${fmt(baselineMarginal(first) ?? Number.NaN)} µs per added client at the same step, as much as the daemon: the growth is the cost of \`ws\` and the kernel per delivery (one \`writev\` per client per message, a working set of a thousand sockets), not the daemon's code, whose own per-event work (front door, parse, rules, widget state) does not grow with N.`
          }`
        : 'Nothing grew worse than linearly over these ranges.',
      ...findings.slice(1).map((f) => `Also: ${f.text}${ownedByDaemon(f) ? '' : ' (the baseline too)'}.`),
    ],
  };
}
