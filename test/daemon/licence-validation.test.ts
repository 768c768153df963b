import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { type AddressInfo, createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatekeeperClient } from '../../daemon/src/licence/gatekeeper-client.js';
import { decodeJwtPayload } from '../../daemon/src/licence/jwt-payload.js';
import { type LicenceRecord, readLicence, writeLicence } from '../../daemon/src/licence/licence-file.js';
import {
  LicenceManager,
  RENEW_MIN_MS,
  type TimeoutScheduler,
  VALIDATE_INTERVAL_MS,
} from '../../daemon/src/licence/licence-manager.js';
import { DEFAULT_CONFIG } from '../../shared/config.js';
import { makeDataDir } from '../support/daemon.js';
import { type FakeGatekeeper, startFakeGatekeeper } from '../support/fakes/gatekeeper.js';
import { waitFor } from '../support/wait.js';

const HOUR = 3_600_000;

/** A clock the test moves by hand; the manager's timers fire only when the test says so. */
class FakeClock implements TimeoutScheduler {
  // Real time, so the JWTs the fake Gatekeeper issues (exp = 7 days from now) line up with this clock.
  now = Date.now();
  pending = new Map<number, { fn: () => void; at: number; ms: number }>();
  #next = 1;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.pending.set(id, { fn, at: this.now + ms, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    if (typeof handle === 'number') this.pending.delete(handle);
  }
  /** The one scheduled validation (the manager keeps exactly one). */
  only(): { fn: () => void; at: number; ms: number } {
    expect(this.pending.size).toBe(1);
    const [entry] = this.pending.values();
    return entry!;
  }
  /** Moves the clock to the timer's due time and runs it. */
  fire(entry: { fn: () => void; at: number }): void {
    for (const [id, e] of this.pending) if (e === entry) this.pending.delete(id);
    this.now = entry.at;
    entry.fn();
  }
}

let gatekeeper: FakeGatekeeper;
let dataDir: string;
let clock: FakeClock;
let manager: LicenceManager;

beforeAll(async () => {
  gatekeeper = await startFakeGatekeeper({ userId: 'patron-7' });
});
afterAll(() => gatekeeper?.close());

