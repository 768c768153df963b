// Benchmark 11, chat: an event to a chat message at the platform. A viewer's `!points` in Twitch chat
// (the stand-in chat server, read by the daemon's real Twitch source) is answered by the built-in
// command with a `chat` action, which goes through the action runner, Twitch's send queue and the Twitch
// sender to the stand-in's Helix `POST /helix/chat/messages`; each answer is timed from the moment the
// chat line is written to the moment the stand-in takes the message. Twitch allows 20 messages per 30 s
// and the daemon keeps to it, so each run is a fresh daemon measuring its first 20 sends (one at a time:
// latency, not the send limit); several runs. The floor is the same Helix call made straight from the
// bench process.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeTwitchTokens } from '../../daemon/src/sources/twitch/auth.js';
import {
  type FakeToken,
  type FakeTwitch,
  startFakeTwitch,
  storedTokens,
} from '../../test/support/fakes/twitch.js';
import { startFakeTwitchIrc } from '../../test/support/fakes/twitch-irc.js';
import { startServerChild } from './child.js';
import { ControlClient } from './clients.js';
import type { BenchContext } from './context.js';
import { type Section, table } from './report.js';
import { fmt, median, ratio, summarize } from './stats.js';

/** Runs (a fresh daemon each) and sends per run: Twitch's limit is 20 messages per 30 s. */
export const RUNS = 10;
export const SENDS = 20;
/** The floor: this many Helix calls straight from the bench process. */
export const FLOOR_CALLS = 200;

/** What each run measured: every send's latency, in the order sent. */
interface Run {
  latencies: number[];
  /** From the daemon's start to its Twitch source connected and signed in. */
  readyMs: number;
}

export async function runChat(ctx: BenchContext): Promise<Section> {
  const irc = await startFakeTwitchIrc();
  /** The message each send waits for, by its text; resolved by the stand-in when it takes it. */
  const waiting = new Map<string, (at: number) => void>();
  const twitch = await startFakeTwitch({
    // Called as the stand-in takes a message (before it answers): the moment a send arrives.
    chat: {
      privmsg: (_channel, _user, message) => {
        const at = performance.now();
        waiting.get(message)?.(at);
        waiting.delete(message);
        return '';
      },
    },
  });
  try {
    const runs: Run[] = [];
    for (let r = 0; r < RUNS; r++) runs.push(await oneRun(ctx, irc, twitch, waiting, r));
    const floor = await helixFloor(twitch);
    const all = summarize(runs.flatMap((run) => run.latencies));
    ctx.log(
      `chat: ${all.count} sends, p50 ${fmt(all.p50)} ms, p99 ${fmt(all.p99)} ms (floor p99 ${fmt(floor.p99)} ms)`,
    );
    return chatSection(runs, floor);
  } finally {
    await irc.close();
    await twitch.close();
  }
}

