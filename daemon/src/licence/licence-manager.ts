// The daemon's licence: validated on start, then renewed well before it expires (every few hours at most),
// with a grace period offline, and the tier limits it grants.
import { EventEmitter } from 'node:events';
import { DEFAULT_CONFIG, type RemoteConfig, type TierLimits } from '../../../shared/config.js';
import type { LicenceStatus, Tier } from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import { dataDirPaths } from '../store/data-dir.js';
import type { GatekeeperClient } from './gatekeeper-client.js';
import { decodeJwtPayload } from './jwt-payload.js';
import { type LicenceRecord, readLicence, writeLicence } from './licence-file.js';
import {
  checkCount,
  checkPublish,
  checkRuleList,
  checkTunnel,
  type LimitDecision,
  limitsFor,
} from './limits.js';
import { readCachedConfig, writeCachedConfig } from './remote-config-cache.js';
import { LicenceVerifier, type VerifiedClaims } from './verify.js';

/**
 * - `signed_out`: no license.json (run `overlay-daemon login`).
 * - `valid`: the Gatekeeper confirmed the licence within the grace period, and the last attempt reached it.
 * - `grace`: the Gatekeeper could not be reached; the last verdict holds until `valid_until`.
 * - `expired`: the grace period (or the JWT) ran out without a successful validation: free tier until it succeeds.
 * - `inactive`: the Gatekeeper said the membership lapsed (403 `membership_inactive`): free tier.
 * - `invalid`: the Gatekeeper rejected the token (401): free tier until `overlay-daemon login`.
 */
export type LicenceState = LicenceStatus['state'];
export type { LicenceStatus };

/** One-shot timers the manager schedules its next validation with (a test fires them by hand). */
export interface TimeoutScheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realScheduler: TimeoutScheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export const VALIDATE_INTERVAL_MS = 4 * 60 * 60_000;
const RETRY_MIN_MS = 5 * 60_000;
/**
 * A licence is renewed once about this share of what is left of it has passed (±10 %, like the interval):
 * a 7-day licence keeps the 4-hour schedule, one of 30 seconds is renewed every 15 seconds.
 */
export const RENEW_SHARE = 0.5;
/**
 * Never sooner than this after a check, however short the licence: the Gatekeeper is not asked in a loop
 * (it takes 30 validations a minute from an address). Also how much must be left of a licence for a socket
 * to be opened again with it after the Gatekeeper closed one at its `exp`.
 */
export const RENEW_MIN_MS = 10_000;

interface LicenceManagerOptions {
  dataDir: string;
  /** Absent: the daemon runs offline on what license.json and the cached config say. */
  client?: GatekeeperClient;
  now?: () => number;
  timers?: TimeoutScheduler;
  /** In [0, 1); spreads the validations of many daemons over time. */
  random?: () => number;
  intervalMs?: number;
  log?: (line: string) => void;
  /** The Gatekeeper's origin, the licences' `iss`, when there is no client (offline); else the client's. */
  issuer?: string;
}

export class LicenceManager extends EventEmitter<{ change: [LicenceStatus] }> {
  readonly licenceFile: string;
  readonly configFile: string;
  #record: LicenceRecord | undefined;
  /** The claims of the stored licence once its signature verified; undefined when it did not. */
  #claims: VerifiedClaims | undefined;
  readonly #verifier: LicenceVerifier;
  #config: RemoteConfig = DEFAULT_CONFIG;
  #unreachable = false;
  #failures = 0;
  /** Failed fetches of the remote config in a row (the Gatekeeper dropped or refused `GET /config`). */
  #configFailures = 0;
  /** A refresh asked for while a check was under way: it runs once that one ends. */
  #followUp: Promise<LicenceStatus> | undefined;
  #timer: unknown;
  #stopped = false;
  #inFlight: Promise<LicenceStatus> | undefined;
  readonly #client: GatekeeperClient | undefined;
  readonly #now: () => number;
  readonly #timers: TimeoutScheduler;
  readonly #random: () => number;
  readonly #intervalMs: number;
  readonly #log: (line: string) => void;

