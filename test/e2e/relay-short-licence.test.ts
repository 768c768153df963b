// Licences of seconds end to end: the Gatekeeper under `wrangler dev` signs every licence for 20 s
// (LICENCE_TTL_SECONDS), the real daemon publishes a public overlay, and a viewer watches it through the relay
// while the publisher's licence runs out again and again: the daemon renews each one before its end, the relay
// closes the publisher at each `exp` (4401) and the daemon is back at once, and the viewer notices nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LicenceStatus } from '../../shared/protocol/index.js';
import { type LocalStack, startLocalStack } from '../support/local-stack.js';
import { until } from '../support/wait.js';
import { type DaemonProcess, STACK_WAIT_MS, signIn, startDaemonProcess } from './harness.js';
import { openViewer, type Viewer } from './relay-viewers.js';

const TTL_SECONDS = 20;
/** Publisher sockets the Gatekeeper accepts: the first, then one after each of three expiries. */
const UPGRADES = 4;
/** Three lifetimes and some: the expiries all come within it. */
const EXPIRIES_WAIT_MS = 4 * TTL_SECONDS * 1000;

let dir: string;
let stack: LocalStack;
let daemon: DaemonProcess;
let viewer: Viewer | undefined;
let overlayId = '';
const publisherLog: string[] = [];
const publisherUpgrades = () =>
  publisherLog.filter((l) => l.includes(`GET /relay/publish/${overlayId} 101`)).length;

interface RelayEntry {
  overlayId: string;
  state: string;
  viewerUrl?: string;
}

async function status(): Promise<{ licence: LicenceStatus; relay?: RelayEntry[] }> {
  return (await (await daemon.api('/status')).json()) as { licence: LicenceStatus; relay?: RelayEntry[] };
}

async function postChat(comment: string): Promise<void> {
  const res = await daemon.api('/api/events', {
    method: 'POST',
    body: JSON.stringify({
      type: 'chat',
      user: { uniqueId: 'ttl-chatter', nickname: 'TTL' },
      data: { comment },
    }),
  });
  expect(res.status).toBe(202);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'e2e-short-licence-'));
  stack = await startLocalStack({
    stateDir: join(dir, 'wrangler'),
    vars: { LICENCE_TTL_SECONDS: String(TTL_SECONDS) },
    log: (line) => {
      if (line.includes('/relay/publish/')) publisherLog.push(line);
    },
  });
  const dataDir = join(dir, 'data');
  daemon = await startDaemonProcess(dataDir, stack.gatekeeperUrl);
  await signIn(stack.gatekeeperUrl, stack.patreon.url, join(dataDir, 'license.json'));
  await until(
    async () => {
      const { licence } = await status();
      return licence.tier === 'premium' && licence.state === 'valid' ? true : undefined;
    },
    'the daemon to hold a valid Premium licence',
    STACK_WAIT_MS,
  );
});

afterAll(async () => {
  viewer?.ws.terminate();
  await daemon?.stop();
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('licences of 20 seconds', () => {
  it('a viewer of a public overlay stays connected and gets every event across several licence expiries; the daemon’s licence never lapses', async () => {
    const [overlay] = (await (await daemon.api('/api/overlays')).json()) as ({ id: string } & Record<
      string,
      unknown
    >)[];
    if (!overlay) throw new Error('the daemon has no overlay');
    overlayId = overlay.id;
    const { id, ...body } = overlay;
    const put = await daemon.api(`/api/overlays/${id}`, {
      method: 'PUT',
      body: JSON.stringify({ ...body, public: true }),
    });
    expect(put.status).toBe(200);
    const entry = await until(
      async () => (await status()).relay?.find((r) => r.overlayId === id && r.state === 'connected'),
      'the overlay to be published',
      STACK_WAIT_MS,
    );
    viewer = await openViewer({
      url: `${(entry.viewerUrl ?? '').replace(/^http/, 'ws')}/ws`,
      origin: stack.gatekeeperUrl,
      overlayId: id,
      ip: '127.3.0.1',
    });

    // An event a second or so while the licences run out; the daemon's licence looked at each time.
    const sent: string[] = [];
    const lapses: string[] = [];
    const deadline = Date.now() + EXPIRIES_WAIT_MS;
    while (publisherUpgrades() < UPGRADES && Date.now() < deadline && viewer.closeCode === undefined) {
      const comment = `ttl-${sent.length}`;
      await postChat(comment);
      sent.push(comment);
      const { licence } = await status();
      const left = licence.valid_until === null ? 0 : Date.parse(licence.valid_until) - Date.now();
      // Renewed at about half of its 20 s: never within 2 s of its end, let alone past it.
      if (licence.state !== 'valid' || licence.tier !== 'premium' || left < 2000)
        lapses.push(`${new Date().toISOString()}: ${licence.state}, ${licence.tier}, ${left} ms left`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(lapses).toEqual([]);
    expect(viewer.closeCode).toBeUndefined();
    expect(publisherUpgrades()).toBeGreaterThanOrEqual(UPGRADES);

    // The last one reaches the viewer too, and it got every one, in order, once.
    await postChat('ttl-last');
    sent.push('ttl-last');
    await until(
      () => (viewer?.messages.some((m) => m.mark === 'ttl-last') ? true : undefined),
      'the last event at the viewer',
      STACK_WAIT_MS,
    );
    const got = viewer.messages.filter((m) => m.type === 'stream-event' && m.mark?.startsWith('ttl-'));
    expect(got.map((m) => m.mark)).toEqual(sent);
    const seqs = got.flatMap((m) => (m.seq === undefined ? [] : [m.seq]));
    expect(seqs.every((s, k) => k === 0 || s > (seqs[k - 1] ?? -1))).toBe(true);
    expect(viewer.closeCode).toBeUndefined();
    expect((await status()).relay?.find((r) => r.overlayId === id)?.state).toBe('connected');
  }, 110_000);
});
