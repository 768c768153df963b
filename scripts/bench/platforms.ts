// Benchmark 9, platforms: a burst of 1,000 Twitch chat messages from the stand-in chat server (IRC over
// WebSocket, read by the daemon's real Twitch source) to 100 overlay clients, timed from the moment the
// server writes each line to each client's receipt; the same burst with two failing YouTube sources
// beside it (their API answering 503 to every poll); and, as the daemon's own path for comparison, the
// same 1,000 chats posted to the control API.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startFakeTwitchIrc } from '../../test/support/fakes/twitch-irc.js';
import { ControlClient, chatSeqText, Subscribers, type Target } from './clients.js';
import { type BenchContext, type DaemonChild, startDaemonChild } from './context.js';
import { type Section, table } from './report.js';
import { fmt, median, ratio, type Summary, summarize } from './stats.js';

const N = 100;
const BURST = 1000;
const ROUNDS = 3;
/** Seqs of this benchmark's messages (distinct from the other benchmarks' in this process). */
let nextSeq = 20_000_000;

interface Side {
  name: string;
  channel: string;
  child: DaemonChild;
  subs: Subscribers;
  control: ControlClient;
}

/** A YouTube Data API that answers every request 503 in Google's error envelope. */
async function startFailingYouTube(): Promise<{
  url: string;
  requests: () => number;
  close(): Promise<void>;
}> {
  let requests = 0;
  const server: Server = createServer((_req, res) => {
    requests++;
    res.writeHead(503, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        error: {
          code: 503,
          message: 'The service is currently unavailable.',
          errors: [{ reason: 'backendError' }],
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/youtube/v3`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function waitForConnected(control: ControlClient, channel: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = JSON.parse((await control.expect('GET', '/status', undefined, 200)).body) as {
      sources?: { platform: string; channel: string; state: string }[];
    };
    const source = status.sources?.find((s) => s.platform === 'twitch' && s.channel === channel);
    if (source?.state === 'connected') return;
    if (Date.now() > deadline)
      throw new Error(`the Twitch source of #${channel} did not connect (${source?.state})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function runPlatforms(ctx: BenchContext): Promise<Section> {
  const irc = await startFakeTwitchIrc();
  const youtube = await startFailingYouTube();
  const sides: Side[] = [];
  try {
    const [alone, crowded] = await Promise.all([
      startDaemonChild(ctx, ['--source', 'twitch:benchalone', '--twitch-irc', irc.url]),
      startDaemonChild(ctx, [
        '--source',
        'twitch:benchcrowded',
        '--source',
        'youtube:@failingone',
        '--source',
        'youtube:@failingtwo',
        '--twitch-irc',
        irc.url,
        '--youtube-api',
        youtube.url,
      ]),
    ]);
    for (const [name, channel, child] of [
      ['Twitch source alone', 'benchalone', alone],
      ['beside two failing YouTube sources', 'benchcrowded', crowded],
    ] as const) {
      const target: Target = { port: child.port, adminKey: child.adminKey };
      const side: Side = {
        name,
        channel,
        child,
        subs: new Subscribers(target),
        control: new ControlClient(target),
      };
      sides.push(side);
      await waitForConnected(side.control, channel);
      await side.subs.add(N, child.overlayIds.slice(0, 1));
    }
    ctx.log(`platforms: N=${N} clients on each daemon, bursts of ${BURST} chat lines`);

    const bursts = new Map<Side, Summary[]>(sides.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        bursts.get(side)?.push(await chatBurst(side, (seq) => sendChat(irc, side.channel, seq)));
      }
    }
    const [aloneSide, crowdedSide] = sides as [Side, Side];
    // The same burst through the control API, 8 POSTs in flight: the daemon's path without a platform.
    const posted = await chatBurst(aloneSide, (seq) => postChat(aloneSide.control, seq), 8);
    const failingPolls = youtube.requests();
    ctx.log(
      `platforms: p99 alone ${fmt(median((bursts.get(aloneSide) ?? []).map((s) => s.p99)))} ms, beside failing sources ${fmt(median((bursts.get(crowdedSide) ?? []).map((s) => s.p99)))} ms`,
    );
    return platformsSection(
      sides.map((s) => ({ name: s.name, rounds: bursts.get(s) ?? [] })),
      posted,
      failingPolls,
    );
  } finally {
    for (const side of sides) {
      await side.subs.close();
      side.control.close();
      await side.child.stop();
    }
    await irc.close();
    await youtube.close();
  }
}

function sendChat(irc: Awaited<ReturnType<typeof startFakeTwitchIrc>>, channel: string, seq: number): void {
  irc.privmsg(channel, { login: 'benchviewer', displayName: 'Bench Viewer' }, chatSeqText(seq), {
    id: randomUUID(),
  });
}

function postChat(control: ControlClient, seq: number): Promise<void> {
  const body = JSON.stringify({
    type: 'chat',
    platform: 'twitch',
    user: { uniqueId: 'benchviewer', nickname: 'Bench Viewer' },
    data: { comment: chatSeqText(seq) },
  });
  return control.call('POST', '/api/events', body).then((res) => {
    if (res.status !== 202) throw new Error(`POST /api/events answered ${res.status}: ${res.body}`);
  });
}

/**
 * Sends BURST chat messages as fast as `send` goes (in flight at once: all for the chat server, `window`
 * for the control API); each delivery is timed from its own send to each client's receipt.
 */
async function chatBurst(
  side: Side,
  send: (seq: number) => void | Promise<void>,
  window = BURST,
): Promise<Summary> {
  // A few unrecorded messages first: connections and caches warm.
  for (let i = 0; i < 20; i++) {
    const seq = nextSeq++;
    const all = side.subs.expect(seq);
    await send(seq);
    await all;
  }
  side.subs.latencies = [];
  side.subs.recording = true;
  const all: Promise<void>[] = [];
  const start = performance.now();
  let sent = 0;
  const worker = async () => {
    while (sent < BURST) {
      sent++;
      const seq = nextSeq++;
      all.push(side.subs.expect(seq, 30_000));
      await send(seq);
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, BURST) }, worker));
  await Promise.all(all);
  side.subs.recording = false;
  const elapsed = side.subs.lastReceiveAt - start;
  const summary = summarize(side.subs.latencies);
  side.subs.latencies = [];
  return { ...summary, elapsedMs: elapsed } as Summary & { elapsedMs: number };
}

function platformsSection(
  sides: { name: string; rounds: Summary[] }[],
  posted: Summary,
  failingPolls: number,
): Section {
  const [alone, crowded] = sides as [(typeof sides)[0], (typeof sides)[0]];
  const p99 = (rounds: Summary[]) => median(rounds.map((r) => r.p99));
  const p50 = (rounds: Summary[]) => median(rounds.map((r) => r.p50));
  const aloneP99 = p99(alone.rounds);
  const crowdedP99 = p99(crowded.rounds);
  const elapsed = (r: Summary) => (r as Summary & { elapsedMs?: number }).elapsedMs ?? 0;
  return {
    title: '9. Platforms: a Twitch chat burst to 100 overlay clients',
    headlines: [
      {
        benchmark: '9 platforms',
        measure: `${BURST} Twitch chat lines in a burst → ${N} clients, p99`,
        value: `${fmt(aloneP99)} ms`,
        baseline: `${fmt(posted.p99)} ms (same chats posted to the control API)`,
        ratio: ratio(aloneP99, posted.p99),
        target: '< 20 ms',
        met: aloneP99 < 20,
      },
      {
        benchmark: '9 platforms',
        measure: 'the same burst beside two failing YouTube sources, p99',
        value: `${fmt(crowdedP99)} ms`,
        baseline: `${fmt(aloneP99)} ms (alone)`,
        ratio: ratio(crowdedP99, aloneP99),
        target: 'not slower',
      },
    ],
    body: [
      `Two daemons, each with ${N} subscribed clients on one overlay and a Twitch source reading a channel of the`,
      "stand-in chat server (IRC over WebSocket with Twitch tags, in the bench process) through the daemon's real",
      `source (\`@twurple/chat\`, the chat mapping, de-duplication, the journal, the hub). The server writes ${BURST} PRIVMSG`,
      "lines as fast as it can; each delivery is timed from the moment its line was written to the client's receipt",
      `(${BURST * N} deliveries per burst). ${ROUNDS} bursts per daemon, alternating; medians of the bursts' figures.`,
      'The second daemon also runs two YouTube sources whose API answers every request with 503: they retry with',
      `growing waits (${failingPolls} requests in all during the run) while the burst goes through.`,
      '',
      ...table(
        ['daemon', 'p50 ms', 'p99 ms', 'bursts: p99 each', 'burst sent → last receipt'],
        [
          ...sides.map((s) => [
            s.name,
            fmt(p50(s.rounds)),
            fmt(p99(s.rounds)),
            s.rounds.map((r) => fmt(r.p99)).join(', '),
            `${fmt(median(s.rounds.map(elapsed)))} ms`,
          ]),
          [
            'same chats via POST /api/events (8 in flight)',
            fmt(posted.p50),
            fmt(posted.p99),
            '—',
            `${fmt(elapsed(posted))} ms`,
          ],
        ],
      ),
      '',
      `p99 beside failing sources / alone: ${ratio(crowdedP99, aloneP99)}. In a burst the last lines wait for the first`,
      "ones to be journaled and fanned out: the p99 is mostly that queue, the time to take 1,000 lines in, not any one line's path.",
    ],
  };
}