  constructor(options: LicenceManagerOptions) {
    super();
    const files = dataDirPaths(options.dataDir);
    this.licenceFile = files.licenseFile;
    this.configFile = files.remoteConfigFile;
    this.#client = options.client;
    this.#now = options.now ?? Date.now;
    this.#timers = options.timers ?? realScheduler;
    this.#random = options.random ?? Math.random;
    this.#intervalMs = options.intervalMs ?? VALIDATE_INTERVAL_MS;
    this.#log = options.log ?? ((line) => console.log(`[licence] ${line}`));
    const client = options.client;
    this.#verifier = new LicenceVerifier({
      jwksFile: files.jwksFile,
      issuer: options.issuer ?? client?.baseUrl ?? '',
      now: this.#now,
      ...(client
        ? {
            fetchJwks: async () => {
              const answer = await client.jwks();
              if (!answer.ok) throw new Error(answer.message);
              return answer.value;
            },
          }
        : {}),
    });
  }

  /**
   * Loads license.json and the cached config, validates once, then keeps validating on a jittered schedule:
   * every few hours, and sooner when the licence would expire first (see `#renewInMs`).
   */
  async start(): Promise<LicenceStatus> {
    await this.load();
    return this.refresh();
  }

  /** Reads license.json and the cached config without asking the Gatekeeper: the verdict offline. */
  async load(): Promise<LicenceStatus> {
    this.#stopped = false;
    const before = this.status();
    this.#config = await readCachedConfig(this.configFile);
    await this.#load();
    const after = this.status();
    // A licence found in the file at start is a change for whoever listens already (Kick's events feed).
    if (after.tier !== before.tier || after.state !== before.state) this.emit('change', after);
    return after;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Resolves once no check is under way (one asked for while another ran included). */
  async settled(): Promise<void> {
    while (this.#inFlight || this.#followUp) await (this.#followUp ?? this.#inFlight);
  }

  /** Stops the schedule and waits for a validation under way, so nothing writes to the data dir afterwards. */
  async close(): Promise<void> {
    this.stop();
    await this.#inFlight;
  }

  /**
   * Re-reads license.json (a `login` or `logout` from another process) and asks the Gatekeeper now. Asked
   * while a check is under way (one that may have read license.json before the change, and may wait on a
   * Gatekeeper that does not answer), one more check follows it: the change is never lost.
   */
  refresh(): Promise<LicenceStatus> {
    if (this.#inFlight) {
      this.#followUp ??= this.#inFlight.then(() => {
        this.#followUp = undefined;
        return this.#stopped ? this.status() : this.refresh();
      });
      return this.#followUp;
    }
    this.#inFlight = this.#check()
      .catch((err: Error) => {
        // A full disk or a vanished data dir must not take the daemon down: keep the verdict in memory.
        this.#log(`licence check failed: ${err.message}`);
        return this.status();
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }

  /**
   * A licence to open a socket again with, after the Gatekeeper closed one at its licence's `exp` (the
   * relay's and the Kick feed's 4401). `used` is the token that socket had: the licence held now serves
   * when it is another one with more than `RENEW_MIN_MS` left (the schedule renewed it meanwhile);
   * otherwise the Gatekeeper is asked now. A check under way is waited for first, so many sockets closed at
   * the same `exp` cost one validation.
   */
  async renewed(used: string | undefined): Promise<LicenceStatus> {
    await this.#inFlight;
    if (this.#usable(used)) return this.status();
    return this.refresh();
  }

  #usable(used: string | undefined): boolean {
    const record = this.#record;
    const claims = this.#claims;
    if (!record || !claims || record.token === used || record.verdict !== 'ok') return false;
    return claims.exp * 1000 - this.#now() > RENEW_MIN_MS;
  }

  /** For a watch on license.json: asks the Gatekeeper only when another process signed in or out, not after our own writes. */
  async reloadIfChanged(): Promise<void> {
    const read = await readLicence(this.licenceFile);
    const token = read.ok ? read.record?.token : undefined;
    if (read.ok && token !== this.#record?.token) await this.refresh();
  }

  status(): LicenceStatus {
    const record = this.#record;
    const lastValidatedAt = record?.validated_at ?? null;
    if (!record) return { tier: 'free', valid_until: null, last_validated_at: null, state: 'signed_out' };
    if (record.verdict === 'membership_inactive') {
      return { tier: 'free', valid_until: null, last_validated_at: lastValidatedAt, state: 'inactive' };
    }
    // A licence whose signature does not verify counts as none, whatever the file says.
    const claims = this.#claims;
    if (record.verdict === 'invalid_token' || !claims) {
      return { tier: 'free', valid_until: null, last_validated_at: lastValidatedAt, state: 'invalid' };
    }
    const until = this.#validUntil(record, claims);
    if (this.#now() >= until) {
      return { tier: 'free', valid_until: null, last_validated_at: lastValidatedAt, state: 'expired' };
    }
    // The tier is the signed one; the file's own `tier` is only a copy for people who read it.
    const tier = claims.tier;
    return {
      tier,
      valid_until: tier === 'free' ? null : new Date(until).toISOString(),
      last_validated_at: lastValidatedAt,
      state: this.#unreachable ? 'grace' : 'valid',
    };
  }

  tier(): Tier {
    return this.status().tier;
  }

  /** The licence record (token and user id) while one is stored; the tunnel commands need it. */
  record(): LicenceRecord | undefined {
    return this.#record;
  }

  config(): RemoteConfig {
    return this.#config;
  }

  limits(): TierLimits {
    return limitsFor(this.#config, this.tier());
  }

  /** Call before creating an overlay, with the number that exist now. */
  canCreateOverlay(count: number): LimitDecision {
    return checkCount(this.#config, this.tier(), 'overlays', count);
  }

  /** Call before saving a rule list that grows it to `count` rules (shrinking is always allowed). */
  canSaveRules(count: number, previousCount: number): LimitDecision {
    return checkRuleList(this.#config, this.tier(), count, previousCount);
  }

  canUseTunnel(): LimitDecision {
    return checkTunnel(this.#config, this.tier());
  }

  /** Call before making an overlay public (only Premium publishes through the relay). */
  canPublish(): LimitDecision {
    return checkPublish(this.#config, this.tier());
  }

  /**
   * The verdict holds for `grace.hours` after the last successful validation, and never past the signed
   * expiry. A `validated_at` later than now was not written by us: it counts as never validated.
   */
  #validUntil(record: LicenceRecord, claims: VerifiedClaims): number {
    const validatedAt = Date.parse(record.validated_at);
    const graceEnd =
      validatedAt > this.#now()
        ? Number.NEGATIVE_INFINITY
        : validatedAt + this.#config.grace.hours * 3_600_000;
    return Math.min(graceEnd, claims.exp * 1000);
  }

  /** Verifies the stored licence's signature; one log line when it does not verify. */
  async #verifyRecord(): Promise<void> {
    const record = this.#record;
    if (!record) {
      this.#claims = undefined;
      return;
    }
    const verified = await this.#verifier.verify(record.token);
    if (verified.ok) {
      this.#claims = verified.claims;
      return;
    }
    if (this.#claims !== undefined || this.#lastRejected !== record.token) {
      this.#log(`the licence in ${this.licenceFile} does not verify (${verified.reason}): free tier`);
    }
    this.#lastRejected = record.token;
    this.#claims = undefined;
  }
  #lastRejected: string | undefined;

  async #load(): Promise<void> {
    const read = await readLicence(this.licenceFile);
    if (!read.ok) {
      // Never overwrite a licence we could not read (decisions §3): run as signed out and say why.
      this.#log(`ignoring ${this.licenceFile}: ${read.error}`);
      this.#record = undefined;
      return;
    }
    this.#record = read.record;
    await this.#verifyRecord();
  }

  /** Who the licence is for and its epoch: another one is a sign-in (as someone else, or after a logout). */
  #signedInAs(): string | undefined {
    const claims = this.#claims;
    return claims ? `${claims.sub}#${claims.epoch ?? 1}` : undefined;
  }

  async #check(): Promise<LicenceStatus> {
    const before = this.status();
    const signedInAs = this.#signedInAs();
    await this.#load();
    if (this.#client) {
      await this.#fetchConfig(this.#client);
      const record = this.#record;
      if (record) await this.#validate(this.#client, record);
      else this.#unreachable = false;
    }
    this.#schedule();
    const after = this.status();
    const verdictChanged = after.tier !== before.tier || after.state !== before.state;
    if (verdictChanged) this.#log(describeStatus(after));
    if (verdictChanged || this.#signedInAs() !== signedInAs) this.emit('change', after);
    return after;
  }

  async #fetchConfig(client: GatekeeperClient): Promise<void> {
    const fetched = await client.config();
    if (!fetched.ok) {
      // The cached (or bundled) config stays in force; the next check comes soon, backing off.
      this.#configFailures += 1;
      if (this.#configFailures === 1) this.#log(`could not fetch the remote config: ${fetched.message}`);
      return;
    }
    this.#configFailures = 0;
    this.#config = fetched.value;
    try {
      await writeCachedConfig(this.configFile, fetched.value);
    } catch (err) {
      this.#log(`could not cache the remote config: ${errorMessage(err)}`);
    }
  }

  async #validate(client: GatekeeperClient, record: LicenceRecord): Promise<void> {
    const result = await client.validate(record.token);
    const validatedAt = new Date(this.#now()).toISOString();
    let next: LicenceRecord;
    if (result.ok) {
      const claims = decodeJwtPayload(result.value.token);
      next = {
        token: result.value.token,
        tier: result.value.tier,
        validated_at: validatedAt,
        expires_at: result.value.expires_at,
        user_id: claims?.sub ?? record.user_id,
        verdict: 'ok',
      };
    } else if (result.kind === 'http' && result.code === 'membership_inactive') {
      // The token stays: a renewed membership validates again without a new login.
      next = { ...record, tier: 'free', validated_at: validatedAt, verdict: 'membership_inactive' };
    } else if (result.kind === 'http' && (result.status === 401 || result.code === 'invalid_token')) {
      next = { ...record, tier: 'free', validated_at: validatedAt, verdict: 'invalid_token' };
    } else {
      // Unreachable, rate limited or failing upstream: no verdict, so the last one stands within the grace period.
      this.#unreachable = true;
      this.#failures += 1;
      this.#log(`could not validate the licence: ${result.message}`);
      return;
    }
    this.#unreachable = false;
    this.#failures = 0;
    // A `logout` or a new `login` in another process while we asked: theirs wins.
    const current = await readLicence(this.licenceFile);
    if (!current.ok || current.record?.token !== record.token) {
      await this.#load();
      return;
    }
    // In force at once; the file follows (a failed write keeps the verdict in memory for this run).
    this.#record = next;
    await this.#verifyRecord();
    await writeLicence(this.licenceFile, next);
  }

  /**
   * How long until the licence held should be renewed: `RENEW_SHARE` of what is left of it, at least
   * `RENEW_MIN_MS`. What is left is read on both clocks and the shorter taken: `exp` against this
   * computer's clock, and the lifetime the Gatekeeper signed (`exp - iat`) less the time since it came (a
   * clock set wrong here neither lets the licence run out nor makes it look expired too soon). Undefined
   * without a licence the Gatekeeper confirmed, or once it is past its `exp` (only a new answer helps then,
   * and the start, a 4401 or the usual schedule asks for it).
   */
  #renewInMs(): number | undefined {
    const record = this.#record;
    const claims = this.#claims;
    if (!record || !claims || record.verdict !== 'ok') return undefined;
    const now = this.#now();
    let left = claims.exp * 1000 - now;
    const since = now - Date.parse(record.validated_at);
    if (claims.iat !== undefined && since >= 0)
      left = Math.min(left, (claims.exp - claims.iat) * 1000 - since);
    if (!(left > 0)) return undefined;
    return left * RENEW_SHARE;
  }

  #schedule(): void {
    if (this.#stopped) return;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    // The Gatekeeper out of reach (the licence's check or the config's): again soon, backing off.
    const failures = Math.max(this.#unreachable ? this.#failures : 0, this.#configFailures);
    let base =
      failures > 0
        ? Math.min(RETRY_MIN_MS * 2 ** Math.min(failures - 1, 10), this.#intervalMs)
        : this.#intervalMs;
    // A licence that ends first is renewed before it does; out of reach, tried again at half of what is
    // left each time, so the last try comes seconds before its `exp`, not minutes after.
    const renew = this.#renewInMs();
    if (renew !== undefined) base = Math.min(base, renew);
    const delay = Math.max(RENEW_MIN_MS, Math.round(base * (0.9 + 0.2 * this.#random())));
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      void this.refresh();
    }, delay);
  }
}

function describeStatus(status: LicenceStatus): string {
  switch (status.state) {
    case 'signed_out':
      return 'not signed in: free tier (run "overlay-daemon login")';
    case 'valid':
      return `licence valid: ${status.tier} tier`;
    case 'grace':
      return `Gatekeeper unreachable: keeping the ${status.tier} tier until ${status.valid_until}`;
    case 'expired':
      return 'licence not validated within the grace period: free tier until the Gatekeeper confirms it again';
    case 'inactive':
      return 'membership inactive: free tier (renew the membership, then it is picked up automatically)';
    case 'invalid':
      return 'the Gatekeeper rejected the licence: free tier (run "overlay-daemon login" again)';
  }
}
