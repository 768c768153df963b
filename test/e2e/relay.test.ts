// The overlay relay end to end: the real daemon, signed in as Premium, publishes a public overlay to the Gatekeeper
// under `wrangler dev`; a thousand viewer sockets and a Chromium viewer page watch it through the relay.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.js';
import { type LocalStack, startLocalStack } from '../support/local-stack.js';
import { until } from '../support/wait.js';
import {
  type DaemonProcess,
  STACK_WAIT_MS,
  signIn,
  startDaemonProcess,
  tcpConnectionsTo,
} from './harness.js';
import { openViewer, openViewers, type Viewer, viewerIp } from './relay-viewers.js';

// 1,000 sockets through wrangler dev fit this machine (its proxy dies near 3,300); RELAY_E2E_VIEWERS measures others.
const VIEWERS = Number(process.env.RELAY_E2E_VIEWERS ?? 1000);
// Below the relay's 5 sockets per address, so no viewer is refused for its address.
const PER_IP = 4;
const EVENTS = 20;
const FAN_OUT_WAIT_MS = 60_000;

let dir: string;
let stack: LocalStack;
let daemon: DaemonProcess;
let gatekeeperPort: number;
let browser: Browser | undefined;
let overlay: Record<string, unknown> & { id: string };
let viewerUrl = '';
let viewers: Viewer[] = [];
const extra: Viewer[] = [];
const publisherLog: string[] = [];
/** How many publisher sockets the Gatekeeper accepted for the overlay. */
const publisherUpgrades = () =>
  publisherLog.filter((l) => l.includes(`GET /relay/publish/${overlay.id} 101`)).length;

interface RelayEntry {
  overlayId: string;
  state: string;
  viewers: number;
  viewerUrl?: string;
  detail?: string;
}

async function relayEntry(): Promise<RelayEntry | undefined> {
  const status = (await (await daemon.api('/status')).json()) as { relay?: RelayEntry[] };
  return status.relay?.find((r) => r.overlayId === overlay.id);
}

async function postEvent(event: unknown): Promise<void> {
  const res = await daemon.api('/api/events', { method: 'POST', body: JSON.stringify(event) });
  expect(res.status).toBe(202);
}

const chat = (comment: string) => ({
  type: 'chat',
  user: { uniqueId: 'relay-chatter', nickname: 'Relay Chatter' },
  data: { comment },
});

/** The stream events of the test (by their mark) a viewer got, in the order it got them. */
const marks = (v: Viewer, prefix: string) =>
  v.messages.filter((m) => m.type === 'stream-event' && m.mark?.startsWith(prefix));

function viewerOptions(ip: string, resumeFrom?: number) {
  return {
    url: `${viewerUrl.replace(/^http/, 'ws')}/ws`,
    origin: stack.gatekeeperUrl,
    overlayId: overlay.id,
    ip,
    ...(resumeFrom !== undefined ? { resumeFrom } : {}),
  };
}

/** The daemon's open connections to the Gatekeeper, once its short-lived HTTP ones (licence checks) are gone. */
const settledConnections = (expected: number) =>
  until(
    () => (tcpConnectionsTo(daemon.pid, gatekeeperPort) === expected ? expected : undefined),
    `the daemon to hold ${expected} connection(s) to the Gatekeeper`,
    STACK_WAIT_MS,
  ).catch(() => tcpConnectionsTo(daemon.pid, gatekeeperPort));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'e2e-relay-'));
  // The Gatekeeper's own log of the publisher upgrades it answered (one line per request).
  stack = await startLocalStack({
    stateDir: join(dir, 'wrangler'),
    log: (line) => {
      if (line.includes('/relay/publish/')) publisherLog.push(line);
    },
  });
  gatekeeperPort = Number(new URL(stack.gatekeeperUrl).port);
  const dataDir = join(dir, 'data');
  daemon = await startDaemonProcess(dataDir, stack.gatekeeperUrl);
  const record = await signIn(stack.gatekeeperUrl, stack.patreon.url, join(dataDir, 'license.json'));
  expect(record.tier).toBe('premium');
  // The running daemon notices the licence and validates it.
  await until(
    async () => {
      const { licence } = (await (await daemon.api('/status')).json()) as {
        licence: { tier: string; state: string };
      };
      return licence.tier === 'premium' && licence.state === 'valid' ? true : undefined;
    },
    'the daemon to hold a valid Premium licence',
    STACK_WAIT_MS,
  );
  const list = (await (await daemon.api('/api/overlays')).json()) as (typeof overlay)[];
  overlay = list[0] as typeof overlay;
});

