// The daemon's publisher of public overlays, against a fake relay hub: the real daemon on port 0, a Premium
// licence in its data directory, the publishers' clock a fake one (reconnects and pacing move only when told).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../daemon/src/cli/main.js';
import { describeDaemonStatus } from '../../daemon/src/cli/status-text.js';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import { decodeJwtPayload } from '../../daemon/src/licence/jwt-payload.js';
import { type LicenceRecord, writeLicence } from '../../daemon/src/licence/licence-file.js';
import { LicenceManager } from '../../daemon/src/licence/licence-manager.js';
import { PUBLISHER_QUEUE_MAX, PUBLISHER_RATE } from '../../daemon/src/relay/publisher.js';
import type { TimerHandle } from '../../daemon/src/timers.js';
import type { DaemonStatus, Overlay, ServerMessage } from '../../shared/protocol/index.js';
import type { RelayStatus } from '../../shared/protocol/relay.js';
import { api, makeDataDir, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';
import { FakeTimers } from '../support/fake-timers.js';
import { startFakeGatekeeper } from '../support/fakes/gatekeeper.js';
import { type FakeRelayHub, startFakeRelayHub } from '../support/fakes/relay-hub.js';
import { licenceSigner, trustSigner } from '../support/licence-signer.js';

const ISSUER = 'http://gatekeeper.invalid';
const signer = licenceSigner();

let relayHub: FakeRelayHub;
let daemon: TestDaemon;
let licence: LicenceManager;
let timers: FakeTimers;
let dataDir: string;

function record(tier: 'free' | 'premium'): LicenceRecord {
  return {
    token: signer.sign({ sub: 'member-1', tier, iss: ISSUER }),
    tier,
    validated_at: new Date().toISOString(),
    user_id: 'member-1',
    verdict: 'ok',
  };
}

async function setLicence(tier: 'free' | 'premium' | 'none'): Promise<void> {
  const file = join(dataDir, 'license.json');
  if (tier === 'none') await rm(file, { force: true });
  else await writeLicence(file, record(tier));
}

async function start(tier: 'free' | 'premium' | 'none' = 'premium'): Promise<void> {
  await setLicence(tier);
  licence = new LicenceManager({ dataDir, issuer: ISSUER, log: () => {} });
  await licence.load();
  daemon = await startTestDaemon({
    dataDir,
    limits: licence,
    relay: { licence, gatekeeperUrl: relayHub.url, timers, random: () => 0.5 },
  });
}

beforeEach(async () => {
  relayHub = await startFakeRelayHub();
  timers = new FakeTimers();
  dataDir = await makeDataDir();
  await trustSigner(dataDir, signer);
  await writeFile(join(dataDir, 'rules.json'), '[]\n');
});
afterEach(async () => {
  await daemon?.stop();
  await relayHub.close();
  await rm(dataDir, { recursive: true, force: true });
  // Every frame the daemon sent is one the relay's schema takes.
  expect(relayHub.connections.flatMap((c) => c.frames).filter((f) => f.type === 'invalid')).toEqual([]);
});

async function createOverlay(body: Record<string, unknown> = {}): Promise<Overlay> {
  const res = await api(daemon, 'POST', '/api/overlays', { name: 'Stage', width: 800, height: 600, ...body });
  expect(res.status).toBe(201);
  return (await res.json()) as Overlay;
}

async function putOverlay(overlay: Overlay, changes: Record<string, unknown>): Promise<Response> {
  const { id: _id, ...rest } = overlay;
  return api(daemon, 'PUT', `/api/overlays/${overlay.id}`, { ...rest, ...changes });
}

async function relayStatus(): Promise<RelayStatus[]> {
  const body = (await (await api(daemon, 'GET', '/status')).json()) as { relay?: RelayStatus[] };
  return body.relay ?? [];
}

async function entry(overlayId: string): Promise<RelayStatus | undefined> {
  return (await relayStatus()).find((e) => e.overlayId === overlayId);
}

const follow = (n: number) => ({
  type: 'follow',
  user: { uniqueId: `fan${n}`, nickname: `Fan ${n}` },
  data: {},
});

async function postEvent(n: number): Promise<void> {
  expect((await api(daemon, 'POST', '/api/events', follow(n))).status).toBe(202);
}

/** The `msg` of every `message` frame of a connection, in order. */
function messagesOf(frames: FakeRelayHub['connections'][number]['frames']): ServerMessage[] {
  return frames.flatMap((f) => (f.type === 'message' ? [f.msg as ServerMessage] : []));
}

describe('public on overlays', () => {
  it('Free: making an overlay public is refused with 403 premium_required and nothing changes', async () => {
    await start('free');
    const refused = await api(daemon, 'POST', '/api/overlays', {
      name: 'P',
      width: 10,
      height: 10,
      public: true,
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('premium_required');
    const before = daemon.overlays.list().length;
    const overlay = await createOverlay();
    expect(overlay.public).toBe(false);
    expect(daemon.overlays.list()).toHaveLength(before + 1);
    const put = await putOverlay(overlay, { name: 'Renamed', public: true });
    expect(put.status).toBe(403);
    expect(((await put.json()) as { error: { code: string } }).error.code).toBe('premium_required');
    const got = (await (await api(daemon, 'GET', `/api/overlays/${overlay.id}`)).json()) as Overlay;
    expect(got).toMatchObject({ name: 'Stage', public: false });
    expect(relayHub.connections).toHaveLength(0);
  });

  it('without a licence nothing may become public; a public overlay written by hand shows off, unpublished', async () => {
    const id = '0b9f5a4e-8f0c-4d47-9a51-3c1b2d4e5f60';
    await mkdir(join(dataDir, 'overlays'), { recursive: true });
    await writeFile(
      join(dataDir, 'overlays', `${id}.json`),
      JSON.stringify({ id, name: 'By hand', width: 10, height: 10, widgets: [], public: true }),
    );
    daemon = await startTestDaemon({ dataDir });
    const refused = await api(daemon, 'POST', '/api/overlays', {
      name: 'P',
      width: 10,
      height: 10,
      public: true,
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('premium_required');
    expect(await relayStatus()).toEqual([
      { overlayId: id, state: 'off', viewers: 0, detail: 'this daemon runs without a licence' },
    ]);
    expect(relayHub.connections).toHaveLength(0);
  });

  it('GET always shows public; a PUT without it makes the overlay private (and unpublishes it)', async () => {
    await start();
    const overlay = await createOverlay({ public: true });
    expect(overlay.public).toBe(true);
    const connection = await relayHub.published(overlay.id);
    const { public: _p, id: _id, ...withoutPublic } = overlay;
    const put = await api(daemon, 'PUT', `/api/overlays/${overlay.id}`, withoutPublic);
    expect(put.status).toBe(200);
    expect(((await put.json()) as Overlay).public).toBe(false);
    const got = (await (await api(daemon, 'GET', `/api/overlays/${overlay.id}`)).json()) as Overlay;
    expect(got.public).toBe(false);
    await connection.closed;
    expect(connection.frames.at(-1)).toEqual({ type: 'unpublish' });
    expect(await relayStatus()).toEqual([]); // no public overlay: no relay part
  });
});

describe('publishing', () => {
  it('one socket per public overlay whatever the number of pages; snapshot first, then every page message once, in order, as pages get them', async () => {
    await start();
    const stage = await createOverlay({ public: true, name: 'Public one' });
    const other = await createOverlay({ public: true, name: 'Public two' });
    const hidden = await createOverlay({ name: 'Private' });
    const connection = await relayHub.published(stage.id);
    await relayHub.published(other.id);
    const pages = await Promise.all([1, 2, 3, 4, 5].map(() => subscribe(daemon, stage.id)));
    const [page] = pages;
    expect(connection.frames[0]).toEqual({
      type: 'snapshot',
      init: { type: 'init', overlay: { name: 'Public one', width: 800, height: 600 }, widgets: [] },
    });

    for (let n = 0; n < 5; n++) await postEvent(n);
    const command = { command: 'set-text', widgetId: 'w', payload: { text: 'hello' } };
    expect((await api(daemon, 'POST', `/api/overlays/${stage.id}/commands`, command)).status).toBe(202);
    expect((await putOverlay(stage, { name: 'Renamed' })).status).toBe(200);
    await postEvent(5);
    await page!.next((m) => m.type === 'stream-event' && m.event.user.uniqueId === 'fan5');

    await waitFor(() => messagesOf(connection.frames).length === page!.received.length - 1);
    // Exactly what a page of the overlay got after its init, in the same order, each once.
    expect(messagesOf(connection.frames)).toEqual(page!.received.slice(1));
    expect(messagesOf(connection.frames).map((m) => m.type)).toEqual([
      ...Array(5).fill('stream-event'),
      'overlay-command',
      'overlay-update',
      'stream-event',
    ]);
    // The other public overlay gets the events but not this overlay's command or update.
    await waitFor(() => messagesOf(relayHub.latest(other.id)!.frames).length === 6);
    expect(messagesOf(relayHub.latest(other.id)!.frames).every((m) => m.type === 'stream-event')).toBe(true);
    expect(relayHub.connections.map((c) => c.overlayId).sort()).toEqual([stage.id, other.id].sort());
    expect(relayHub.connections.some((c) => c.overlayId === hidden.id)).toBe(false);
    expect(connection.authorization).toBe(`Bearer ${licence.record()?.token}`);
    for (const p of pages) p.close();
  });

  it('/status has one relay entry per public overlay, with its state, viewer URL and viewers', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    await createOverlay();
    await relayHub.published(stage.id);
    relayHub.sendViewers(stage.id, 3);
    await waitFor(async () => (await entry(stage.id))?.viewers === 3);
    expect(await relayStatus()).toEqual([
      {
        overlayId: stage.id,
        state: 'connected',
        viewers: 3,
        viewerUrl: `${relayHub.url}/v/o-fake/${stage.id}`,
      },
    ]);
    relayHub.sendViewers(stage.id, 1200);
    await waitFor(async () => (await entry(stage.id))?.viewers === 1200);
    // `overlay-daemon status` says it in words.
    const body = (await (await api(daemon, 'GET', '/status')).json()) as DaemonStatus;
    expect(describeDaemonStatus(body, daemon.url)).toContain(
      `  public:        ${relayHub.url}/v/o-fake/${stage.id} published, 1200 viewers`,
    );
  });

  it('after hello.lastSeq the relay gets every journaled message it missed, marked replayed, then live ones, none twice', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const first = await relayHub.published(stage.id);
    for (let n = 0; n < 3; n++) await postEvent(n);
    await waitFor(() => messagesOf(first.frames).length === 3);
    const seqs = messagesOf(first.frames).map((m) => (m.type === 'stream-event' ? m.seq : undefined));
    // The relay kept only the first one (say it lost the rest), and the publisher is cut off.
    relayHub.lastSeq.set(stage.id, seqs[0]!);
    await relayHub.closeWith(stage.id, 1011, 'restart');
    await waitFor(async () => (await entry(stage.id))?.state === 'backoff');
    // While cut off, one more event happens.
    await postEvent(3);
    timers.advance(1000);
    await waitFor(() => relayHub.open(stage.id).length === 1);
    const second = await relayHub.published(stage.id);
    await waitFor(() => messagesOf(second.frames).length === 3);
    await postEvent(4);
    await waitFor(() => messagesOf(second.frames).length === 4);
    expect(second.frames[0]?.type).toBe('snapshot');
    const caughtUp = messagesOf(second.frames);
    expect(caughtUp.map((m) => (m.type === 'stream-event' ? m.event.user.uniqueId : m.type))).toEqual([
      'fan1',
      'fan2',
      'fan3',
      'fan4',
    ]);
    expect(caughtUp.slice(0, 3).every((m) => m.type === 'stream-event' && m.replayed === true)).toBe(true);
    expect(caughtUp[3]).not.toHaveProperty('replayed');
  });

  it('a first publish (lastSeq null) starts from the snapshot, without older messages', async () => {
    await start();
    const stage = await createOverlay();
    for (let n = 0; n < 3; n++) await postEvent(n);
    expect((await putOverlay(stage, { public: true })).status).toBe(200);
    const connection = await relayHub.published(stage.id);
    await postEvent(9);
    await waitFor(() => messagesOf(connection.frames).length === 1);
    expect(connection.frames.map((f) => f.type)).toEqual(['snapshot', 'message']);
  });
});

describe('one socket per public overlay, whatever happens', () => {
  it('edits, licence checks and time passing keep the one socket it has', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const connection = await relayHub.published(stage.id);
    let current = stage;
    for (let n = 0; n < 5; n++) {
      const res = await putOverlay(current, { name: `Edit ${n}`, public: true });
      expect(res.status).toBe(200);
      current = (await res.json()) as Overlay;
      await licence.refresh();
      timers.advance(30_000);
    }
    await waitFor(() => messagesOf(connection.frames).length === 5);
    expect(relayHub.connections).toHaveLength(1);
    expect(connection.open).toBe(true);
    expect(connection.frames.filter((f) => f.type === 'snapshot')).toHaveLength(1);
  });

  it('a sign-in as another member publishes with that licence instead', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const first = await relayHub.published(stage.id);
    const other = {
      ...record('premium'),
      token: signer.sign({ sub: 'member-2', tier: 'premium', iss: ISSUER }),
      user_id: 'member-2',
    };
    await writeLicence(join(dataDir, 'license.json'), other);
    await licence.refresh();
    timers.advance(5000);
    await first.closed;
    const second = await relayHub.published(stage.id);
    expect(second.authorization).toBe(`Bearer ${other.token}`);
    expect(relayHub.open(stage.id)).toHaveLength(1);
  });
});

describe('reconnecting', () => {
  it('reconnects with backoff doubling from 1 s, and from 1 s again once connected for a while', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    await relayHub.published(stage.id);
    relayHub.accept = () => false;
    await relayHub.closeWith(stage.id, 1011);
    await waitFor(async () => (await entry(stage.id))?.state === 'backoff');
    // 1 s, 2 s, 4 s (the jitter is at its middle here): no attempt before its time, one at it.
    for (const wait of [1000, 2000, 4000]) {
      const refused = relayHub.refused.length;
      timers.advance(wait - 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(relayHub.refused.length).toBe(refused);
      timers.advance(1);
      await waitFor(() => relayHub.refused.length === refused + 1);
      await waitFor(async () => (await entry(stage.id))?.state === 'backoff');
    }
    expect((await entry(stage.id))?.detail).toContain('403');
    relayHub.accept = () => true;
    timers.advance(8000);
    await waitFor(() => relayHub.open(stage.id).length === 1);
    await waitFor(async () => (await entry(stage.id))?.state === 'connected');
    // A connection that held for a minute: the next failure waits 1 s again.
    timers.advance(60_000);
    await relayHub.closeWith(stage.id, 1011);
    await waitFor(async () => (await entry(stage.id))?.state === 'backoff');
    timers.advance(1000);
    await relayHub.published(stage.id);
    expect(relayHub.connections.filter((c) => c.overlayId === stage.id)).toHaveLength(3);
  });

  it('a relay that never says hello is left after 15 s and tried again', async () => {
    await start();
    relayHub.sendHello = false;
    const stage = await createOverlay({ public: true });
    await waitFor(() => relayHub.open(stage.id).length === 1);
    expect((await entry(stage.id))?.state).toBe('connecting');
    relayHub.sendHello = true;
    timers.advance(15_000);
    await waitFor(async () => (await entry(stage.id))?.state === 'backoff');
    timers.advance(1000);
    await relayHub.published(stage.id);
    expect(relayHub.connections).toHaveLength(2);
  });

  it('4409 (another daemon publishes it): state error, since when and from where, no reconnect until public changes', async () => {
    // The publishers' clock reads an evening in 2026 (moved before anything waits on it).
    timers.advance(Date.parse('2026-12-01T20:15:00.000Z'));
    await start();
    const stage = await createOverlay({ public: true });
    await relayHub.published(stage.id);
    await relayHub.closeWith(stage.id, 4409, 'another daemon publishes this overlay (from 198.51.100.7)');
    await waitFor(async () => (await entry(stage.id))?.state === 'error');
    expect(await entry(stage.id)).toEqual({
      overlayId: stage.id,
      state: 'error',
      viewers: 0,
      detail: expect.stringMatching(
        new RegExp(
          `^another daemon publishes this overlay from 198\\.51\\.100\\.7 since .+: take it back .*overlay-daemon relay take-back ${stage.id}$`,
        ),
      ),
      takenOverAt: '2026-12-01T20:15:00.000Z',
      takenOverFrom: '198.51.100.7',
    });
    // `overlay-daemon status` says it in words.
    const body = (await (await api(daemon, 'GET', '/status')).json()) as DaemonStatus;
    expect(describeDaemonStatus(body, daemon.url)).toMatch(
      /another daemon publishes this overlay from 198\.51\.100\.7 since/,
    );
    timers.advance(10 * 60_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(relayHub.connections).toHaveLength(1);
    expect((await putOverlay(stage, { public: false })).status).toBe(200);
    expect((await putOverlay(stage, { public: true })).status).toBe(200);
    await waitFor(() => relayHub.open(stage.id).length === 1);
    // It was not publishing: nothing told the relay to stop on the other daemon's behalf.
    expect(relayHub.connections[0]?.frames.some((f) => f.type === 'unpublish')).toBe(false);
  });

  it('the streamer takes a taken-over overlay back: POST /api/relay/:id/take-back publishes it from here again', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    await relayHub.published(stage.id);
    await relayHub.closeWith(stage.id, 4409, 'another daemon publishes this overlay (from 198.51.100.7)');
    await waitFor(async () => (await entry(stage.id))?.state === 'error');

    const taken = await api(daemon, 'POST', `/api/relay/${stage.id}/take-back`);
    expect(taken.status).toBe(200);
    expect(await taken.json()).toMatchObject({ overlayId: stage.id, state: 'connecting' });
    const again = await relayHub.published(stage.id);
    expect(again.frames.some((f) => f.type === 'snapshot')).toBe(true);
    await waitFor(async () => (await entry(stage.id))?.state === 'connected');
    expect(await entry(stage.id)).not.toHaveProperty('takenOverAt');
    // Published from here already: nothing to take back, nothing opened.
    const idle = await api(daemon, 'POST', `/api/relay/${stage.id}/take-back`);
    expect(idle.status).toBe(200);
    expect(await idle.json()).toMatchObject({ state: 'connected' });
    expect(relayHub.connections).toHaveLength(2);
  });

  it('take-back: 404 for no such overlay, 409 with words for one that is not public', async () => {
    await start();
    const stage = await createOverlay();
    const refusal = async (path: string) => {
      const res = await api(daemon, 'POST', path);
      return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
    };
    expect(await refusal('/api/relay/0b7c2f4e-1111-4222-8333-944455556666/take-back')).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect(await refusal('/api/relay/x/take-back')).toEqual({ status: 404, code: 'not_found' });
    expect(await refusal(`/api/relay/${stage.id}/take-back`)).toEqual({ status: 409, code: 'conflict' });
    expect(relayHub.connections).toHaveLength(0);
  });

  it('overlay-daemon relay take-back ID does the same from the command line', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    await relayHub.published(stage.id);
    await relayHub.closeWith(stage.id, 4409, 'another daemon publishes this overlay (from 198.51.100.7)');
    await waitFor(async () => (await entry(stage.id))?.state === 'error');
    const io = {
      output: '',
      errors: '',
      out: (t: string) => {
        io.output += t;
      },
      err: (t: string) => {
        io.errors += t;
      },
      stopSignal: () => new Promise<string>(() => {}),
    };
    expect(await main(['relay', 'take-back', stage.id, '--data-dir', dataDir], io)).toBe(0);
    expect(io.output).toContain(`Overlay ${stage.id}`);
    await relayHub.published(stage.id);
    await waitFor(async () => (await entry(stage.id))?.state === 'connected');
    expect(await main(['relay', 'take-back', '--data-dir', dataDir], io)).toBe(2);
  });

  it('4401 (licence expired): reconnects at once with the refreshed licence', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const first = await relayHub.published(stage.id);
    const fresh = record('premium');
    await writeLicence(join(dataDir, 'license.json'), fresh);
    await relayHub.closeWith(stage.id, 4401, 'licence expired');
    // No clock moved: the reconnect does not wait for a backoff.
    const second = await relayHub.published(stage.id);
    expect(second).not.toBe(first);
    expect(second.authorization).toBe(`Bearer ${fresh.token}`);
  });

  it('1008 from the relay: one log line, then backoff', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    await relayHub.published(stage.id);
    await relayHub.closeWith(stage.id, 1008, 'more than 200 frames per second');
    await waitFor(async () => (await entry(stage.id))?.state === 'backoff');
    expect(daemon.logs.filter((l) => l.includes('1008'))).toHaveLength(1);
    timers.advance(1000);
    await relayHub.published(stage.id);
  });
});

