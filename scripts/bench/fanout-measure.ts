// The two fan-out measurements (paced latency, windowed throughput) shared by the fan-out and growth benchmarks.
import { performance } from 'node:perf_hooks';
import type { ControlClient, Subscribers } from './clients.js';
import { giftBody } from './clients.js';
import { cpuSeconds } from './proc.js';
import { median, type Summary, summarize } from './stats.js';

let nextSeq = 1;

export interface LatencyFigures {
  /** Ingest (POST issued) to receipt, per delivery, ms. */
  latency: Summary;
  events: number;
}

/**
 * One event at a time: POST, wait until every subscriber has it, next. With several servers the
 * events alternate between them, so a burst of load from elsewhere on the machine hits all alike.
 */
export async function measureLatency(
  sides: readonly { subs: Subscribers; control: ControlClient }[],
  events: number,
  warmup = 10,
): Promise<LatencyFigures[]> {
  for (let i = 0; i < warmup + events; i++) {
    for (const { subs, control } of sides) {
      subs.recording = i >= warmup;
      const seq = nextSeq++;
      const all = subs.expect(seq);
      const res = await control.call('POST', '/api/events', giftBody(seq));
      if (res.status !== 202) throw new Error(`POST /api/events answered ${res.status}: ${res.body}`);
      await all;
      subs.recording = false;
    }
  }
  return sides.map(({ subs }) => {
    const latency = summarize(subs.latencies);
    subs.latencies = [];
    return { latency, events };
  });
}

/**
 * Two servers compared over `rounds` rounds of `events` paced events each (see measureLatency): the
 * figures of the round whose p99 ratio (second / first) is the median, and every round's ratio. A p99
 * over a few hundred events is set by its slowest 1 %, which meet whatever else the machine runs; the
 * median round keeps one unlucky stretch from deciding the comparison.
 */
export async function medianLatencyRound(
  sides: readonly [
    { subs: Subscribers; control: ControlClient },
    { subs: Subscribers; control: ControlClient },
  ],
  events: number,
  rounds: number,
): Promise<{ first: LatencyFigures; second: LatencyFigures; ratios: number[] }> {
  const results: { first: LatencyFigures; second: LatencyFigures; ratio: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    const [first, second] = await measureLatency(sides, events);
    if (!first || !second) throw new Error('no latency figures');
    results.push({ first, second, ratio: second.latency.p99 / first.latency.p99 });
  }
  const sorted = [...results].sort((a, b) => a.ratio - b.ratio);
  const middle = sorted[Math.floor(sorted.length / 2)] as (typeof results)[number];
  return { first: middle.first, second: middle.second, ratios: results.map((r) => r.ratio) };
}

/**
 * Runs of `events` paced events, each server alone in its run (the next event posted as soon as the last
 * reached every client, as a page sees a paced series), the servers taking runs in turn, pair by pair, the
 * first of each pair alternating. Per server: each run's figures and the median run's (p50, p99 and max
 * each the median over the runs); and the p99 ratio (second / first) of each pair. A run alone shows what
 * interleaving event by event hides: the other server's event put a pause of a millisecond or more before
 * each of this one's, so a daemon was never asked for the next event while it finished the last.
 */
export async function pairedLatencyRuns(
  sides: readonly [
    { subs: Subscribers; control: ControlClient },
    { subs: Subscribers; control: ControlClient },
  ],
  events: number,
  pairs: number,
): Promise<{ first: LatencyFigures; second: LatencyFigures; ratios: number[] }> {
  const runs: [LatencyFigures[], LatencyFigures[]] = [[], []];
  const ratios: number[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const order = pair % 2 === 0 ? [0, 1] : [1, 0];
    const got: LatencyFigures[] = [];
    for (const i of order) {
      const side = sides[i];
      const [figures] = side ? await measureLatency([side], events) : [];
      if (!figures) throw new Error('no latency figures');
      got[i] = figures;
      runs[i as 0 | 1].push(figures);
    }
    const [a, b] = got;
    if (a && b) ratios.push(b.latency.p99 / a.latency.p99);
  }
  const medianRun = (list: LatencyFigures[]): LatencyFigures => {
    const pick = (field: 'p50' | 'p99' | 'max' | 'mean') => median(list.map((r) => r.latency[field]));
    return {
      latency: {
        count: list.reduce((sum, r) => sum + r.latency.count, 0),
        p50: pick('p50'),
        p99: pick('p99'),
        max: pick('max'),
        mean: pick('mean'),
      },
      events: list.reduce((sum, r) => sum + r.events, 0),
    };
  };
  return { first: medianRun(runs[0]), second: medianRun(runs[1]), ratios };
}

export interface ThroughputFigures {
  /** Events fully ingested and fanned out per second. */
  eventsPerSec: number;
  /** Messages received by all clients per second (events/s × N). */
  deliveriesPerSec: number;
  /** CPU time of the server process per event, µs. */
  serverCpuUsPerEvent: number;
  events: number;
}

/**
 * Keeps `window` POSTs in flight for `durationMs` (at most `maxEvents`), then waits for every
 * delivery; rates are over the time from the first POST to the last receipt.
 */
export async function measureThroughput(
  subs: Subscribers,
  control: ControlClient,
  serverPid: number,
  options: { durationMs: number; maxEvents: number; window: number },
): Promise<ThroughputFigures> {
  const pending: Promise<void>[] = [];
  const deliveredBefore = subs.delivered;
  const cpuBefore = await cpuSeconds(serverPid);
  const start = performance.now();
  let sent = 0;
  const worker = async () => {
    while (performance.now() - start < options.durationMs && sent < options.maxEvents) {
      sent++;
      const seq = nextSeq++;
      pending.push(subs.expect(seq, 30_000));
      const res = await control.call('POST', '/api/events', giftBody(seq));
      if (res.status !== 202) throw new Error(`POST /api/events answered ${res.status}: ${res.body}`);
    }
  };
  await Promise.all(Array.from({ length: options.window }, worker));
  await Promise.all(pending);
  const elapsedSec = (subs.lastReceiveAt - start) / 1000;
  const cpuAfter = await cpuSeconds(serverPid);
  const deliveries = subs.delivered - deliveredBefore;
  return {
    eventsPerSec: sent / elapsedSec,
    deliveriesPerSec: deliveries / elapsedSec,
    serverCpuUsPerEvent: ((cpuAfter - cpuBefore) * 1e6) / sent,
    events: sent,
  };
}

/** The median of throughput rounds, figure by figure (rounds alternate between the servers compared). */
export function medianThroughput(rounds: readonly ThroughputFigures[]): ThroughputFigures {
  return {
    eventsPerSec: median(rounds.map((r) => r.eventsPerSec)),
    deliveriesPerSec: median(rounds.map((r) => r.deliveriesPerSec)),
    serverCpuUsPerEvent: median(rounds.map((r) => r.serverCpuUsPerEvent)),
    events: rounds.reduce((sum, r) => sum + r.events, 0),
  };
}