async function oneRun(
  ctx: BenchContext,
  irc: Awaited<ReturnType<typeof startFakeTwitchIrc>>,
  twitch: FakeTwitch,
  waiting: Map<string, (at: number) => void>,
  run: number,
): Promise<Run> {
  const dataDir = await mkdtemp(join(tmpdir(), 'overlay-bench-chat-'));
  // Signed in as the broadcaster with chat sending; `!points` answered without cooldowns.
  await writeTwitchTokens(dataDir, storedTokens(twitch.issueTokens()));
  await writeFile(
    join(dataDir, 'settings.json'),
    JSON.stringify({
      twitch: { clientId: twitch.clientId },
      sources: [{ platform: 'twitch', channel: twitch.user.login }],
      commands: { points: { enabled: true, cooldownMs: 0, userCooldownMs: 0 } },
    }),
  );
  const started = performance.now();
  const child = await startServerChild('daemon-server', {
    args: [
      '--data-dir',
      dataDir,
      '--twitch-irc',
      irc.url,
      '--twitch-api',
      twitch.urls.api,
      '--twitch-auth',
      twitch.urls.auth,
      '--twitch-eventsub',
      twitch.urls.eventsub,
    ],
    ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}),
  });
  const control = new ControlClient({ port: child.ready.port, adminKey: child.ready.adminKey ?? '' });
  try {
    await waitForSignedIn(control);
    const readyMs = performance.now() - started;
    const latencies: number[] = [];
    for (let i = 0; i < SENDS; i++) {
      const login = `benchviewer${run}x${i}`;
      const arrived = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${login}'s !points in 10 s`)), 10_000);
        waiting.set(`${login} has 0 points`, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      });
      const sentAt = performance.now();
      irc.privmsg(twitch.user.login, { login }, '!points');
      latencies.push((await arrived) - sentAt);
    }
    return { latencies, readyMs };
  } finally {
    control.close();
    await child.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function waitForSignedIn(control: ControlClient): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = JSON.parse((await control.expect('GET', '/status', undefined, 200)).body) as {
      sources?: { platform: string; state: string; detail?: string }[];
    };
    const source = status.sources?.find((s) => s.platform === 'twitch');
    if (source?.state === 'connected' && source.detail === undefined) return;
    if (Date.now() > deadline)
      throw new Error(`the Twitch source did not connect signed in (${source?.state}: ${source?.detail})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The Helix call alone: `POST /helix/chat/messages` from this process, one at a time, kept alive. */
async function helixFloor(twitch: FakeTwitch) {
  const token: FakeToken = twitch.issueTokens();
  const latencies: number[] = [];
  for (let i = 0; i < FLOOR_CALLS + 10; i++) {
    const started = performance.now();
    const res = await fetch(`${twitch.urls.api}/chat/messages`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token.accessToken}`,
        'Client-Id': twitch.clientId,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({
        broadcaster_id: twitch.user.id,
        sender_id: twitch.user.id,
        message: `floor ${i}`,
      }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`the stand-in answered ${res.status}`);
    // The first few warm the connection.
    if (i >= 10) latencies.push(performance.now() - started);
  }
  return summarize(latencies);
}

function chatSection(runs: Run[], floor: ReturnType<typeof summarize>): Section {
  const all = summarize(runs.flatMap((r) => r.latencies));
  const first = summarize(runs.map((r) => r.latencies[0] ?? Number.NaN));
  const rest = summarize(runs.flatMap((r) => r.latencies.slice(1)));
  return {
    title: '11. Chat: a chat command answered at the platform',
    headlines: [
      {
        benchmark: '11 chat',
        measure: `Twitch \`!points\` → answer at the Helix stand-in, p99 (${all.count} sends)`,
        value: `${fmt(all.p99)} ms`,
        baseline: `${fmt(floor.p99)} ms (the Helix call alone, from the bench)`,
        ratio: ratio(all.p99, floor.p99),
        target: '< 50 ms',
        met: all.p99 < 50,
      },
    ],
    body: [
      `${RUNS} runs, each a fresh daemon (the compiled one, in a child process) signed in to the stand-in Twitch`,
      "(Helix, EventSub and the sign-in service in the bench process) and reading the stand-in chat server's",
      'channel through its real Twitch source, with the built-in `!points` command on and its cooldowns at 0.',
      `Each run, ${SENDS} viewers write \`!points\` one after the other; each answer is timed from the moment the`,
      'chat line is written to the moment the stand-in takes `POST /helix/chat/messages` (the journal, the',
      "command's points query, the action runner, the Twitch send queue and the sender's Helix call in between).",
      `Twitch allows 20 messages per 30 s and the daemon keeps to it, so a run measures its first ${SENDS} sends: the`,
      'latency of a send the limit lets through, not the wait the limit imposes. The floor is the same Helix call',
      `made ${FLOOR_CALLS} times straight from the bench process over a kept-alive connection.`,
      '',
      ...table(
        ['sends', 'count', 'p50 ms', 'p99 ms', 'max ms'],
        [
          ['every send', String(all.count), fmt(all.p50), fmt(all.p99), fmt(all.max)],
          ['the first of each run', String(first.count), fmt(first.p50), fmt(first.p99), fmt(first.max)],
          ['the others', String(rest.count), fmt(rest.p50), fmt(rest.p99), fmt(rest.max)],
          ['the Helix call alone', String(floor.count), fmt(floor.p50), fmt(floor.p99), fmt(floor.max)],
        ],
      ),
      '',
      `A daemon took ${fmt(median(runs.map((r) => r.readyMs)))} ms (median) from its start to its Twitch source connected and signed in.`,
    ],
  };
}