describe('a licence of 30 seconds (LICENCE_TTL_SECONDS = 30)', () => {
  it('stays published across several expiries: each 4401 reconnects at once with a newer licence, the licence never lapsing', async () => {
    const gatekeeper = await startFakeGatekeeper({ userId: 'member-1' });
    try {
      // One clock for the Gatekeeper's signatures, the licence's schedule and the publishers, read about now.
      timers.advance(Date.now());
      gatekeeper.now = () => timers.now();
      gatekeeper.licenceTtlSeconds = 30;
      await writeLicence(join(dataDir, 'license.json'), {
        ...record('premium'),
        token: gatekeeper.issueToken('member-1', 'premium'),
      });
      licence = new LicenceManager({
        dataDir,
        client: new GatekeeperClient(gatekeeper.url),
        now: () => timers.now(),
        timers: {
          setTimeout: (fn, ms) => timers.setTimeout(fn, ms),
          clearTimeout: (handle) => timers.clearTimeout(handle as TimerHandle),
        },
        random: () => 0.5,
        log: () => {},
      });
      await licence.start();
      daemon = await startTestDaemon({
        dataDir,
        limits: licence,
        relay: { licence, gatekeeperUrl: relayHub.url, timers, random: () => 0.5 },
      });
      const validations = () => gatekeeper.requests.filter((r) => r.path === '/validate').length;
      const bearer = (c: { authorization: string | undefined }) => c.authorization?.slice('Bearer '.length);
      const expOf = (token: string | undefined) => (decodeJwtPayload(token ?? '')?.exp ?? 0) * 1000;
      /** Time passes a second at a time, each licence check that falls due finished before the next step. */
      const walk = async (ms: number) => {
        for (let left = ms; left > 0; left -= 1000) {
          timers.advance(Math.min(1000, left));
          await licence.settled();
        }
      };

      const stage = await createOverlay({ public: true });
      let connection = await relayHub.published(stage.id);

      // The relay's clock ahead of ours: it closes the socket at the exp of the licence still held. A fresh one
      // is asked for now, and the socket opens again with it at once (no clock moves meanwhile).
      await walk(10_000);
      const first = bearer(connection);
      let asked = validations();
      await relayHub.closeWith(stage.id, 4401, 'the licence expired');
      connection = await relayHub.published(stage.id);
      expect(validations()).toBe(asked + 1);
      expect(bearer(connection)).not.toBe(first);
      expect(bearer(connection)).toBe(licence.record()?.token);

      // Then, three times: time runs to the exp of the licence the socket has. The daemon renewed it before,
      // so at the relay's 4401 it opens again at once with the newer one, asking the Gatekeeper nothing more.
      for (let n = 0; n < 3; n++) {
        const used = bearer(connection);
        await walk(expOf(used) - timers.now());
        expect(licence.status()).toMatchObject({ tier: 'premium', state: 'valid' });
        expect(expOf(licence.record()?.token)).toBeGreaterThan(timers.now() + 10_000);
        expect((await entry(stage.id))?.state).toBe('connected');
        asked = validations();
        await relayHub.closeWith(stage.id, 4401, 'the licence expired');
        connection = await relayHub.published(stage.id);
        expect(bearer(connection)).toBe(licence.record()?.token);
        expect(bearer(connection)).not.toBe(used);
        expect(validations()).toBe(asked);
      }
      expect(relayHub.refused).toEqual([]);
      expect(relayHub.open(stage.id)).toHaveLength(1);
      expect(relayHub.frames(stage.id).some((f) => f.type === 'unpublish')).toBe(false);
    } finally {
      await licence.close();
      await gatekeeper.close();
    }
  });
});

