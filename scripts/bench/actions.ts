// Benchmark 7, actions: fan-out with 100 rules firing (20 webhooks to a receiver that never answers, a
// named queue kept 100 deep, OBS, overlay commands) against the same daemon without rules and against
// the bare `ws` baseline; event → OBS request latency; speech render time with the machine's engine.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Speech } from '../../dist/daemon/src/actions/speech.js';
import { startFakeObs } from '../../test/support/fakes/obs.js';
import type { ServerChild } from './child.js';
import { ControlClient, giftBody, Subscribers, type Target } from './clients.js';
import { type BenchContext, startBaselineChild, startDaemonChild } from './context.js';
import {
  type LatencyFigures,
  measureThroughput,
  medianLatencyRound,
  medianThroughput,
  type ThroughputFigures,
} from './fanout-measure.js';
import { type Section, table } from './report.js';
import { fmt, ratio, summarize } from './stats.js';

const N = 100;
/** Paced events per latency round, and rounds (the median round's figures are reported). */
const LATENCY_EVENTS = 300;
const LATENCY_ROUNDS = 3;
const ROUNDS = 6;
const OBS_EVENTS = 300;
/** Speech: texts of 100 characters, and of 300 to see how time grows with length. */
const SPEECH_TEXTS = 20;

/** The 100 rules of the busy daemon, all on gifts; the benchmark's gift is a Rose. */
function busyRules(hangUrl: string): unknown[] {
  const nobodyWatches = randomUUID(); // an overlay nobody has open: commands are built and sent to no one
  const rules: unknown[] = [];
  for (let i = 0; i < 20; i++)
    rules.push({
      id: `hook-${i}`,
      trigger: 'gift',
      actions: [{ kind: 'webhook', url: `${hangUrl}/hook-${i}` }],
    });
  rules.push({
    id: 'deep-queue',
    trigger: 'gift',
    actions: [{ kind: 'webhook', url: `${hangUrl}/queued`, queue: 'deep', body: { who: '{user.nickname}' } }],
  });
  rules.push({
    id: 'obs-scene',
    trigger: 'gift',
    actions: [{ kind: 'obs', request: 'SetCurrentProgramScene', params: { sceneName: 'Gift {data.seq}' } }],
  });
  for (let i = 0; i < 40; i++)
    rules.push({
      id: `alert-${i}`,
      trigger: 'gift',
      actions: [
        {
          overlayId: nobodyWatches,
          widgetId: 'alerts',
          command: 'show-alert',
          payload: { text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: 3000 },
        },
      ],
    });
  for (let i = 0; i < 38; i++)
    rules.push({
      id: `other-gift-${i}`,
      trigger: 'gift',
      conditions: { giftName: `Galaxy ${i}` },
      actions: [
        {
          overlayId: nobodyWatches,
          widgetId: 'alerts',
          command: 'show-alert',
          payload: { text: 'x', duration: 500 },
        },
        { kind: 'webhook', url: `${hangUrl}/never-${i}` },
      ],
    });
  return rules;
}

interface Side {
  name: 'plain' | 'busy' | 'bare';
  child: ServerChild;
  subs: Subscribers;
  control: ControlClient;
  overlayIds: string[];
}

