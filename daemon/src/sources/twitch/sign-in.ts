// The Twitch sign-in the dashboard drives (decisions-2 §8): one device code flow at a time, its state
// for GET /api/sources/twitch/sign-in, and what happens once it ends (the tokens in twitch.json, the
// running Twitch sources told). `overlay-daemon connect twitch` runs the same flow from the terminal.
import type { TwitchSignIn } from '../../../../shared/protocol/index.js';
import { errorMessage } from '../../errors.js';
import { readTwitchTokens, startDeviceFlow, TwitchAuth } from './auth.js';

export interface TwitchSignInOptions {
  authUrl: string;
  dataDir: string;
  clientId(): string | undefined;
  log(line: string): void;
}

/** No client id is known: nothing to sign in with. */
export class NoTwitchClientId extends Error {
  constructor() {
    super(
      'no Twitch client id: put one in the Sources view (settings.json twitch.clientId), or ask the operator to set platforms.twitch.client_id in the Gatekeeper config',
    );
  }
}

export class TwitchSignInService {
  #pending:
    | { userCode: string; verificationUri: string; expiresAt: string; abort: AbortController }
    | undefined;
  #failure: string | undefined;

  constructor(private readonly options: TwitchSignInOptions) {}

  async state(): Promise<TwitchSignIn> {
    if (this.#pending) {
      const { userCode, verificationUri, expiresAt } = this.#pending;
      return { state: 'pending', userCode, verificationUri, expiresAt };
    }
    const tokens = await readTwitchTokens(this.options.dataDir).catch(() => undefined);
    if (tokens) return { state: 'signed-in', login: tokens.login };
    return this.#failure ? { state: 'failed', error: this.#failure } : { state: 'signed-out' };
  }

  /** Starts the device code flow (or answers the one under way). Throws NoTwitchClientId. */
  async begin(): Promise<TwitchSignIn> {
    if (this.#pending) return this.state();
    const clientId = this.options.clientId();
    if (!clientId) throw new NoTwitchClientId();
    const flow = await startDeviceFlow({
      authUrl: this.options.authUrl,
      clientId,
      dataDir: this.options.dataDir,
    });
    const abort = new AbortController();
    const pending = {
      userCode: flow.userCode,
      verificationUri: flow.verificationUri,
      expiresAt: new Date(Date.now() + flow.expiresInS * 1000).toISOString(),
      abort,
    };
    this.#pending = pending;
    this.#failure = undefined;
    flow.wait(abort.signal).then(
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
    this.#pending?.abort.abort();
    this.#pending = undefined;
    this.#failure = undefined;
    await new TwitchAuth({
      authUrl: this.options.authUrl,
      dataDir: this.options.dataDir,
      log: this.options.log,
    }).disconnect();
  }

  close(): void {
    this.#pending?.abort.abort();
    this.#pending = undefined;
  }
}