describe('unpublishing and the licence', () => {
  it('a deleted public overlay is unpublished', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const connection = await relayHub.published(stage.id);
    expect((await api(daemon, 'DELETE', `/api/overlays/${stage.id}`)).status).toBe(204);
    await connection.closed;
    expect(connection.frames.at(-1)).toEqual({ type: 'unpublish' });
  });

  it('made private while cut off from the relay: a socket of its own says unpublish', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    await relayHub.published(stage.id);
    await relayHub.closeWith(stage.id, 1011);
    await waitFor(async () => (await entry(stage.id))?.state === 'backoff');
    expect((await putOverlay(stage, { public: false })).status).toBe(200);
    await waitFor(() => relayHub.connections.length === 2);
    const last = relayHub.latest(stage.id)!;
    await last.closed;
    expect(last.frames).toEqual([{ type: 'unpublish' }]);
    timers.advance(120_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(relayHub.connections).toHaveLength(2);
  });

  it('signing out unpublishes every public overlay', async () => {
    await start();
    const [a, b] = [await createOverlay({ public: true }), await createOverlay({ public: true })];
    const connections = await Promise.all([relayHub.published(a.id), relayHub.published(b.id)]);
    await setLicence('none');
    await licence.refresh();
    for (const c of connections) {
      await c.closed;
      expect(c.frames.at(-1)).toEqual({ type: 'unpublish' });
    }
    const entries = await relayStatus();
    expect(entries.map((e) => e.state)).toEqual(['off', 'off']);
    expect(entries[0]?.detail).toMatch(/Premium/);
    const body = (await (await api(daemon, 'GET', '/status')).json()) as DaemonStatus;
    expect(describeDaemonStatus(body, daemon.url)).toContain(
      `  public:        overlay ${a.id} not published (public overlays need Premium`,
    );
  });

  it('a lapse closes every publisher (without unpublishing) and they come back with Premium', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const connection = await relayHub.published(stage.id);
    await setLicence('free');
    await licence.refresh();
    await connection.closed;
    expect(connection.frames.some((f) => f.type === 'unpublish')).toBe(false);
    expect(await entry(stage.id)).toMatchObject({ state: 'off', viewers: 0 });
    // Free now: the public overlay stays editable.
    expect((await putOverlay(stage, { name: 'Still editable', public: true })).status).toBe(200);
    timers.advance(60_000);
    expect(relayHub.open(stage.id)).toHaveLength(0);
    await setLicence('premium');
    await licence.refresh();
    await relayHub.published(stage.id);
  });
});

