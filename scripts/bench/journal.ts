// Benchmark 8, the event journal: fan-out with the journal on against the same daemon with it off, the
// journal's sustained insert rate, a resume that replays 500 messages, the history routes on a journal of
// one million events, and the size on disk per million events.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { Journal } from '../../dist/daemon/src/journal/journal.js';
import type { StreamEvent } from '../../dist/shared/protocol/index.js';
import { startServerChild } from './child.js';
import { ControlClient, giftBody, Subscribers, type Target } from './clients.js';
import { type BenchContext, type DaemonChild, startDaemonChild } from './context.js';
import {
  measureThroughput,
  medianLatencyRound,
  medianThroughput,
  type ThroughputFigures,
} from './fanout-measure.js';
import { type Section, table } from './report.js';
import { fmt, ratio, type Summary, summarize } from './stats.js';

const N = 100;
/** Paced events per latency round, and rounds (the median round's figures are reported). */
const LATENCY_EVENTS = 250;
const LATENCY_ROUNDS = 3;
const ROUNDS = 3;
const INSERTS = 50_000;
const MILLION = 1_000_000;
const QUERIES = 60;
const RESUMES = 7;

interface Side {
  name: 'on' | 'off';
  child: DaemonChild;
  subs: Subscribers;
  control: ControlClient;
}

/** A varied stream: gifts from a few hundred viewers, likes, chats, follows, viewer counts. */
function streamEvent(i: number): StreamEvent {
  const user = { uniqueId: `viewer${i % 400}`, nickname: `Viewer ${i % 400}` };
  switch (i % 10) {
    case 0:
    case 1:
      return {
        type: 'gift',
        platform: 'tiktok',
        user,
        data: { giftName: 'Rose', repeatCount: 1 + (i % 5), diamondCount: 1 },
      };
    case 2:
    case 3:
    case 4:
      return { type: 'like', platform: 'tiktok', user, data: { likeCount: 1 + (i % 15) } };
    case 5:
    case 6:
    case 7:
      return {
        type: 'chat',
        platform: 'tiktok',
        user,
        data: { comment: `message number ${i} from the chat` },
      };
    case 8:
      return { type: 'follow', platform: 'tiktok', user, data: {} };
    default:
      return { type: 'viewer', platform: 'tiktok', user, data: { viewerCount: 100 + (i % 50) } };
  }
}

async function dirBytes(dir: string, prefix: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir))
    if (name.startsWith(prefix)) total += (await stat(join(dir, name))).size;
  return total;
}

/** One event at a time into the journal, each its own transaction, as the daemon writes them. */
function measureInserts(dir: string): { perSec: number; usEach: number } {
  const journal = Journal.open({ path: join(dir, 'inserts.db'), log: () => {} });
  try {
    for (let i = 0; i < 1000; i++) journal.append(streamEvent(i), 'tiktok');
    const start = performance.now();
    for (let i = 0; i < INSERTS; i++) journal.append(streamEvent(i), 'tiktok');
    const ms = performance.now() - start;
    return { perSec: (INSERTS / ms) * 1000, usEach: (ms * 1000) / INSERTS };
  } finally {
    journal.close();
  }
}

/** A data directory whose journal holds a million events over 50 streams. */
async function millionEventDir(ctx: BenchContext): Promise<{ dir: string; buildSec: number; bytes: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'overlay-bench-million-'));
  let now = Date.parse('2026-01-01T18:00:00Z');
  const journal = Journal.open({ path: join(dir, 'events.db'), log: () => {}, now: () => now });
  const start = performance.now();
  try {
    const batch: { event: StreamEvent; source: string }[] = [];
    for (let i = 0; i < MILLION; i++) {
      // A stream every 20,000 events, each a day apart.
      now += i % 20_000 === 0 ? 24 * 60 * 60 * 1000 : 150;
      batch.push({ event: streamEvent(i), source: 'tiktok' });
      if (batch.length === 2000) {
        journal.appendBatch(batch.splice(0));
        if (i % 200_000 === 199_999) ctx.log(`journal: ${i + 1} events written`);
      }
    }
    if (batch.length) journal.appendBatch(batch);
  } finally {
    journal.close();
  }
  const buildSec = (performance.now() - start) / 1000;
  return { dir, buildSec, bytes: await dirBytes(dir, 'events.db') };
}

