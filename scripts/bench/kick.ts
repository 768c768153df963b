// Benchmark 10, Kick: a burst of 1,000 Kick chat lines from the Pusher stand-in (Kick's chat socket, read by the
// daemon's real Kick source) to 100 overlay clients, timed from the moment the server writes each event to each
// client's receipt; beside it, in the same run and the same way, benchmark 9's Twitch burst (IRC over WebSocket),
// so the two platforms' figures compare on one machine at one moment.
import { randomUUID } from 'node:crypto';
import { startFakeKickApi } from '../../test/support/fakes/kick-api.js';
import { startFakePusher } from '../../test/support/fakes/pusher.js';
import { startFakeTwitchIrc } from '../../test/support/fakes/twitch-irc.js';
import { ControlClient, chatSeqText, Subscribers, type Target } from './clients.js';
import { type BenchContext, type DaemonChild, startDaemonChild } from './context.js';
import { BURST, type Burst, chatBurst, N, PACED_PER_TICK, ROUNDS, sendChat, TICK_MS } from './platforms.js';
import { type Section, table } from './report.js';
import { fmt, median, ratio } from './stats.js';

const SLUG = 'benchkick';
const CHATROOM_ID = 9_100_001;
const CHANNEL_ID = 9_100_002;

interface Side {
  name: string;
  platform: 'kick' | 'twitch';
  channel: string;
  child: DaemonChild;
  subs: Subscribers;
  control: ControlClient;
  send: (seq: number) => void;
}