describe('pacing', () => {
  it('stays under the relay limit: a burst waits its turn, in order, each message once', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const connection = await relayHub.published(stage.id);
    const total = 400;
    for (let n = 0; n < total; n += 50) {
      const batch = Array.from({ length: 50 }, (_, i) => api(daemon, 'POST', '/api/events', follow(n + i)));
      await Promise.all(batch);
    }
    // Without time passing only the burst goes (the snapshot took one token of it).
    await waitFor(() => messagesOf(connection.frames).length === 99);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const first = messagesOf(connection.frames).length;
    expect(first).toBe(99);
    // One second, in steps of 10 ms: at most the rate more, a little under the relay's 200.
    for (let t = 0; t < 1000; t += 10) {
      timers.advance(10);
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const inOneSecond = messagesOf(connection.frames).length - first;
    expect(inOneSecond).toBeLessThanOrEqual(PUBLISHER_RATE);
    expect(inOneSecond).toBeGreaterThanOrEqual(PUBLISHER_RATE - 10);
    for (let t = 0; t < 2000; t += 100) {
      timers.advance(100);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await waitFor(() => messagesOf(connection.frames).length === total);
    const seqs = messagesOf(connection.frames).map((m) => (m.type === 'stream-event' ? m.seq! : 0));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(total);
  });
});

describe('media of public overlays', () => {
  it('uploads each file once by its SHA-256 and renames it in the snapshot and messages; speech is not uploaded', async () => {
    await start();
    const mediaDir = join(dataDir, 'media');
    await mkdir(join(mediaDir, 'alerts'), { recursive: true });
    const png = Buffer.from('89504e470d0a1a0a-fake-png');
    await writeFile(join(mediaDir, 'logo.png'), png);
    await writeFile(join(mediaDir, 'alerts', 'ding.mp3'), Buffer.from('fake mp3'));
    const { createHash } = await import('node:crypto');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const logo = `${sha(png)}.png`;
    const ding = `${sha(Buffer.from('fake mp3'))}.mp3`;
    const widgets = [
      { id: 'logo', type: 'image', x: 0, y: 0, src: 'logo.png' },
      { id: 'alerts', type: 'alert', x: 0, y: 0, sound: 'alerts/ding.mp3', image: 'logo.png' },
    ];
    const a = await createOverlay({ public: true, widgets });
    const b = await createOverlay({ public: true, widgets: [widgets[0]] });
    const connection = await relayHub.published(a.id);
    await relayHub.published(b.id);
    const snapshot = connection.frames[0];
    expect(snapshot?.type === 'snapshot' && snapshot.init.widgets).toEqual([
      { id: 'logo', type: 'image', x: 0, y: 0, src: logo },
      expect.objectContaining({ id: 'alerts', sound: ding, image: logo }),
    ]);
    expect(relayHub.media.get(logo)).toEqual(png);
    const command = {
      command: 'show-alert',
      widgetId: 'alerts',
      payload: { text: 'Hi', duration: 1000, image: 'logo.png' },
    };
    await api(daemon, 'POST', `/api/overlays/${a.id}/commands`, command);
    const speech = `/tts/${'a'.repeat(64)}.wav`;
    await api(daemon, 'POST', `/api/overlays/${a.id}/commands`, {
      command: 'play-sound',
      widgetId: 'alerts',
      payload: { sound: speech },
    });
    await waitFor(() => messagesOf(connection.frames).length === 2);
    const [alert, sound] = messagesOf(connection.frames);
    expect(alert).toMatchObject({ type: 'overlay-command', payload: { image: logo } });
    expect(sound).toMatchObject({ type: 'overlay-command', payload: { sound: speech } });
    // Two overlays, a snapshot and a message naming logo.png, a reconnect: uploaded once.
    await relayHub.closeWith(a.id, 1011);
    timers.advance(1000);
    await waitFor(() => relayHub.open(a.id).length === 1);
    await relayHub.published(a.id);
    expect(
      relayHub.mediaRequests
        .filter((r) => r.method === 'PUT')
        .map((r) => r.name)
        .sort(),
    ).toEqual([logo, ding].sort());
    expect(relayHub.mediaRequests.filter((r) => r.name === logo)).toEqual([
      { method: 'HEAD', name: logo },
      { method: 'PUT', name: logo },
    ]);
    // The daemon's own page still gets the names it knows.
    const page = await subscribe(daemon, a.id);
    expect(page.received[0]).toMatchObject({ widgets: [{ src: 'logo.png' }, { sound: 'alerts/ding.mp3' }] });
    page.close();
  });
});

describe('a relay that cannot keep up', () => {
  it('more messages waiting than the queue holds: dropped, one log line, and a fresh snapshot instead', async () => {
    await start();
    const stage = await createOverlay({ public: true });
    const connection = await relayHub.published(stage.id);
    // No time passes: the pace holds everything after the first burst.
    for (let n = 0; n < PUBLISHER_QUEUE_MAX + 150; n++)
      daemon.hub.broadcastEvent({
        type: 'follow',
        user: { uniqueId: `f${n}`, nickname: 'F' },
        data: {},
        platform: 'api',
      });
    expect(daemon.logs.filter((l) => l.includes('fresh snapshot'))).toHaveLength(1);
    for (let t = 0; t < 3000; t += 100) {
      timers.advance(100);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await waitFor(() => connection.frames.filter((f) => f.type === 'snapshot').length === 2);
    // The dropped ones never went; nothing came twice and the order held.
    expect(messagesOf(connection.frames).length).toBeLessThan(PUBLISHER_QUEUE_MAX);
    const seqs = messagesOf(connection.frames).map((m) => (m.type === 'stream-event' ? m.seq! : 0));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});
