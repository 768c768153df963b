// Benchmark 12, the relay at scale: 1,000 and 5,000 viewer sockets on one overlay of the Gatekeeper in
// workerd, and in the same run the daemon's own fan-out to as many pages.
//
// The Worker is bundled as `wrangler deploy --dry-run` bundles it and run by Miniflare's JS API (workerd's
// own socket, no `wrangler dev` proxy) with the shipped relay layout (RELAY_SHARDS 20 × RELAY_SHARD_SIZE
// 5,000) and the shipped per-address limits: each viewer socket is bound to a loopback address of its
// own block, five per address (the relay's limit), and Miniflare hands the Worker that address as
// `CF-Connecting-IP`. The bench is the publisher, with a Premium licence it signs.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Miniflare, type WorkerOptions } from 'miniflare';
import { WebSocket } from 'ws';
import { ControlClient, giftBody, Subscribers, type Target } from './clients.js';
import { type BenchContext, type DaemonChild, startDaemonChild } from './context.js';
import { bundle, premiumMemberLicence, subdomainOf } from './gatekeeper.js';
import { childrenNamed, cpuSeconds, residentBytes } from './proc.js';
import {
  type JoinFigures,
  type Point,
  type RelayFigures,
  relaySection,
  type Side,
} from './relay-scale-report.js';
import { type RelayTarget, RelayViewers } from './relay-viewers.js';
import type { Section } from './report.js';
import { fmt, kib, summarize } from './stats.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COMPATIBILITY_DATE = '2026-05-01';
const PUBLIC_BASE_URL = 'http://gatekeeper.bench';
const USER_ID = 'bench-relay-member';
const SIZES = [1000, 5000] as const;
/** Events per round and size, one at a time to each server in turn, every EVENT_SPACING_MS; LATENCY_ROUNDS rounds. */
const EVENTS: Record<number, number> = { 1000: 40, 5000: 20 };
const LATENCY_ROUNDS = 3;
const WARMUP_EVENTS = 5;
const EVENT_SPACING_MS = 100;
/** A lone event: past the hub's 50 ms batch window after the previous one, so none waits for a batch. */
const RELAY_GAP_MS = 60;
/** Viewers and pages opening at once while a population grows. */
const JOIN_CONCURRENCY = 32;
/** The resume buffer filled past one replay's 2 MiB: this many stream events of about 4.2 KB each. */
const FILL_MESSAGES = 600;
const FILL_PAD_CHARS = 4000;
/** Joins sampled against the full buffer: with `resumeFrom` below everything kept (2 MiB replayed each), and without. */
const SAMPLE_JOINS = 60;
const SAMPLE_CONCURRENCY = 4;
/** Left alone this long after a population joined, before memory is read. */
const SETTLE_MS = 3000;
/** Loopback blocks 127.<block>.x.y of the viewer sockets (the daemon's pages use 127.1.x.y). */
const BLOCK = { viewers: 20, bare: 21, plain: 22, resume: 23, warm: 30 } as const;
const P99_TARGET_RATIO = 2;
/** The Host that routes to the baseline Worker (scripts/bench/workers/bare-relay.js) in the same workerd. */
const BARE_HOST = 'bare.bench';
/** The method as the section describes it. */
const METHOD: RelayFigures['method'] = {
  events: EVENTS,
  warmup: WARMUP_EVENTS,
  rounds: LATENCY_ROUNDS,
  spacingMs: EVENT_SPACING_MS,
  joinConcurrency: JOIN_CONCURRENCY,
  fillMessages: FILL_MESSAGES,
  sampleJoins: SAMPLE_JOINS,
  sampleConcurrency: SAMPLE_CONCURRENCY,
  settleMs: SETTLE_MS,
  p99TargetRatio: P99_TARGET_RATIO,
};

interface Relay {
  mf: Miniflare;
  workerd: number;
  wsBase: string;
  subdomain: string;
  overlayId: string;
  publisher: WebSocket;
  /** The baseline's publisher socket. */
  barePublisher: WebSocket;
}