async function waitForConnected(control: ControlClient, platform: string, channel: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = JSON.parse((await control.expect('GET', '/status', undefined, 200)).body) as {
      sources?: { platform: string; channel: string; state: string; detail?: string }[];
    };
    const source = status.sources?.find((s) => s.platform === platform && s.channel === channel);
    if (source?.state === 'connected') return;
    if (Date.now() > deadline)
      throw new Error(
        `the ${platform} source of ${channel} did not connect (${source?.state}${source?.detail ? `: ${source.detail}` : ''})`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function runKick(ctx: BenchContext): Promise<Section> {
  const irc = await startFakeTwitchIrc();
  const pusher = await startFakePusher();
  const site = await startFakeKickApi();
  site.addChannel({ slug: SLUG, userId: CHANNEL_ID + 1, channelId: CHANNEL_ID, chatroomId: CHATROOM_ID });
  const sides: Side[] = [];
  try {
    const [twitchChild, kickChild] = await Promise.all([
      startDaemonChild(ctx, ['--source', 'twitch:benchtwitch', '--twitch-irc', irc.url]),
      startDaemonChild(ctx, [
        '--source',
        `kick:${SLUG}`,
        '--kick-pusher',
        pusher.url,
        '--kick-site',
        site.url,
      ]),
    ]);
    const sendKick = (seq: number) =>
      pusher.chatMessage(CHATROOM_ID, {
        id: randomUUID(),
        content: chatSeqText(seq),
        sender: { id: 9_200_001, username: 'benchviewer', slug: 'benchviewer' },
      });
    for (const [name, platform, channel, child, send] of [
      [
        'Twitch (IRC over WebSocket)',
        'twitch',
        'benchtwitch',
        twitchChild,
        (seq: number) => sendChat(irc, 'benchtwitch', seq),
      ],
      ['Kick (Pusher)', 'kick', SLUG, kickChild, sendKick],
    ] as const) {
      const target: Target = { port: child.port, adminKey: child.adminKey };
      const side: Side = {
        name,
        platform,
        channel,
        child,
        subs: new Subscribers(target),
        control: new ControlClient(target),
        send,
      };
      sides.push(side);
      await waitForConnected(side.control, platform, channel);
      await side.subs.add(N, child.overlayIds.slice(0, 1));
    }
    ctx.log(`kick: N=${N} clients on each daemon, bursts of ${BURST} chat lines`);

    const bursts = new Map<Side, Burst[]>(sides.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        bursts.get(side)?.push(await chatBurst(side, side.send, PACED_PER_TICK));
      }
    }
    const [, kickSide] = sides as [Side, Side];
    const flatOut = await chatBurst(kickSide, kickSide.send, BURST);
    const p99 = (side: Side) => median((bursts.get(side) ?? []).map((r) => r.p99));
    ctx.log(`kick: p99 Kick ${fmt(p99(kickSide))} ms, Twitch ${fmt(p99(sides[0] as Side))} ms`);
    return kickSection(
      sides.map((s) => ({ name: s.name, rounds: bursts.get(s) ?? [] })),
      flatOut,
    );
  } finally {
    for (const side of sides) {
      await side.subs.close();
      side.control.close();
      await side.child.stop();
    }
    await irc.close();
    await pusher.close();
    await site.close();
  }
}

function kickSection(sides: { name: string; rounds: Burst[] }[], flatOut: Burst): Section {
  const [twitch, kick] = sides as [(typeof sides)[0], (typeof sides)[0]];
  const p99 = (rounds: Burst[]) => median(rounds.map((r) => r.p99));
  const p50 = (rounds: Burst[]) => median(rounds.map((r) => r.p50));
  const kickP99 = p99(kick.rounds);
  const twitchP99 = p99(twitch.rounds);
  const rate = (BURST / ((BURST / PACED_PER_TICK) * TICK_MS)) * 1000;
  return {
    title: '10. Kick: a Kick chat burst to 100 overlay clients, beside Twitch',
    headlines: [
      {
        benchmark: '10 kick',
        measure: `burst of ${BURST} Kick chat lines (${fmt(rate)}/s) via Pusher → ${N} clients, p99`,
        value: `${fmt(kickP99)} ms`,
        baseline: `${fmt(twitchP99)} ms (benchmark 9's Twitch burst, same run)`,
        ratio: ratio(kickP99, twitchP99),
        target: '< 20 ms',
        met: kickP99 < 20,
      },
    ],
    body: [
      `Two daemons, each with ${N} subscribed clients on one overlay. One has a Kick source whose chat comes from the`,
      "Pusher stand-in (Pusher protocol 7, in the bench process) through the daemon's real source (the Pusher",
      'client, the chat mapping, de-duplication by Kick message id, the journal, the hub); the chatroom id is',
      "resolved from the stand-in's channel page. The other has benchmark 9's Twitch source reading the stand-in chat",
      `server. Each server writes ${BURST} chat lines, ${PACED_PER_TICK} every ${TICK_MS} ms (${fmt(rate)} lines/s); each delivery is timed from`,
      `the moment its line was written to each client's receipt (${BURST * N} deliveries per burst). ${ROUNDS} bursts per`,
      "daemon, alternating; medians of the bursts' figures.",
      '',
      ...table(
        ['daemon', 'p50 ms', 'p99 ms', 'p99 of each burst', 'first line sent → last receipt'],
        [
          ...[kick, twitch].map((s) => [
            s.name,
            fmt(p50(s.rounds)),
            fmt(p99(s.rounds)),
            s.rounds.map((r) => fmt(r.p99)).join(', '),
            `${fmt(median(s.rounds.map((r) => r.elapsedMs)))} ms`,
          ]),
          [
            `all ${BURST} Kick lines at once`,
            fmt(flatOut.p50),
            fmt(flatOut.p99),
            '—',
            `${fmt(flatOut.elapsedMs)} ms`,
          ],
        ],
      ),
      '',
      `p99 Kick / Twitch: ${ratio(kickP99, twitchP99)}. All ${BURST} Kick lines written at once take ${fmt(flatOut.elapsedMs)} ms to reach`,
      `every client (${fmt((BURST / flatOut.elapsedMs) * 1000)} lines/s): as in benchmark 9, that is the machine's fan-out capacity at N=${N}.`,
    ],
  };
}