async function timeRoute(control: ControlClient, path: string): Promise<Summary> {
  for (let i = 0; i < 5; i++) await control.expect('GET', path, undefined, 200);
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const start = performance.now();
    await control.expect('GET', path, undefined, 200);
    times.push(performance.now() - start);
  }
  return summarize(times);
}

/** Subscribes one page the real way and resolves with the messages up to `until`. */
async function page(target: Target, overlayId: string, resumeFrom?: number) {
  const res = await fetch(`http://127.0.0.1:${target.port}/overlay/${overlayId}`);
  const token = /window\.__APP_TOKEN__="([^"]+)"/.exec(await res.text())?.[1];
  if (!token) throw new Error('no page token');
  const ws = new WebSocket(`ws://127.0.0.1:${target.port}`, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const messages: { type: string; seq?: number; replayed?: number }[] = [];
  let waiter: { type: string; resolve: () => void } | undefined;
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type: string; seq?: number };
    messages.push(message);
    if (waiter && message.type === waiter.type) waiter.resolve();
  });
  const next = (type: string) =>
    new Promise<void>((resolve) => {
      if (messages.some((m) => m.type === type)) resolve();
      else waiter = { type, resolve };
    });
  const sentAt = performance.now();
  ws.send(
    JSON.stringify({ action: 'init', overlayId, token, ...(resumeFrom !== undefined ? { resumeFrom } : {}) }),
  );
  return { ws, messages, next, sentAt };
}

/** Pages that come back after 500 messages: from init to `resumed`, every replayed message received. */
async function measureResume(child: DaemonChild): Promise<{ times: Summary; replayed: number }> {
  const target: Target = { port: child.port, adminKey: child.adminKey };
  const control = new ControlClient(target);
  const overlayId = child.overlayIds[0] ?? '';
  const times: number[] = [];
  let replayed = 0;
  try {
    for (let round = 0; round < RESUMES; round++) {
      const first = await page(target, overlayId);
      await first.next('init');
      // The last message this page saw: one more gift, received live.
      await control.expect('POST', '/api/events', giftBody(round * 1000 + 999), 202);
      await first.next('stream-event');
      const from = first.messages.find((m) => m.type === 'stream-event')?.seq ?? 0;
      first.ws.terminate();
      for (let i = 0; i < 500; i++)
        await control.expect('POST', '/api/events', giftBody(round * 1000 + i), 202);
      const again = await page(target, overlayId, from);
      await again.next('resumed');
      times.push(performance.now() - again.sentAt);
      replayed = again.messages.filter((m) => m.type === 'stream-event').length;
      again.ws.terminate();
    }
  } finally {
    control.close();
  }
  return { times: summarize(times.slice(1)), replayed };
}