/** The Gatekeeper in workerd with a premium member, its publisher connected and its overlay published. */
async function startRelay(scratch: string): Promise<Relay> {
  const built = await bundle(join(ROOT, 'wrangler.toml'), join(scratch, 'gatekeeper'));
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench-key' };
  const subdomainSecret = randomBytes(32).toString('base64');
  const closed = 'http://127.0.0.1:9';
  const gatekeeper: WorkerOptions = {
    name: 'gatekeeper',
    modules: true,
    scriptPath: built.file,
    modulesRoot: dirname(built.file),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: ['nodejs_compat'],
    bindings: {
      PUBLIC_BASE_URL,
      MEMBERSHIP_CLIENT_ID: 'bench',
      MEMBERSHIP_CLIENT_SECRET: 'bench',
      // Never reached: the member record below is fresh.
      MEMBERSHIP_API_BASE: closed,
      MEMBERSHIP_CAMPAIGN_ID: '1000',
      JWT_PRIVATE_JWK: JSON.stringify(jwk),
      CLOUDFLARE_API_TOKEN: 'bench',
      CLOUDFLARE_ACCOUNT_ID: '023e105f4ecef8ad9ca31a8372d0c353',
      CLOUDFLARE_ZONE_ID: '023e105f4ecef8ad9ca31a8372d0c354',
      CLOUDFLARE_API_BASE: `${closed}/client/v4`,
      TUNNEL_DOMAIN: 'overlays.test',
      SUBDOMAIN_SECRET: subdomainSecret,
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      KICK_API_URL: closed,
      RELAY_SHARDS: '20',
      RELAY_SHARD_SIZE: '5000',
    },
    kvNamespaces: ['GATEKEEPER_KV'],
    durableObjects: {
      ONE_TIME_STORE: { className: 'OneTimeStore', useSQLite: true },
      MEMBERSHIP_RECHECK: { className: 'MembershipRecheck', useSQLite: true },
      OVERLAY_RELAY: { className: 'OverlayRelay', useSQLite: true },
      RELAY_SHARD: { className: 'RelayShard', useSQLite: true },
      KICK_CHANNEL: { className: 'KickChannel', useSQLite: true },
    },
    // The shipped limits (wrangler.toml): each viewer address opens five sockets, far below 300 a minute.
    ratelimits: {
      RATE_LIMITER: { simple: { limit: 30, period: 60 } },
      VIEWER_RATE_LIMITER: { simple: { limit: 300, period: 60 } },
    },
  };
  const bare: WorkerOptions = {
    name: 'bare',
    modules: true,
    scriptPath: join(ROOT, 'scripts/bench/workers/bare-relay.js'),
    compatibilityDate: COMPATIBILITY_DATE,
    routes: [`${BARE_HOST}/*`],
    durableObjects: { BARE_ROOM: { className: 'BareRoom', useSQLite: true } },
  };
  const mf = new Miniflare({ host: '127.0.0.1', port: 0, workers: [gatekeeper, bare] });
  try {
    const base = await mf.ready;
    const [workerd] = await childrenNamed(process.pid, 'workerd');
    if (workerd === undefined) throw new Error('no workerd process found under this one');
    const kv = await mf.getKVNamespace('GATEKEEPER_KV');
    const licence = await premiumMemberLicence(kv, jwk, USER_ID, PUBLIC_BASE_URL);
    const wsBase = base.origin.replace(/^http/, 'ws');
    const overlayId = crypto.randomUUID();
    const publisher = new WebSocket(`${wsBase}/relay/publish/${overlayId}`, {
      headers: { Authorization: `Bearer ${licence}` },
      localAddress: '127.0.0.1',
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      publisher.once('message', () => resolve());
      publisher.once('error', reject);
      publisher.once('unexpected-response', (_req, res) =>
        reject(new Error(`publish answered ${res.statusCode}`)),
      );
    });
    publisher.send(
      JSON.stringify({
        type: 'snapshot',
        init: { type: 'init', overlay: { name: 'bench', width: 1920, height: 1080 }, widgets: [] },
      }),
    );
    const barePublisher = new WebSocket(`${wsBase}/publish`, {
      headers: { host: BARE_HOST },
      localAddress: '127.0.0.1',
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      barePublisher.once('open', () => resolve());
      barePublisher.once('error', reject);
    });
    const subdomain = subdomainOf(subdomainSecret, USER_ID);
    return { mf, workerd, wsBase, subdomain, overlayId, publisher, barePublisher };
  } catch (err) {
    await mf.dispose();
    throw err;
  }
}