afterAll(async () => {
  for (const v of [...viewers, ...extra]) v.ws.terminate();
  await browser?.close();
  await daemon?.stop();
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the overlay relay end to end', () => {
  it(`publishes a public overlay once: ${VIEWERS} viewers get every event exactly once and in order, over one daemon socket`, async () => {
    const { id, ...body } = overlay;
    const put = await daemon.api(`/api/overlays/${id}`, {
      method: 'PUT',
      body: JSON.stringify({ ...body, public: true }),
    });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { public: boolean }).public).toBe(true);

    const connected = await until(
      async () => {
        const entry = await relayEntry();
        return entry?.state === 'connected' && entry.viewerUrl ? entry : undefined;
      },
      'the relay entry to be connected',
      STACK_WAIT_MS,
    );
    viewerUrl = connected.viewerUrl ?? '';
    expect(viewerUrl).toMatch(
      new RegExp(`^${stack.gatekeeperUrl.replace(/\./g, '\\.')}/v/o-[a-z2-7]{16}/${overlay.id}$`),
    );
    expect(await settledConnections(1)).toBe(1);
    await until(
      () => (publisherUpgrades() > 0 ? true : undefined),
      'the Gatekeeper to log the publisher',
      STACK_WAIT_MS,
    );

    const started = Date.now();
    viewers = await openViewers(VIEWERS, 50, (i) => viewerOptions(viewerIp(i, PER_IP)));
    const connectMs = Date.now() - started;
    expect(viewers).toHaveLength(VIEWERS);
    // The daemon learns the count (at most every 5 s), over the same one socket.
    await until(
      async () => ((await relayEntry())?.viewers === VIEWERS ? true : undefined),
      `the daemon to see ${VIEWERS} viewers`,
      STACK_WAIT_MS,
    );

    const sent = Date.now();
    for (let i = 0; i < EVENTS; i++) await postEvent(chat(`relay-e2e-${i}`));
    await until(
      () => (viewers.every((v) => marks(v, 'relay-e2e-').length >= EVENTS) ? true : undefined),
      `every viewer to get ${EVENTS} events`,
      FAN_OUT_WAIT_MS,
    ).catch((err: Error) => {
      const short = viewers.filter((v) => marks(v, 'relay-e2e-').length < EVENTS).length;
      throw new Error(`${err.message}: ${short} of ${VIEWERS} viewers are missing some`);
    });
    const fanOutMs = Date.now() - sent;

    const expected = Array.from({ length: EVENTS }, (_, i) => `relay-e2e-${i}`);
    for (const v of viewers) {
      const got = marks(v, 'relay-e2e-');
      expect(got.map((m) => m.mark)).toEqual(expected);
      expect(got.every((m) => m.replayed === undefined)).toBe(true);
      // Every numbered message a viewer got came in seq order, none twice.
      const seqs = v.messages.flatMap((m) => (m.seq === undefined ? [] : [m.seq]));
      expect(seqs.every((s, k) => k === 0 || s > (seqs[k - 1] ?? -1))).toBe(true);
    }
    expect((await relayEntry())?.state).toBe('connected');
    expect(await settledConnections(1)).toBe(1);
    // The Gatekeeper side agrees: one publisher socket for the overlay, never a second one.
    expect(publisherUpgrades()).toBe(1);
    console.log(
      `relay e2e: ${VIEWERS} viewers connected in ${connectMs} ms; ${EVENTS} events reached all in ${fanOutMs} ms`,
    );
  }, 240_000);

  it('a viewer that reconnects with resumeFrom gets what it missed marked replayed, then resumed without a gap', async () => {
    expect(viewerUrl, 'the overlay was published').not.toBe('');
    const first = await openViewer(viewerOptions('127.2.0.1'));
    extra.push(first);
    await postEvent(chat('resume-before'));
    const seen = await until(
      () => marks(first, 'resume-before').at(0),
      'the viewer to get the event',
      STACK_WAIT_MS,
    );
    expect(seen.seq).toBeTypeOf('number');
    first.ws.close(1000);
    await until(() => first.closeCode, 'the viewer to close', STACK_WAIT_MS);

    for (let i = 0; i < 3; i++) await postEvent(chat(`resume-missed-${i}`));
    // The relay has them once a viewer that stayed got them.
    const witness = viewers[0] ?? first;
    await until(
      () => (marks(witness, 'resume-missed-').length === 3 ? true : undefined),
      'the relay to have the missed events',
      FAN_OUT_WAIT_MS,
    );

    const again = await openViewer(viewerOptions('127.2.0.1', seen.seq));
    extra.push(again);
    const resumed = await until(
      () => again.messages.find((m) => m.type === 'resumed'),
      'resumed',
      STACK_WAIT_MS,
    );
    expect(resumed).toMatchObject({ gap: false, from: seen.seq });
    const upToResumed = again.messages.slice(0, again.messages.indexOf(resumed));
    expect(upToResumed[0]?.type).toBe('init');
    const replayed = upToResumed.slice(1);
    expect(replayed.every((m) => m.replayed === true)).toBe(true);
    expect(replayed.filter((m) => m.type === 'stream-event').map((m) => m.mark)).toEqual([
      'resume-missed-0',
      'resume-missed-1',
      'resume-missed-2',
    ]);
    expect(resumed.count).toBe(replayed.length);

    // Then live again.
    await postEvent(chat('resume-live'));
    const live = await until(() => marks(again, 'resume-live').at(0), 'a live event', STACK_WAIT_MS);
    expect(live.replayed).toBeUndefined();
  }, 90_000);

  it('Chromium opens the viewer page from the Gatekeeper and shows the alert of a gift sent to the daemon', async () => {
    expect(viewerUrl, 'the overlay was published').not.toBe('');
    browser = await launchChromium();
    const page = await browser.newPage();
    const frames: string[] = [];
    let socketUrl = '';
    page.on('websocket', (ws) => {
      socketUrl = ws.url();
      ws.on('framereceived', (frame) => frames.push(String(frame.payload)));
    });
    const response = await page.goto(viewerUrl);
    expect(response?.status(), await response?.text()).toBe(200);
    await until(
      () => (frames.some((f) => f.includes('"type":"init"')) ? true : undefined),
      'the page to get init through the relay',
      STACK_WAIT_MS,
    );
    expect(socketUrl).toBe(`${viewerUrl.replace(/^http/, 'ws')}/ws`);

    await postEvent({
      type: 'gift',
      user: { uniqueId: 'relay-fan', nickname: 'Relay Fan' },
      data: { giftName: 'Rose', repeatCount: 1 },
    });
    const alert = page.locator('[data-alert]');
    await expect
      .poll(async () => ((await alert.count()) > 0 ? ((await alert.first().textContent()) ?? '') : ''), {
        timeout: STACK_WAIT_MS,
      })
      .toContain('Relay Fan');
    await page.close();
  }, 90_000);

  it('turning public off closes every viewer with 4403 and the page answers 404', async () => {
    expect(viewerUrl, 'the overlay was published').not.toBe('');
    const open = viewers.filter((v) => v.closeCode === undefined);
    expect(open.length).toBe(VIEWERS);
    const { id, public: _public, ...body } = overlay;
    const put = await daemon.api(`/api/overlays/${id}`, { method: 'PUT', body: JSON.stringify(body) });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { public: boolean }).public).toBe(false);

    await until(
      () => (open.every((v) => v.closeCode !== undefined) ? true : undefined),
      'every viewer to be closed',
      FAN_OUT_WAIT_MS,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${open.filter((v) => v.closeCode === undefined).length} still open`);
    });
    const codes = new Set(open.map((v) => v.closeCode));
    expect([...codes]).toEqual([4403]);

    const page = await fetch(viewerUrl);
    expect(page.status).toBe(404);
    expect(((await page.json()) as { error: { code: string } }).error.code).toBe('not_found');
    // Nothing is published any more: no relay entry, no socket to the Gatekeeper.
    expect([undefined, 'off']).toContain((await relayEntry())?.state);
    expect(await settledConnections(0)).toBe(0);
  }, 90_000);
});