beforeEach(async () => {
  gatekeeper.validateMode = 'ok';
  gatekeeper.tier = 'premium';
  gatekeeper.config = structuredClone(DEFAULT_CONFIG);
  gatekeeper.licenceTtlSeconds = 7 * 86_400;
  gatekeeper.now = () => Date.now();
  dataDir = await makeDataDir();
  clock = new FakeClock();
});
afterEach(async () => {
  manager?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

function makeManager(url = gatekeeper.url): LicenceManager {
  manager = new LicenceManager({
    dataDir,
    // The licences' issuer stays the Gatekeeper's origin when a test points the client elsewhere (offline).
    issuer: gatekeeper.url,
    client: new GatekeeperClient(url, { timeoutMs: 2000 }),
    now: () => clock.now,
    timers: clock,
    random: () => 0.5,
    log: () => {},
  });
  return manager;
}

async function signIn(tier: 'premium' | 'free' = 'premium', validatedAt = clock.now): Promise<LicenceRecord> {
  const record: LicenceRecord = {
    token: gatekeeper.issueToken('patron-7', tier),
    tier,
    validated_at: new Date(validatedAt).toISOString(),
    user_id: 'patron-7',
    verdict: 'ok',
  };
  await writeLicence(join(dataDir, 'license.json'), record);
  return record;
}

describe('licence validation schedule', () => {
  it('validates on start with the stored token as Bearer, stores the fresh token, and reports premium', async () => {
    const original = await signIn();
    const status = await makeManager().start();
    expect(status).toEqual({
      tier: 'premium',
      state: 'valid',
      last_validated_at: new Date(clock.now).toISOString(),
      valid_until: new Date(clock.now + 72 * HOUR).toISOString(),
    });
    const validate = gatekeeper.requests.findLast((r) => r.path === '/validate');
    expect(validate?.authorization).toBe(`Bearer ${original.token}`);
    const stored = await readLicence(join(dataDir, 'license.json'));
    expect(stored.ok && stored.record?.token).not.toBe(original.token);
    expect((await stat(join(dataDir, 'license.json'))).mode & 0o777).toBe(0o600);
  });

  it('validates again every few hours, jittered, and each run refreshes last_validated_at', async () => {
    await signIn();
    await makeManager().start();
    const first = clock.only();
    expect(first.ms).toBe(VALIDATE_INTERVAL_MS); // random 0.5 → the middle of the ±10 % window
    const before = gatekeeper.requests.filter((r) => r.path === '/validate').length;
    clock.fire(first);
    // The next run is scheduled once the fresh licence is on disk, a moment after the status changes.
    await waitFor(
      () =>
        manager.status().last_validated_at === new Date(first.at).toISOString() && clock.pending.size === 1,
      5000,
      'the next validation scheduled',
    );
    expect(gatekeeper.requests.filter((r) => r.path === '/validate').length).toBe(before + 1);
    expect(clock.only().at).toBe(first.at + VALIDATE_INTERVAL_MS);
  });

  it('spreads the schedule: the delay stays within ±10 % of the interval', async () => {
    await signIn();
    for (const r of [0, 0.999]) {
      const m = new LicenceManager({
        dataDir,
        client: new GatekeeperClient(gatekeeper.url),
        now: () => clock.now,
        timers: clock,
        random: () => r,
        log: () => {},
      });
      await m.start();
      const ms = clock.only().ms;
      m.stop();
      expect(ms).toBeGreaterThanOrEqual(VALIDATE_INTERVAL_MS * 0.9);
      expect(ms).toBeLessThanOrEqual(VALIDATE_INTERVAL_MS * 1.1);
    }
  });

  it('a sign-in by another process is picked up; its own writes do not trigger more validations', async () => {
    const m = makeManager();
    expect((await m.start()).state).toBe('signed_out');
    const validations = () => gatekeeper.requests.filter((r) => r.path === '/validate').length;
    const before = validations();
    await m.reloadIfChanged();
    expect(validations()).toBe(before);
    await signIn(); // `overlay-daemon login` in another terminal
    await m.reloadIfChanged();
    expect(validations()).toBe(before + 1);
    expect(m.status()).toMatchObject({ tier: 'premium', state: 'valid' });
    await m.reloadIfChanged(); // license.json now holds the token this manager wrote itself
    expect(validations()).toBe(before + 1);
  });

  it('signed out: free tier, no validation request', async () => {
    const before = gatekeeper.requests.filter((r) => r.path === '/validate').length;
    const status = await makeManager().start();
    expect(status).toMatchObject({ tier: 'free', state: 'signed_out', last_validated_at: null });
    expect(gatekeeper.requests.filter((r) => r.path === '/validate').length).toBe(before);
  });
});

describe('short licences (LICENCE_TTL_SECONDS of seconds)', () => {
  const validations = () => gatekeeper.requests.filter((r) => r.path === '/validate').length;
  const expOf = (token: string | undefined) => (decodeJwtPayload(token ?? '')?.exp ?? 0) * 1000;

  beforeEach(() => {
    // The Gatekeeper signs on the test's clock, as a deployment with LICENCE_TTL_SECONDS = 30 would.
    gatekeeper.licenceTtlSeconds = 30;
    gatekeeper.now = () => clock.now;
  });

  it('a 30-second licence is renewed before each expiry, across several of them, never sooner than every 10 s', async () => {
    await signIn();
    const m = makeManager();
    await m.start();
    const before = validations();
    for (let n = 0; n < 6; n++) {
      const held = m.record()?.token;
      const next = clock.only();
      // Well before the licence's end, and not in a loop.
      expect(next.ms).toBeGreaterThanOrEqual(RENEW_MIN_MS);
      expect(next.at).toBeLessThanOrEqual(expOf(held) - RENEW_MIN_MS);
      clock.fire(next);
      await waitFor(() => m.record()?.token !== held && clock.pending.size === 1, 5000, `renewal ${n + 1}`);
      expect(m.status()).toMatchObject({ tier: 'premium', state: 'valid' });
      expect(expOf(m.record()?.token)).toBeGreaterThan(clock.now + 20_000);
    }
    // Six renewals over more than 90 s of licences of 30 s: the daemon never held an expired one.
    expect(validations() - before).toBe(6);
    expect(clock.now - Date.parse(m.status().last_validated_at ?? '')).toBe(0);
  });

  it('a Gatekeeper out of reach is tried again before the short licence ends, not minutes later, and the next answer renews it', async () => {
    await signIn();
    const m = makeManager();
    await m.start();
    const held = m.record()?.token;
    gatekeeper.validateMode = 'unreachable';
    clock.fire(clock.only());
    await waitFor(() => m.status().state === 'grace' && clock.pending.size === 1, 5000, 'grace');
    const retry = clock.only();
    expect(retry.ms).toBeGreaterThanOrEqual(RENEW_MIN_MS);
    expect(retry.at).toBeLessThan(expOf(held));
    gatekeeper.validateMode = 'ok';
    clock.fire(retry);
    await waitFor(() => m.status().state === 'valid' && m.record()?.token !== held, 5000, 'renewed');
    expect(m.status().tier).toBe('premium');
  });

  it('after a socket closed at its licence’s exp: a licence renewed meanwhile serves as it is; the one that ran out is renewed at once', async () => {
    await signIn();
    const m = makeManager();
    await m.start();
    const used = m.record()?.token;
    clock.fire(clock.only());
    await waitFor(() => m.record()?.token !== used && clock.pending.size === 1);
    const renewed = m.record()?.token;
    const before = validations();
    // The socket had the older licence: the newer one, with time left, is the answer; nobody is asked.
    await m.renewed(used);
    expect(validations()).toBe(before);
    expect(m.record()?.token).toBe(renewed);
    // The socket had the one held now (the relay's clock is ahead of ours): a fresh one from the Gatekeeper.
    await m.renewed(renewed);
    expect(validations()).toBe(before + 1);
    expect(m.record()?.token).not.toBe(renewed);
  });
});

describe('grace period when the Gatekeeper cannot be reached', () => {
  it('keeps premium within grace.hours of the last validation, then falls back to free without losing anything', async () => {
    gatekeeper.config.grace.hours = 48;
    await signIn();
    const m = makeManager();
    await m.start(); // caches the config (grace 48 h) and validates at t0
    const t0 = clock.now;
    gatekeeper.validateMode = 'unreachable';

    clock.now = t0 + 47 * HOUR;
    let status = await m.refresh();
    expect(status).toMatchObject({ tier: 'premium', state: 'grace' });
    expect(status.valid_until).toBe(new Date(t0 + 48 * HOUR).toISOString());
    // Offline, it retries sooner than the normal interval.
    expect(clock.only().ms).toBeLessThan(VALIDATE_INTERVAL_MS);

    clock.now = t0 + 48 * HOUR + 1;
    status = await m.refresh();
    expect(status).toMatchObject({ tier: 'free', state: 'expired', valid_until: null });
    expect(m.limits()).toEqual(DEFAULT_CONFIG.tiers.free);
    // The licence itself is kept: the next successful validation restores premium.
    const stored = await readLicence(join(dataDir, 'license.json'));
    expect(stored.ok && stored.record?.tier).toBe('premium');

    gatekeeper.validateMode = 'ok';
    status = await m.refresh();
    expect(status).toMatchObject({ tier: 'premium', state: 'valid' });
  });

  it('a 5xx from the Gatekeeper is no verdict either: the last one stands', async () => {
    await signIn();
    const m = makeManager();
    await m.start();
    gatekeeper.validateMode = 'server_error';
    clock.now += HOUR;
    expect(await m.refresh()).toMatchObject({ tier: 'premium', state: 'grace' });
  });

  it('starts offline on the cached config and the stored verdict', async () => {
    gatekeeper.config.grace.hours = 10;
    gatekeeper.config.tiers.premium.maxOverlays = 7;
    await signIn();
    const online = makeManager();
    await online.start();
    online.stop();
    expect(JSON.parse(await readFile(join(dataDir, 'remote-config.json'), 'utf8')).grace.hours).toBe(10);

    const offline = makeManager('http://127.0.0.1:9'); // nothing listens on the discard port
    clock.now += 9 * HOUR;
    expect(await offline.start()).toMatchObject({ tier: 'premium', state: 'grace' });
    expect(offline.limits().maxOverlays).toBe(7);
    clock.now += 2 * HOUR;
    expect(await offline.refresh()).toMatchObject({ tier: 'free', state: 'expired' });
  });
});

/**
 * The Gatekeeper behind a door that does something to the first connection: `drop` closes it at once,
 * with no answer; `hold` keeps it open, unanswered, until `release()` closes it. The next ones pass.
 */
async function doorToGatekeeper(first: 'drop' | 'hold') {
  const target = Number(new URL(gatekeeper.url).port);
  let connections = 0;
  let held: Socket | undefined;
  const server = createServer((socket) => {
    connections += 1;
    if (connections === 1) {
      if (first === 'drop') socket.destroy();
      else held = socket;
      return;
    }
    const upstream = createConnection(target, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    release: () => held?.destroy(),
    close: () => {
      held?.destroy();
      server.close();
    },
  };
}

describe('a Gatekeeper whose first connection fails', () => {
  let door: Awaited<ReturnType<typeof doorToGatekeeper>> | undefined;
  afterEach(() => {
    door?.close();
    door = undefined;
  });
  const behind = (url: string) => {
    manager = new LicenceManager({
      dataDir,
      issuer: gatekeeper.url,
      client: new GatekeeperClient(url, { timeoutMs: 5000 }),
      now: () => clock.now,
      timers: clock,
      random: () => 0.5,
      log: () => {},
    });
    return manager;
  };

  it('a first GET /config that met a connection closed at once is asked for again within minutes, backing off', async () => {
    door = await doorToGatekeeper('drop');
    gatekeeper.config.tiers.free.maxOverlays = 4;
    const m = behind(door.url);
    expect(await m.start()).toMatchObject({ state: 'signed_out' });
    expect(m.limits().maxOverlays).not.toBe(4);
    const retry = clock.only();
    expect(retry.ms).toBeLessThanOrEqual(5 * 60_000);
    clock.fire(retry);
    await waitFor(() => m.limits().maxOverlays === 4, 5000, 'the config to arrive');
    // In hand now: the usual schedule again.
    await waitFor(() => clock.pending.size === 1, 5000, 'the next check scheduled');
    expect(clock.only().ms).toBe(VALIDATE_INTERVAL_MS);
  });

  it('a sign-in while the first check still waits on the Gatekeeper is picked up: the daemon does not stay signed out', async () => {
    door = await doorToGatekeeper('hold');
    const m = behind(door.url);
    const refresh = vi.spyOn(m, 'refresh');
    const first = m.start();
    // The first check has read license.json (none yet) and waits on its connection.
    await waitFor(() => door?.connections() === 1, 5000, 'the first connection');
    await signIn(); // `overlay-daemon login` in another terminal, meanwhile
    const picked = m.reloadIfChanged(); // the daemon's watch on license.json
    await waitFor(() => refresh.mock.calls.length === 2, 5000, 'the watch to ask for a check');
    door.release(); // the first check's connection ends, with no answer
    await Promise.all([first, picked]);
    expect(m.status()).toMatchObject({ tier: 'premium', state: 'valid' });
    expect(gatekeeper.requests.some((r) => r.path === '/validate')).toBe(true);
  });
});

describe('verdicts from the Gatekeeper', () => {
  it('membership_inactive → free tier at once, token kept so a renewal is picked up without a new login', async () => {
    await signIn();
    const m = makeManager();
    await m.start();
    gatekeeper.validateMode = 'membership_inactive';
    const changes: string[] = [];
    m.on('change', (s) => changes.push(`${s.tier}/${s.state}`));
    expect(await m.refresh()).toMatchObject({ tier: 'free', state: 'inactive' });
    expect(changes).toEqual(['free/inactive']);
    gatekeeper.validateMode = 'ok';
    expect(await m.refresh()).toMatchObject({ tier: 'premium', state: 'valid' });
  });

  it('a licence already in license.json at start is a change for whoever listens from before (Kick events feed after a restart)', async () => {
    await signIn();
    const m = makeManager();
    const changes: string[] = [];
    m.on('change', (s) => changes.push(`${s.tier}/${s.state}`));
    expect(await m.load()).toMatchObject({ tier: 'premium', state: 'valid' });
    expect(changes).toEqual(['premium/valid']);
    // The first validation finds it as it was: no second change.
    await m.refresh();
    expect(changes).toEqual(['premium/valid']);
  });

  it('invalid_token (401) → free tier until the user signs in again', async () => {
    await signIn();
    gatekeeper.validateMode = 'invalid_token';
    expect(await makeManager().start()).toMatchObject({ tier: 'free', state: 'invalid', valid_until: null });
  });

  it('an expired JWT ends premium offline even inside a long grace period', async () => {
    gatekeeper.config.grace.hours = 24 * 30;
    await signIn();
    const m = makeManager();
    await m.start();
    const stored = await readLicence(join(dataDir, 'license.json'));
    const expiresAt = Date.parse((stored.ok && stored.record?.expires_at) || '');
    expect(expiresAt).toBeGreaterThan(clock.now);
    gatekeeper.validateMode = 'unreachable';
    clock.now = expiresAt - 1000;
    expect((await m.refresh()).tier).toBe('premium');
    clock.now = expiresAt + 1000;
    expect(await m.refresh()).toMatchObject({ tier: 'free', state: 'expired' });
  });

  it('a logout while a validation is under way is not undone by it', async () => {
    await signIn();
    const m = makeManager();
    await m.start();
    const pending = m.refresh();
    await rm(join(dataDir, 'license.json'));
    await pending;
    expect((await m.refresh()).state).toBe('signed_out');
    await expect(readLicence(join(dataDir, 'license.json'))).resolves.toEqual({
      ok: true,
      record: undefined,
    });
  });

  it('a license.json that does not parse is reported and left alone', async () => {
    await writeFile(join(dataDir, 'license.json'), '{"token": 1', { mode: 0o600 });
    const lines: string[] = [];
    const m = new LicenceManager({
      dataDir,
      client: new GatekeeperClient(gatekeeper.url),
      timers: clock,
      log: (l) => lines.push(l),
    });
    manager = m;
    expect((await m.start()).state).toBe('signed_out');
    expect(lines.join('\n')).toContain('license.json');
    expect(await readFile(join(dataDir, 'license.json'), 'utf8')).toBe('{"token": 1');
  });
});

describe('tier limits', () => {
  it('free tier: creating beyond maxOverlays is refused with premium_required, naming the limit and the upgrade URL', async () => {
    gatekeeper.config.tiers.free.maxOverlays = 2;
    gatekeeper.config.upgrade.url = 'https://example.com/upgrade';
    const m = makeManager();
    await m.start();
    expect(m.canCreateOverlay(1)).toEqual({ ok: true });
    const refused = m.canCreateOverlay(2);
    expect(refused).toMatchObject({
      ok: false,
      code: 'premium_required',
      upgradeUrl: 'https://example.com/upgrade',
    });
    expect(!refused.ok && refused.message).toMatch(
      /allows 2 overlays.*you have 2.*https:\/\/example\.com\/upgrade/,
    );
    expect(m.canUseTunnel()).toMatchObject({ ok: false, code: 'premium_required' });
  });

  it('rules: growing past maxRules is refused, shrinking an over-limit list is allowed', async () => {
    const m = makeManager();
    await m.start();
    const max = DEFAULT_CONFIG.tiers.free.maxRules;
    expect(m.canSaveRules(max, max - 1)).toEqual({ ok: true });
    expect(m.canSaveRules(max + 1, max)).toMatchObject({ ok: false, code: 'premium_required' });
    expect(m.canSaveRules(max + 2, max + 3)).toEqual({ ok: true });
  });

  it('premium: the premium limits and the tunnel are allowed', async () => {
    await signIn();
    const m = makeManager();
    await m.start();
    expect(m.limits()).toEqual(DEFAULT_CONFIG.tiers.premium);
    expect(m.canCreateOverlay(DEFAULT_CONFIG.tiers.free.maxOverlays + 5)).toEqual({ ok: true });
    expect(m.canUseTunnel()).toEqual({ ok: true });
  });
});

describe('only signed claims count', () => {
  function offlineManager(lines: string[] = []): LicenceManager {
    manager = new LicenceManager({
      dataDir,
      client: new GatekeeperClient('http://127.0.0.1:9', { timeoutMs: 2000 }), // nothing listens there
      issuer: gatekeeper.url,
      now: () => clock.now,
      timers: clock,
      random: () => 0.5,
      log: (line) => lines.push(line),
    });
    return manager;
  }

  it('a validated_at set far in the future does not buy a grace period with the Gatekeeper unreachable', async () => {
    await signIn('premium', clock.now + 365 * 24 * HOUR);
    await makeManager().load(); // caches the Gatekeeper's keys: the signature itself is good
    manager?.stop();
    const status = await offlineManager().start();
    expect(status.tier).toBe('free');
    expect(status.state).toBe('expired');
  });

  it('a forged or tampered licence counts as none: free tier, and one clear log line', async () => {
    const record = await signIn('free');
    const [header, payload] = record.token.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'));
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, tier: 'premium' })).toString('base64url')}.${record.token.split('.')[2]}`;
    await writeLicence(join(dataDir, 'license.json'), { ...record, token: tampered, tier: 'premium' });
    const lines: string[] = [];
    gatekeeper.validateMode = 'unreachable';
    const m = new LicenceManager({
      dataDir,
      client: new GatekeeperClient(gatekeeper.url, { timeoutMs: 2000 }),
      now: () => clock.now,
      timers: clock,
      random: () => 0.5,
      log: (line) => lines.push(line),
    });
    manager = m;
    const status = await m.start();
    expect(status.tier).toBe('free');
    expect(lines.filter((l) => l.includes('does not verify'))).toHaveLength(1);
    expect(lines.join('\n')).toContain('signature does not verify');
  });

  it('a genuine licence verifies offline once the keys are cached (jwks.json in the data dir)', async () => {
    await signIn('premium');
    await makeManager().load();
    manager?.stop();
    expect(JSON.parse(await readFile(join(dataDir, 'jwks.json'), 'utf8')).keys).toHaveLength(1);
    const status = await offlineManager().start();
    expect(status).toMatchObject({ tier: 'premium', state: 'grace' });
  });

  it('a licence signed by a key the Gatekeeper never published is free, even with a cached key set', async () => {
    await makeManager().load(); // caches the real keys
    manager?.stop();
    const { licenceSigner } = await import('../support/licence-signer.js');
    const forger = licenceSigner('fake-gatekeeper'); // same kid, other key
    await writeLicence(join(dataDir, 'license.json'), {
      token: forger.sign({ sub: 'patron-7', tier: 'premium', iss: gatekeeper.url }),
      tier: 'premium',
      validated_at: new Date(clock.now).toISOString(),
      user_id: 'patron-7',
      verdict: 'ok',
    });
    expect((await offlineManager().start()).tier).toBe('free');
  });

  it('a key rotated under the same kid is fetched again when the signature does not verify, at most once a minute', async () => {
    await signIn('premium');
    expect((await makeManager().load()).tier).toBe('premium'); // caches the Gatekeeper's keys
    manager?.stop();
    const jwksFetches = () => gatekeeper.requests.filter((r) => r.path === '/.well-known/jwks.json').length;
    const cachedBefore = await readFile(join(dataDir, 'jwks.json'), 'utf8');

    // The Gatekeeper starts again with a fresh key under the same kid, and signs the new licence with it.
    gatekeeper.rotateKey();
    try {
      await signIn('premium');
      const fetchesBefore = jwksFetches();
      const status = await makeManager().load();
      expect(status).toMatchObject({ tier: 'premium', state: 'valid' });
      expect(jwksFetches()).toBe(fetchesBefore + 1);
      expect(await readFile(join(dataDir, 'jwks.json'), 'utf8')).not.toBe(cachedBefore);

      // A licence no published key signs asks again at most once a minute, however often it is read.
      const { licenceSigner } = await import('../support/licence-signer.js');
      const forger = licenceSigner('fake-gatekeeper');
      await writeLicence(join(dataDir, 'license.json'), {
        token: forger.sign({ sub: 'patron-7', tier: 'premium', iss: gatekeeper.url }),
        tier: 'premium',
        validated_at: new Date(clock.now).toISOString(),
        user_id: 'patron-7',
        verdict: 'ok',
      });
      const forgedFrom = jwksFetches();
      for (let i = 0; i < 5; i++) expect((await manager.load()).tier).toBe('free');
      expect(jwksFetches()).toBe(forgedFrom);
      clock.now += 60_000;
      for (let i = 0; i < 5; i++) expect((await manager.load()).tier).toBe('free');
      expect(jwksFetches()).toBe(forgedFrom + 1);
    } finally {
      gatekeeper.rotateKey();
    }
  });
});