/** A gift as the daemon publishes it: a `stream-event` with its `seq`, `data.seq` naming it for the viewers. */
function giftFrame(seq: number, pad?: string): string {
  const data = { giftName: 'Rose', repeatCount: 1, seq, ...(pad ? { pad } : {}) };
  return JSON.stringify({
    type: 'message',
    msg: {
      type: 'stream-event',
      seq,
      at: Date.now(),
      event: { type: 'gift', platform: 'api', user: { uniqueId: 'bench', nickname: 'Bench' }, data },
    },
  });
}

/** The same gift as a page gets it (the bare room sends the publisher's frame as it is). */
function giftMessage(seq: number): string {
  return JSON.stringify(JSON.parse(giftFrame(seq)).msg);
}

/** Fills the hub's resume buffer past one replay's bytes, at 150 frames/s (under its 200/s). */
async function fillBuffer(relay: Relay): Promise<number> {
  const pad = 'x'.repeat(FILL_PAD_CHARS);
  let bytes = 0;
  for (let seq = 1; seq <= FILL_MESSAGES; seq++) {
    const frame = giftFrame(seq, pad);
    bytes += frame.length;
    relay.publisher.send(frame);
    if (seq % 15 === 0) await sleep(100);
  }
  return bytes;
}

async function timedJoins(
  pid: number,
  joins: number,
  open: () => Promise<number | undefined>,
): Promise<JoinFigures> {
  const cpuBefore = await cpuSeconds(pid);
  const started = performance.now();
  const timed = await open();
  const seconds = timed ?? (performance.now() - started) / 1000;
  const cpu = (await cpuSeconds(pid)) - cpuBefore;
  return { joins, seconds, perSecond: joins / seconds, cpuMs: (cpu * 1000) / joins, busy: cpu / seconds };
}

type Paced = Record<keyof Omit<Point, 'n' | 'ratios'>, Pick<Side, 'latency' | 'cpuUs'>>;

/**
 * One round: one event at a time to the relay, the bare room and the daemon, the order turning by one
 * each time, every EVENT_SPACING_MS, a relay event never within RELAY_GAP_MS of the previous (a lone
 * event, sent at once by the hub). The relay and the bare room share workerd: its CPU is read around
 * each of their events (10 ms ticks, summed over the round); the daemon's over the round.
 */
async function pacedRound(
  relay: Relay,
  sockets: { relay: RelayViewers; bare: RelayViewers },
  direct: { daemon: DaemonChild; pages: Subscribers; control: ControlClient },
  events: number,
  nextSeq: () => number,
): Promise<Paced> {
  const { daemon, pages, control } = direct;
  const cpu = { relay: 0, bare: 0 };
  let lastRelayAt = 0;
  const relayed = async (which: 'relay' | 'bare', recording: boolean) => {
    if (which === 'relay') await sleep(Math.max(0, lastRelayAt + RELAY_GAP_MS - performance.now()));
    const viewers = sockets[which];
    const seq = nextSeq();
    const before = await cpuSeconds(relay.workerd);
    viewers.recording = recording;
    const all = viewers.expect(seq);
    if (which === 'relay') {
      lastRelayAt = performance.now();
      relay.publisher.send(giftFrame(seq));
    } else relay.barePublisher.send(giftMessage(seq));
    await all;
    viewers.recording = false;
    if (recording) cpu[which] += (await cpuSeconds(relay.workerd)) - before;
  };
  const posted = async (recording: boolean) => {
    const seq = nextSeq();
    pages.recording = recording;
    const all = pages.expect(seq);
    const res = await control.call('POST', '/api/events', giftBody(seq));
    if (res.status !== 202) throw new Error(`POST /api/events answered ${res.status}: ${res.body}`);
    await all;
    pages.recording = false;
  };
  const steps = [(r: boolean) => relayed('relay', r), (r: boolean) => relayed('bare', r), posted];
  const one = async (i: number, recording: boolean) => {
    const started = performance.now();
    for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]?.(recording);
    await sleep(Math.max(0, EVENT_SPACING_MS - (performance.now() - started)));
  };
  for (let i = 0; i < WARMUP_EVENTS; i++) await one(i, false);
  sockets.relay.latencies = [];
  sockets.bare.latencies = [];
  pages.latencies = [];
  const d0 = await cpuSeconds(daemon.pid);
  for (let i = 0; i < events; i++) await one(i, true);
  const d1 = await cpuSeconds(daemon.pid);
  const perDelivery = (seconds: number, n: number) => (seconds * 1e6) / (events * n);
  const side = (viewers: RelayViewers, seconds: number) => ({
    latency: summarize(viewers.latencies),
    cpuUs: perDelivery(seconds, viewers.count),
  });
  return {
    relay: side(sockets.relay, cpu.relay),
    bare: side(sockets.bare, cpu.bare),
    daemon: { latency: summarize(pages.latencies), cpuUs: perDelivery(d1 - d0, pages.count) },
  };
}