export async function runActions(ctx: BenchContext): Promise<Section> {
  // The silent receiver and the stand-in OBS the busy daemon calls during the fan-out run live in a child.
  const sinks = await startBaselineChild(ctx, 'action-sinks');
  const hangUrl = `http://127.0.0.1:${sinks.ready.port}`;
  const dir = await mkdtemp(join(tmpdir(), 'overlay-bench-actions-'));
  const rulesFile = join(dir, 'rules.json');
  await writeFile(rulesFile, JSON.stringify(busyRules(hangUrl)));
  // For event → OBS the bench needs the moment OBS gets the request: a stand-in in this process.
  const localObs = await startFakeObs();

  const sides: Side[] = [];
  try {
    const [plain, busy, bare] = await Promise.all([
      startDaemonChild(ctx),
      startDaemonChild(ctx, ['--rules', rulesFile]),
      startBaselineChild(ctx, 'bare-broadcast-server'),
    ]);
    for (const [name, child] of [
      ['plain', plain],
      ['busy', busy],
    ] as const) {
      const target: Target = { port: child.port, adminKey: child.adminKey };
      sides.push({
        name,
        child,
        subs: new Subscribers(target),
        control: new ControlClient(target),
        overlayIds: child.overlayIds.slice(0, 1),
      });
    }
    const bareTarget: Target = { port: bare.ready.port };
    sides.push({
      name: 'bare',
      child: bare,
      subs: new Subscribers(bareTarget),
      control: new ControlClient(bareTarget),
      overlayIds: ['bare'],
    });
    const [plainSide, busySide, bareSide] = sides as [Side, Side, Side];
    const useObs = async (url: string) => {
      const settings = JSON.parse(
        (await busySide.control.expect('GET', '/api/settings', undefined, 200)).body,
      );
      await busySide.control.expect(
        'PUT',
        '/api/settings',
        { ...settings, obs: { url, password: null } },
        200,
      );
      await waitForObs(busySide.control, url);
    };
    await useObs(sinks.ready.obsUrl ?? '');

    for (const side of sides) await side.subs.add(N, side.overlayIds);
    ctx.log(`actions: N=${N} clients on the daemon without rules, on the one with 100 and on bare ws`);

    const latencyRounds = await medianLatencyRound([plainSide, busySide], LATENCY_EVENTS, LATENCY_ROUNDS);
    const { first: plainLatency, second: busyLatency } = latencyRounds;
    const bareRounds = await medianLatencyRound([bareSide, busySide], LATENCY_EVENTS, LATENCY_ROUNDS);
    const rounds = new Map<Side, ThroughputFigures[]>(sides.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Each server goes first, second and last twice, so drift over the rounds hits all alike.
      const order = [0, 1, 2].map((i) => sides[(i + round) % sides.length] as Side);
      for (const side of order) {
        rounds.get(side)?.push(
          await measureThroughput(side.subs, side.control, side.child.pid, {
            durationMs: 1500,
            maxEvents: 20_000,
            window: 4,
          }),
        );
      }
    }
    const queues = JSON.parse(
      (await busySide.control.expect('GET', '/api/actions/queues', undefined, 200)).body,
    ) as {
      name: string;
      waiting: number;
    }[];
    const deep = queues.find((q) => q.name === 'deep')?.waiting ?? 0;
    const actionLog = JSON.parse(
      (await busySide.control.expect('GET', '/api/actions/log', undefined, 200)).body,
    ) as {
      error?: string;
    }[];
    ctx.log(`actions: queue "deep" holds ${deep} waiting`);

    await useObs(localObs.url);
    const obsLatency = await measureObs(busySide, localObs);
    ctx.log(`actions: event → OBS p50 ${fmt(obsLatency.p50)} ms, p99 ${fmt(obsLatency.p99)} ms`);
    const speech = await measureSpeech(dir);
    ctx.log(
      `actions: speech ${speech ? `${fmt(speech.per100.p50)} ms per 100 characters` : 'engine missing'}`,
    );

    const plainTput = medianThroughput(rounds.get(plainSide) ?? []);
    const busyTput = medianThroughput(rounds.get(busySide) ?? []);
    const bareTput = medianThroughput(rounds.get(bareSide) ?? []);
    return actionsSection({
      plain: { latency: plainLatency, throughput: plainTput },
      busy: { latency: busyLatency, throughput: busyTput },
      bare: {
        latency: bareRounds.first,
        throughput: bareTput,
        busyLatency: bareRounds.second,
        ratios: bareRounds.ratios,
      },
      deep,
      droppedInLog: actionLog.filter((e) => e.error?.startsWith('dropped')).length,
      obs: obsLatency,
      speech,
      latencyRatios: latencyRounds.ratios,
    });
  } finally {
    for (const side of sides) {
      await side.subs.close();
      side.control.close();
      await side.child.stop();
    }
    await sinks.stop();
    await localObs.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Until the daemon is connected to the OBS at `url` (a settings change reconnects it). */
async function waitForObs(control: ControlClient, url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = JSON.parse((await control.expect('GET', '/status', undefined, 200)).body) as {
      obs?: { state: string };
    };
    const test = JSON.parse((await control.expect('POST', '/api/obs/test', undefined, 200)).body) as {
      ok: boolean;
    };
    if (status.obs?.state === 'connected' && test.ok) return;
    if (Date.now() > deadline) throw new Error(`OBS at ${url} did not connect (${status.obs?.state})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One gift at a time: from the POST being issued to the fake OBS receiving its SetCurrentProgramScene. */
async function measureObs(side: Side, obs: Awaited<ReturnType<typeof startFakeObs>>) {
  const times: number[] = [];
  const waiting = new Map<string, () => void>();
  obs.onRequest = (request) => {
    if (request.requestType !== 'SetCurrentProgramScene') return;
    waiting.get(String(request.requestData.sceneName))?.();
  };
  try {
    for (let i = 0; i < OBS_EVENTS + 10; i++) {
      const seq = 9_000_000 + i;
      const arrived = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`OBS never got the scene of event ${seq}`)), 5000);
        waiting.set(`Gift ${seq}`, () => {
          clearTimeout(timer);
          resolve(performance.now());
        });
      });
      const delivered = side.subs.expect(seq);
      const sent = performance.now();
      const res = await side.control.call('POST', '/api/events', giftBody(seq));
      if (res.status !== 202) throw new Error(`POST /api/events answered ${res.status}`);
      const at = await arrived;
      await delivered;
      waiting.delete(`Gift ${seq}`);
      if (i >= 10) times.push(at - sent);
    }
  } finally {
    delete obs.onRequest;
  }
  return summarize(times);
}

/** Words enough for a text of `length` characters, different for each `seed` (so none is cached). */
function speechText(seed: number, length: number): string {
  const words = [
    'thank',
    'you',
    'for',
    'the',
    'rose',
    'welcome',
    'to',
    'the',
    'stream',
    'friend',
    'gift',
    'dance',
  ];
  let text = `Number ${seed}:`;
  for (let i = 0; text.length < length; i++) text += ` ${words[(seed + i * 7) % words.length]}`;
  return text.slice(0, length);
}

async function measureSpeech(dir: string) {
  const speech = new Speech({ dir: join(dir, 'tts') });
  const engine = await speech.engine();
  if (!engine) return undefined;
  await speech.render('warm up the engine');
  const time = async (text: string) => {
    const start = performance.now();
    await speech.render(text);
    return performance.now() - start;
  };
  const short: number[] = [];
  const long: number[] = [];
  for (let i = 0; i < SPEECH_TEXTS; i++) short.push(await time(speechText(i, 100)));
  for (let i = 0; i < SPEECH_TEXTS / 2; i++) long.push((await time(speechText(1000 + i, 300))) / 3);
  const cached: number[] = [];
  for (let i = 0; i < SPEECH_TEXTS; i++) cached.push(await time(speechText(i, 100)));
  return {
    engine: engine.name,
    per100: summarize(short),
    per100Long: summarize(long),
    cached: summarize(cached),
  };
}

interface ActionsResult {
  plain: { latency: LatencyFigures; throughput: ThroughputFigures };
  busy: { latency: LatencyFigures; throughput: ThroughputFigures };
  /** The bare `ws` baseline, and the busy daemon's latency in the rounds alternating with it. */
  bare: {
    latency: LatencyFigures;
    throughput: ThroughputFigures;
    busyLatency: LatencyFigures;
    ratios: number[];
  };
  deep: number;
  droppedInLog: number;
  obs: ReturnType<typeof summarize>;
  speech: Awaited<ReturnType<typeof measureSpeech>>;
  /** p99 ratio (100 rules / none) of each latency round. */
  latencyRatios: number[];
}

function actionsSection(r: ActionsResult): Section {
  const p99Ratio = r.busy.latency.latency.p99 / r.plain.latency.latency.p99;
  const row = (name: string, side: ActionsResult['plain']) => [
    name,
    `${fmt(side.latency.latency.p50)} / ${fmt(side.latency.latency.p99)} / ${fmt(side.latency.latency.max)}`,
    fmt(side.throughput.eventsPerSec),
    fmt(side.throughput.serverCpuUsPerEvent),
  ];
  const bareTputRatio = r.busy.throughput.eventsPerSec / r.bare.throughput.eventsPerSec;
  const headlines: Section['headlines'] = [
    {
      benchmark: '7 actions',
      measure: 'events/s at N=100, journal and 100 rules on',
      value: fmt(r.busy.throughput.eventsPerSec),
      baseline: `${fmt(r.bare.throughput.eventsPerSec)} (bare ws)`,
      ratio: ratio(r.busy.throughput.eventsPerSec, r.bare.throughput.eventsPerSec),
      target: '≥ 1.0× bare ws',
      met: bareTputRatio >= 1,
    },
    {
      benchmark: '7 actions',
      measure: 'p99 ingest→receipt at N=100, journal and 100 rules on',
      value: `${fmt(r.bare.busyLatency.latency.p99)} ms`,
      baseline: `${fmt(r.bare.latency.latency.p99)} ms (bare ws)`,
      ratio: ratio(r.bare.busyLatency.latency.p99, r.bare.latency.latency.p99),
      target: 'reported',
    },
    {
      benchmark: '7 actions',
      measure: 'p99 ingest→receipt at N=100 with 100 rules',
      value: `${fmt(r.busy.latency.latency.p99)} ms`,
      baseline: `${fmt(r.plain.latency.latency.p99)} ms (no rules)`,
      ratio: ratio(r.busy.latency.latency.p99, r.plain.latency.latency.p99),
      target: '≤ 1.1× no rules',
      met: p99Ratio <= 1.1,
    },
    {
      benchmark: '7 actions',
      measure: 'gift POST → OBS gets SetCurrentProgramScene, p99',
      value: `${fmt(r.obs.p99)} ms`,
      baseline: '—',
      ratio: '—',
      target: '< 10 ms',
      met: r.obs.p99 < 10,
    },
  ];
  if (r.speech)
    headlines.push({
      benchmark: '7 actions',
      measure: `speech render per 100 characters (${r.speech.engine}), p50`,
      value: `${fmt(r.speech.per100.p50)} ms`,
      baseline: '—',
      ratio: '—',
      target: 'reported',
    });
  return {
    title: '7. Actions: 100 rules firing beside the fan-out',
    headlines,
    body: [
      `Two daemons (journal on, as by default) and the bare \`ws\` server of benchmark 1, each with ${N} subscribed clients`,
      'on one overlay, measured alternately as in benchmark 1: one daemon',
      'without rules, one with 100 rules on gifts: 20 webhooks to a local receiver that takes requests and never',
      'answers, one webhook in a queue named `deep` (kept full: at most 100 wait, the oldest dropped), one OBS',
      '`SetCurrentProgramScene` to a local stand-in that speaks obs-websocket v5, 40 `show-alert` commands to an overlay',
      "nobody has open, and 38 rules whose conditions the benchmark's Rose never meets (each with an overlay command",
      'and a webhook). Every gift the busy daemon takes fires 62 rules.',
      '',
      ...table(
        ['daemon', 'p50 / p99 / max ms (N=100)', 'events/s (4 in flight)', 'server CPU µs/event'],
        [
          row('no rules', r.plain),
          row('100 rules', r.busy),
          row('bare `ws` (baseline of benchmark 1)', r.bare),
        ],
      ),
      '',
      `p99 ratio, 100 rules / none: ${ratio(r.busy.latency.latency.p99, r.plain.latency.latency.p99)}; throughput ratio:`,
      `${ratio(r.busy.throughput.eventsPerSec, r.plain.throughput.eventsPerSec)}. Against the bare \`ws\` baseline (no journal, no rules, no`,
      `checks), throughput ${ratio(r.busy.throughput.eventsPerSec, r.bare.throughput.eventsPerSec)}; latency in ${LATENCY_ROUNDS} rounds alternating between the two`,
      `(median round shown in the headline; p99 ratios ${r.bare.ratios.map((x) => `${fmt(x, 3)}×`).join(', ')}): p50 ${fmt(r.bare.busyLatency.latency.p50)} ms against`,
      `${fmt(r.bare.latency.latency.p50)} ms. The three servers take the throughput rounds in turn, each first once. At the end the queue \`deep\` held ${r.deep} waiting;`,
      'the silent receiver held 32 requests per address at most (past that a call fails at once:',
      `${r.droppedInLog} of the last 200 outcomes in the action log say "dropped"). The receiver and the stand-in OBS`,
      "run in a child process of their own, so answering the daemon's calls never shares an event loop with the clients.",
      '',
      `Latency: ${LATENCY_ROUNDS} rounds of ${LATENCY_EVENTS} paced events each, alternating between the daemons; the figures are those of`,
      `the median round (p99 ratios of the rounds: ${r.latencyRatios.map((x) => `${fmt(x, 3)}×`).join(', ')}). Single rounds of 600 events gave`,
      '0.96×–1.21× across runs on this machine: the p99 of a few hundred paced events is set by the slowest 1 %, which meet',
      'whatever else the two cores run, while p50 stays at or below the run without rules. The cost of the rules shows',
      'in the CPU column (about 12 µs per rule that fires) and in throughput with 4 POSTs in flight, not in delivery: the',
      'event is written to every client before any rule runs.',
      '',
      `Event → OBS: ${OBS_EVENTS} gifts one at a time to the busy daemon, from the POST being issued to the stand-in`,
      `receiving the request (scene named after the event): p50 ${fmt(r.obs.p50)} ms, p99 ${fmt(r.obs.p99)} ms,`,
      `max ${fmt(r.obs.max)} ms.`,
      '',
      r.speech
        ? `Speech with ${r.speech.engine} (the machine's own engine, the daemon's code path: a process per text, WAV into the cache): ${SPEECH_TEXTS} texts of 100 characters took p50 ${fmt(r.speech.per100.p50)} ms, p99 ${fmt(r.speech.per100.p99)} ms each; texts of 300 characters ${fmt(r.speech.per100Long.p50)} ms per 100 characters (p50); the same texts again from the cache ${fmt(r.speech.cached.p50)} ms.`
        : 'Speech: no engine on this machine (install espeak-ng), not measured.',
    ],
  };
}
