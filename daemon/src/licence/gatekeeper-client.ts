// HTTP client for the Gatekeeper's licence and tunnel routes (interface §4.1, decisions §2), on
// fetchJson; never throws.
import * as v from 'valibot';
import { type RemoteConfig, RemoteConfig as RemoteConfigSchema } from '../../../shared/config.js';
import {
  ErrorBody,
  ExchangeResponse,
  Health,
  ProvisionResponse,
  parseWith,
  TunnelStatus,
  ValidateResponse,
} from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import { FetchError, fetchJson, redact } from '../http-client/fetch-json.js';

/** Where `login` and the licence checks go unless `--gatekeeper` or `$OVERLAY_GATEKEEPER_URL` says otherwise. */
export const DEFAULT_GATEKEEPER_URL = 'https://gatekeeper.overlay-daemon.workers.dev';

export function gatekeeperUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return (flag || env.OVERLAY_GATEKEEPER_URL || DEFAULT_GATEKEEPER_URL).replace(/\/+$/, '');
}

/**
 * `http`: the Gatekeeper answered with an error body (its `code` is stable, decisions §1).
 * `network`: it could not be reached, timed out, or answered with something that is not its protocol.
 */
export type GatekeeperFailure =
  | { ok: false; kind: 'http'; status: number; code: string; message: string; body: unknown }
  | { ok: false; kind: 'network'; message: string };
type GatekeeperResult<T> = { ok: true; status: number; value: T } | GatekeeperFailure;

interface GatekeeperClientOptions {
  fetch?: typeof fetch;
  /** Per request; a hung Gatekeeper must not hang the daemon's start-up. */
  timeoutMs?: number;
}

export class GatekeeperClient {
  readonly baseUrl: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(baseUrl: string, options: GatekeeperClientOptions = {}) {
    const url = new URL(baseUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new Error(`The Gatekeeper URL must be http(s), got "${baseUrl}"`);
    }
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 15_000;
  }

  /**
   * The page the browser opens to sign in; the Gatekeeper redirects back to 127.0.0.1:port (RFC 8252 §7.3).
   * `codeChallenge` is the PKCE S256 challenge (RFC 7636) of the verifier that `exchange` will send.
   */
  loginUrl(redirectPort: number, codeChallenge: string): string {
    const query = new URLSearchParams({
      redirect_port: String(redirectPort),
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    });
    return `${this.baseUrl}/auth/membership?${query}`;
  }

  /** `GET /health` (interface §2.1): is the Gatekeeper there at all. */
  health() {
    return this.#request('GET', '/health', Health, {});
  }

  exchange(code: string, codeVerifier: string) {
    return this.#request('POST', '/auth/exchange', ExchangeResponse, {
      body: { code, code_verifier: codeVerifier },
      secrets: [code, codeVerifier],
    });
  }

  /** The public keys that verify licences (`/.well-known/jwks.json`); the verifier checks the shape. */
  jwks() {
    return this.#request('GET', '/.well-known/jwks.json', v.unknown(), {});
  }

  /** Signs every licence of this member out: 204. */
  logout(token: string) {
    return this.#request('POST', '/auth/logout', null, { token });
  }

  validate(token: string) {
    return this.#request('POST', '/validate', ValidateResponse, { token });
  }

  config(): Promise<GatekeeperResult<RemoteConfig>> {
    return this.#request('GET', '/config', RemoteConfigSchema, {});
  }

  provisionTunnel(token: string, userId: string) {
    return this.#request('POST', '/tunnels/provision', ProvisionResponse, {
      token,
      body: { user_id: userId },
    });
  }

  tunnelStatus(token: string, userId: string) {
    return this.#request('GET', `/tunnels/status/${encodeURIComponent(userId)}`, TunnelStatus, { token });
  }

  deleteTunnel(token: string, userId: string) {
    return this.#request('DELETE', `/tunnels/${encodeURIComponent(userId)}`, null, { token });
  }

  async #request<S extends v.GenericSchema | null>(
    method: string,
    path: string,
    schema: S,
    { token, body, secrets = [] }: { token?: string; body?: unknown; secrets?: readonly string[] },
  ): Promise<GatekeeperResult<S extends v.GenericSchema ? v.InferOutput<S> : null>> {
    type Out = S extends v.GenericSchema ? v.InferOutput<S> : null;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const hidden = [token, ...secrets];
    try {
      const answer = await fetchJson(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { json: body } : {}),
        ...(schema !== null ? { schema } : {}),
        timeoutMs: this.#timeoutMs,
        secrets: hidden,
        service: 'the Gatekeeper',
        fetch: this.#fetch,
      });
      return { ok: true, status: answer.status, value: (schema === null ? null : answer.value) as Out };
    } catch (err) {
      if (!(err instanceof FetchError))
        return {
          ok: false,
          kind: 'network',
          message: `${method} ${path}: ${redact(errorMessage(err), hidden)}`,
        };
      if (err.code === 'bad_response')
        return {
          ok: false,
          kind: 'network',
          message: `${method} ${path}: unexpected response (${err.reason})`,
        };
      if (err.status === undefined) {
        const why = err.code === 'timeout' ? 'timed out' : err.reason;
        return { ok: false, kind: 'network', message: `${method} ${path}: ${why}` };
      }
      const parsed = parseWith(ErrorBody, err.body);
      // A proxy's HTML error page or a 5xx without our body: the Gatekeeper itself gave no verdict.
      if (!parsed.ok) return { ok: false, kind: 'network', message: `${method} ${path}: HTTP ${err.status}` };
      return {
        ok: false,
        kind: 'http',
        status: err.status,
        code: parsed.value.error.code,
        message: redact(parsed.value.error.message, hidden),
        body: err.body ?? null,
      };
    }
  }
}