/**
 * LATENCY_ROUNDS rounds: the one whose p99 ratio (relay ÷ daemon) is the median, and every round's
 * ratio. A p99 of a few dozen events is set by the slowest of them, which meet whatever else the
 * machine runs; the median round keeps one unlucky stretch from deciding the comparison.
 */
async function pacedEvents(
  relay: Relay,
  sockets: { relay: RelayViewers; bare: RelayViewers },
  direct: { daemon: DaemonChild; pages: Subscribers; control: ControlClient },
  events: number,
  nextSeq: () => number,
): Promise<Paced & { ratios: number[] }> {
  const rounds: Paced[] = [];
  for (let round = 0; round < LATENCY_ROUNDS; round++)
    rounds.push(await pacedRound(relay, sockets, direct, events, nextSeq));
  const ratioOf = (r: Paced) => r.relay.latency.p99 / r.daemon.latency.p99;
  const sorted = [...rounds].sort((a, b) => ratioOf(a) - ratioOf(b));
  const middle = sorted[Math.floor(sorted.length / 2)] as Paced;
  return { ...middle, ratios: rounds.map(ratioOf) };
}

/** Open files this process may hold (the workerd and daemon children inherit the same limit). */
async function openFileLimit(): Promise<number> {
  const limits = await readFile('/proc/self/limits', 'utf8');
  return Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? 1024);
}