export async function runJournal(ctx: BenchContext): Promise<Section> {
  const sides: Side[] = [];
  const work = await mkdtemp(join(tmpdir(), 'overlay-bench-journal-'));
  let million: Awaited<ReturnType<typeof millionEventDir>> | undefined;
  try {
    const [on, off] = await Promise.all([startDaemonChild(ctx), startDaemonChild(ctx, ['--no-journal'])]);
    for (const [name, child] of [
      ['on', on],
      ['off', off],
    ] as const) {
      const target: Target = { port: child.port, adminKey: child.adminKey };
      sides.push({ name, child, subs: new Subscribers(target), control: new ControlClient(target) });
    }
    for (const side of sides) await side.subs.add(N, side.child.overlayIds.slice(0, 1));
    ctx.log(`journal: N=${N} clients on the daemon with its journal and on one without`);
    // Off first: the ratio is on / off.
    const latencyRounds = await medianLatencyRound(
      [sides[1], sides[0]] as [(typeof sides)[number], (typeof sides)[number]],
      LATENCY_EVENTS,
      LATENCY_ROUNDS,
    );
    const { first: offLatency, second: onLatency } = latencyRounds;
    const rounds = new Map<Side, ThroughputFigures[]>(sides.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const side of round % 2 === 0 ? sides : [...sides].reverse())
        rounds.get(side)?.push(
          await measureThroughput(side.subs, side.control, side.child.pid, {
            durationMs: 1500,
            maxEvents: 20_000,
            window: 4,
          }),
        );
    const onTput = medianThroughput(rounds.get(sides[0] as Side) ?? []);
    const offTput = medianThroughput(rounds.get(sides[1] as Side) ?? []);
    ctx.log(`journal: ${fmt(onTput.eventsPerSec)} events/s with it, ${fmt(offTput.eventsPerSec)} without`);
    for (const side of sides) await side.subs.close();

    const resume = await measureResume(on);
    ctx.log(`journal: resume of ${resume.replayed} messages p50 ${fmt(resume.times.p50)} ms`);
    const inserts = measureInserts(work);
    ctx.log(`journal: ${fmt(inserts.perSec)} inserts/s`);

    million = await millionEventDir(ctx);
    ctx.log(
      `journal: a million events written in ${fmt(million.buildSec)} s, ${fmt(million.bytes / 1024 / 1024)} MiB`,
    );
    const big = await startServerChild('daemon-server', {
      args: ['--data-dir', million.dir, '--keep-rules'],
    });
    const bigControl = new ControlClient({ port: big.ready.port, adminKey: big.ready.adminKey ?? '' });
    let eventsPage: Summary;
    let eventsByType: Summary;
    let sessionsList: Summary;
    let leaderboard: Summary;
    try {
      eventsPage = await timeRoute(bigControl, '/api/events?after=500000&limit=500');
      eventsByType = await timeRoute(bigControl, '/api/events?after=900000&limit=100&type=follow');
      sessionsList = await timeRoute(bigControl, '/api/sessions');
      leaderboard = await timeRoute(bigControl, '/api/leaderboard?scope=all&metric=diamonds');
    } finally {
      bigControl.close();
      await big.stop();
    }

    const p99Ratio = onLatency.latency.p99 / offLatency.latency.p99;
    const tputRatio = onTput.eventsPerSec / offTput.eventsPerSec;
    const routeRow = (path: string, s: Summary) => [`\`GET ${path}\``, fmt(s.p50), fmt(s.p99), fmt(s.max)];
    return {
      title: '8. The event journal',
      headlines: [
        {
          benchmark: '8 journal',
          measure: 'events/s at N=100, journal on',
          value: fmt(onTput.eventsPerSec),
          baseline: `${fmt(offTput.eventsPerSec)} (off)`,
          ratio: ratio(onTput.eventsPerSec, offTput.eventsPerSec),
          target: '≥ 0.9× off',
          met: tputRatio >= 0.9,
        },
        {
          benchmark: '8 journal',
          measure: 'p99 ingest→receipt at N=100, journal on',
          value: `${fmt(onLatency.latency.p99)} ms`,
          baseline: `${fmt(offLatency.latency.p99)} ms (off)`,
          ratio: ratio(onLatency.latency.p99, offLatency.latency.p99),
          target: '≤ 1.1× off',
          met: p99Ratio <= 1.1,
        },
        {
          benchmark: '8 journal',
          measure: 'sustained journal inserts',
          value: `${fmt(inserts.perSec)}/s`,
          baseline: '—',
          ratio: '—',
          target: '≥ 20,000/s',
          met: inserts.perSec >= 20_000,
        },
        {
          benchmark: '8 journal',
          measure: `resume replaying ${resume.replayed} messages, p99`,
          value: `${fmt(resume.times.p99)} ms`,
          baseline: '—',
          ratio: '—',
          target: '< 50 ms',
          met: resume.times.p99 < 50,
        },
        {
          benchmark: '8 journal',
          measure: 'GET /api/events on 1M events, p99',
          value: `${fmt(Math.max(eventsPage.p99, eventsByType.p99))} ms`,
          baseline: '—',
          ratio: '—',
          target: '< 20 ms',
          met: Math.max(eventsPage.p99, eventsByType.p99) < 20,
        },
        {
          benchmark: '8 journal',
          measure: 'GET /api/sessions on 1M events, p99',
          value: `${fmt(sessionsList.p99)} ms`,
          baseline: '—',
          ratio: '—',
          target: '< 20 ms',
          met: sessionsList.p99 < 20,
        },
        {
          benchmark: '8 journal',
          measure: 'size on disk per million events',
          value: `${fmt(million.bytes / 1024 / 1024)} MiB`,
          baseline: '—',
          ratio: '—',
          target: 'reported',
        },
      ],
      body: [
        `Fan-out: two daemons with ${N} subscribed clients each, measured alternately as in benchmark 1, one writing every`,
        'event to events.db before answering the POST (the default), one started with the journal off (`journalEvents:',
        'false`, a benchmark-only switch). Latency: ' +
          `${LATENCY_ROUNDS} rounds of ${LATENCY_EVENTS} paced events, the figures of the median round (p99 ratios on / off of the rounds:`,
        `${latencyRounds.ratios.map((x) => `${fmt(x, 3)}×`).join(', ')}).`,
        '',
        ...table(
          ['journal', 'p50 / p99 / max ms (N=100)', 'events/s (4 in flight)', 'server CPU µs/event'],
          [
            [
              'on',
              `${fmt(onLatency.latency.p50)} / ${fmt(onLatency.latency.p99)} / ${fmt(onLatency.latency.max)}`,
              fmt(onTput.eventsPerSec),
              fmt(onTput.serverCpuUsPerEvent),
            ],
            [
              'off',
              `${fmt(offLatency.latency.p50)} / ${fmt(offLatency.latency.p99)} / ${fmt(offLatency.latency.max)}`,
              fmt(offTput.eventsPerSec),
              fmt(offTput.serverCpuUsPerEvent),
            ],
          ],
        ),
        '',
        `Inserts: ${INSERTS.toLocaleString('en-US')} events one at a time into a fresh journal, each in its own transaction as the daemon`,
        `writes them (WAL, synchronous=NORMAL): ${fmt(inserts.perSec)} events/s, ${fmt(inserts.usEach)} µs each (event row, session totals and the viewer's figures).`,
        '',
        `Resume: a page subscribed, went away, 500 gifts were posted, and the page came back with \`resumeFrom\`; from`,
        `sending \`init\` to receiving \`resumed\` after ${resume.replayed} replayed messages: p50 ${fmt(resume.times.p50)} ms, p99 ${fmt(resume.times.p99)} ms (${RESUMES - 1} rounds after one warm-up).`,
        '',
        `A million events (50 streams of 20,000: gifts, likes, chats, follows, viewer counts from 400 viewers) written in`,
        `${fmt(million.buildSec)} s in batches of 2,000; on disk ${fmt(million.bytes / 1024 / 1024)} MiB (events.db with its WAL). The daemon then started on`,
        `that data directory and answered, ${QUERIES} requests each after 5 warm-ups (ms):`,
        '',
        ...table(
          ['route', 'p50', 'p99', 'max'],
          [
            routeRow('/api/events?after=500000&limit=500', eventsPage),
            routeRow('/api/events?after=900000&limit=100&type=follow', eventsByType),
            routeRow('/api/sessions', sessionsList),
            routeRow('/api/leaderboard?scope=all&metric=diamonds', leaderboard),
          ],
        ),
      ],
    };
  } finally {
    for (const side of sides) {
      await side.subs.close();
      side.control.close();
      await side.child.stop();
    }
    await rm(work, { recursive: true, force: true });
    if (million) await rm(million.dir, { recursive: true, force: true });
  }
}
