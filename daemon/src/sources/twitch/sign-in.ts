// The Twitch sign-in the dashboard drives: one device code flow at a time, its state
// for GET /api/sources/twitch/sign-in, and what happens once it ends (the tokens in twitch.json, the
// running Twitch sources told). `overlay-daemon connect twitch` runs the same flow from the terminal.
import type { TwitchSignIn } from '../../../../shared/protocol/index.js';
import { DaemonError, errorMessage } from '../../errors.js';
import type { Timers } from '../../timers.js';
import { type ConfigArrival, type CredentialsReport, missingCredential } from '../credentials.js';
import { chatScopeMissing, readTwitchTokens, startDeviceFlow, TwitchAuth } from './auth.js';

export interface TwitchSignInOptions {
  authUrl: string;
  dataDir: string;
  clientId(): string | undefined;
  log(line: string): void;
  /** The waits between polls (the real clock by default). */
  timers?: Timers;
  /** Whether the Gatekeeper's config (which may give the client id) arrived; `arrived` when not given. */
  configArrival?(): ConfigArrival;
  /** Where the Twitch client id and the YouTube key in force come from (GET /api/sources/credentials). */
  credentials?(): CredentialsReport;
}

/**
 * No client id is known: nothing to sign in with. Said by what became of the Gatekeeper's config: on its
 * way, out of reach (no network), or without one.
 */
export class NoTwitchClientId extends DaemonError {
  constructor(arrival: ConfigArrival = 'arrived') {
    const ownOne = 'put your own client id in the Sources view (settings.json twitch.clientId)';
    super(
      'not_configured',
      arrival === 'waiting'
        ? `${missingCredential('Twitch client id', arrival, ownOne)}: try again in a moment`
        : missingCredential('Twitch client id', arrival, ownOne),
    );
  }
}

export class TwitchSignInService {
  #pending:
    | { userCode: string; verificationUri: string; expiresAt: string; abort: AbortController }
    | undefined;
  #failure: string | undefined;
  /** Every device code flow still polling Twitch: Disconnect, a new sign-in and close() end them all. */
  readonly #polls = new Set<AbortController>();
  /** A begin() asking Twitch for a code: a second one at the same time waits for it, never starts another. */
  #starting: Promise<TwitchSignIn> | undefined;

  constructor(private readonly options: TwitchSignInOptions) {}

  async state(): Promise<TwitchSignIn> {
    if (this.#pending) {
      const { userCode, verificationUri, expiresAt } = this.#pending;
      return { state: 'pending', userCode, verificationUri, expiresAt };
    }
    const tokens = await readTwitchTokens(this.options.dataDir).catch(() => undefined);
    if (tokens) {
      const renew = chatScopeMissing(tokens);
      return { state: 'signed-in', login: tokens.login, ...(renew ? { renew } : {}) };
    }
    return this.#failure ? { state: 'failed', error: this.#failure } : { state: 'signed-out' };
  }

  /** Starts the device code flow (or answers the one under way). Throws NoTwitchClientId. */
  async begin(): Promise<TwitchSignIn> {
    if (this.#pending) return this.state();
    if (this.#starting) return this.#starting;
    const starting = this.#begin().finally(() => {
      if (this.#starting === starting) this.#starting = undefined;
    });
    this.#starting = starting;
    return starting;
  }

  async #begin(): Promise<TwitchSignIn> {
    const clientId = this.options.clientId();
    if (!clientId) throw new NoTwitchClientId(this.options.configArrival?.());
    const epoch = this.#epoch;
    const flow = await startDeviceFlow({
      authUrl: this.options.authUrl,
      clientId,
      dataDir: this.options.dataDir,
      ...(this.options.timers ? { timers: this.options.timers } : {}),
    });
    // Disconnect (or close) came while Twitch was asked for the code: no poll starts.
    if (epoch !== this.#epoch) return this.state();
    this.#abortPolls();
    const abort = new AbortController();
    this.#polls.add(abort);
    const pending = {
      userCode: flow.userCode,
      verificationUri: flow.verificationUri,
      expiresAt: new Date(Date.now() + flow.expiresInS * 1000).toISOString(),
      abort,
    };
    this.#pending = pending;
    this.#failure = undefined;
    flow
      .wait(abort.signal)
      .finally(() => this.#polls.delete(abort))
      .then(
        async (tokens) => {
          if (this.#pending !== pending) return;
          this.#pending = undefined;
          // Running Twitch sources see twitch.json change and start again with it.
          this.options.log(`[twitch] signed in as ${tokens.login}`);
        },
        (err: unknown) => {
          if (this.#pending !== pending) return;
          this.#pending = undefined;
          this.#failure = errorMessage(err);
          this.options.log(`[twitch] sign-in did not complete: ${this.#failure}`);
        },
      );
    return this.state();
  }

  /** Revokes the tokens at Twitch (best effort) and forgets them; ends a sign-in under way. */
  async signOut(): Promise<void> {
    this.#epoch++;
    this.#abortPolls();
    this.#pending = undefined;
    this.#failure = undefined;
    await new TwitchAuth({
      authUrl: this.options.authUrl,
      dataDir: this.options.dataDir,
      log: this.options.log,
    }).disconnect();
  }

  close(): void {
    this.#epoch++;
    this.#abortPolls();
    this.#pending = undefined;
  }

  /** Where the platform credentials in force come from; undefined when the daemon does not say. */
  credentials(): CredentialsReport | undefined {
    return this.options.credentials?.();
  }

  /** How many device code flows are still polling Twitch (0 after Disconnect). */
  get polling(): number {
    return this.#polls.size;
  }

  /** Bumped by Disconnect and close(): a code asked for before it starts no poll. */
  #epoch = 0;

  #abortPolls(): void {
    for (const abort of this.#polls) abort.abort();
    this.#polls.clear();
  }
}