async function threads(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/task`)).length;
}

/** Anonymous RSS of a process, bytes, after a full GC when it can be asked for one (the daemon). */
async function anon(pid: number, gc?: () => Promise<unknown>): Promise<number> {
  await gc?.();
  return (await residentBytes(pid)).anon;
}

/** Grows one population to `n`: the seconds and CPU of its joins, then the process's RssAnon once settled. */
async function grow(
  pid: number,
  n: number,
  current: number,
  open: (count: number) => Promise<number | undefined>,
  gc?: () => Promise<unknown>,
): Promise<{ join: JoinFigures; anon: number }> {
  const add = n - current;
  const join = await timedJoins(pid, add, () => open(add));
  await sleep(SETTLE_MS);
  return { join, anon: await anon(pid, gc) };
}

/** Warms every path, then times joins against the full buffer, without and with a 2 MiB replay. */
async function sampleJoins(
  ctx: BenchContext,
  workerd: number,
  [target, bareTarget]: [RelayTarget, RelayTarget],
  daemonTarget: Target,
  overlayIds: string[],
): Promise<{ plainJoin: JoinFigures; resumeJoin: JoinFigures }> {
  for (const warm of [new RelayViewers(target, BLOCK.warm), new RelayViewers(bareTarget, BLOCK.warm + 1)]) {
    await warm.add(10, 4);
    await warm.close();
  }
  const warmPages = new Subscribers(daemonTarget);
  await warmPages.add(10, overlayIds);
  await warmPages.close();
  const plain = new RelayViewers(target, BLOCK.plain);
  const resumed = new RelayViewers(target, BLOCK.resume);
  try {
    const plainJoin = await timedJoins(workerd, SAMPLE_JOINS, () =>
      plain.add(SAMPLE_JOINS, SAMPLE_CONCURRENCY),
    );
    const resumeJoin = await timedJoins(workerd, SAMPLE_JOINS, () =>
      resumed.add(SAMPLE_JOINS, SAMPLE_CONCURRENCY, 1),
    );
    ctx.log(
      `relay: join with the full buffer ${fmt(plainJoin.cpuMs)} ms CPU, with a 2 MiB replay ${fmt(resumeJoin.cpuMs)} ms`,
    );
    return { plainJoin, resumeJoin };
  } finally {
    await plain.close();
    await resumed.close();
  }
}

export async function runRelayScale(ctx: BenchContext): Promise<Section> {
  // The bench holds a client end of every viewer socket, bare socket and page: three per viewer, plus slack.
  const limit = await openFileLimit();
  const fits = (n: number) => 3 * n + 2 * SAMPLE_JOINS + 512 <= limit;
  const sizes = SIZES.filter(fits);
  const skipped = SIZES.filter((n) => !fits(n));
  if (sizes.length === 0) throw new Error(`open files limited to ${limit}: not even ${SIZES[0]} viewers fit`);
  const scratch = await mkdtemp(join(tmpdir(), 'overlay-bench-relay-'));
  let relay: Relay | undefined;
  let daemon: DaemonChild | undefined;
  const groups: RelayViewers[] = [];
  let pages: Subscribers | undefined;
  let control: ControlClient | undefined;
  try {
    [relay, daemon] = await Promise.all([startRelay(scratch), startDaemonChild(ctx)]);
    const { wsBase, subdomain, overlayId, workerd } = relay;
    const target = {
      url: `${wsBase}/v/${subdomain}/${overlayId}/ws`,
      headers: { Origin: PUBLIC_BASE_URL },
      overlayId,
    };
    const bareTarget = { url: `${wsBase}/ws`, headers: { host: BARE_HOST }, overlayId };
    const viewers = new RelayViewers(target, BLOCK.viewers);
    const bare = new RelayViewers(bareTarget, BLOCK.bare);
    groups.push(viewers, bare);
    const daemonTarget = { port: daemon.port, adminKey: daemon.adminKey };
    pages = new Subscribers(daemonTarget);
    control = new ControlClient(daemonTarget);
    const overlayIds = daemon.overlayIds.slice(0, 1);
    const keptBytes = await fillBuffer(relay);
    ctx.log(
      `relay: workerd ${workerd} (${await threads(workerd)} threads), buffer ${kib(keptBytes)} in ${FILL_MESSAGES} events`,
    );
    let seq = FILL_MESSAGES;
    const nextSeq = () => ++seq;

    const { plainJoin, resumeJoin } = await sampleJoins(
      ctx,
      workerd,
      [target, bareTarget],
      daemonTarget,
      overlayIds,
    );
    await sleep(SETTLE_MS);
    const gc = () => daemon?.gc() ?? Promise.resolve();
    let lastAnon = await anon(workerd);
    const daemonBefore = await anon(daemon.pid, gc);
    const grown = { relay: 0, bare: 0 };

    const points: Point[] = [];
    for (const n of sizes) {
      // The relay and the bare room share workerd: each grows in turn, and each one's memory is what
      // the process gained while it grew, summed over the sizes.
      const r = await grow(workerd, n, viewers.count, (k) => viewers.add(k, JOIN_CONCURRENCY));
      grown.relay += r.anon - lastAnon;
      const b = await grow(workerd, n, bare.count, (k) => bare.add(k, JOIN_CONCURRENCY));
      grown.bare += b.anon - r.anon;
      lastAnon = b.anon;
      const d = await grow(
        daemon.pid,
        n,
        pages.count,
        async (k) => {
          await pages?.add(k, overlayIds, JOIN_CONCURRENCY);
          return undefined;
        },
        gc,
      );
      const paced = await pacedEvents(
        relay,
        { relay: viewers, bare },
        { daemon, pages, control },
        EVENTS[n] ?? 20,
        nextSeq,
      );
      const point: Point = {
        n,
        relay: { join: r.join, bytes: grown.relay / n, ...paced.relay },
        bare: { join: b.join, bytes: grown.bare / n, ...paced.bare },
        daemon: { join: d.join, bytes: (d.anon - daemonBefore) / n, ...paced.daemon },
        ratios: paced.ratios,
      };
      for (const side of ['relay', 'bare', 'daemon'] as const) {
        const f = point[side];
        ctx.log(
          `relay: N=${n} ${side}: ${fmt(f.join.perSecond)} joins/s, ${kib(f.bytes)} per socket, p50 / p99 ${fmt(f.latency.p50)} / ${fmt(f.latency.p99)} ms, ${fmt(f.cpuUs)} µs CPU per delivery`,
        );
      }
      points.push(point);
    }
    return relaySection({
      points,
      plainJoin,
      resumeJoin,
      keptBytes,
      skipped,
      limit,
      threads: await threads(workerd),
      method: METHOD,
    });
  } finally {
    for (const group of groups) await group.close();
    await pages?.close();
    control?.close();
    relay?.publisher.terminate();
    relay?.barePublisher.terminate();
    await relay?.mf.dispose();
    await daemon?.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}
