// HTTP client for the Gatekeeper's licence and tunnel routes (interface §4.1, decisions §2); never throws.
import * as v from 'valibot';
import { type RemoteConfig, RemoteConfig as RemoteConfigSchema } from '../../../shared/config.js';
import {
  ErrorBody,
  ExchangeResponse,
  Health,
  ProvisionResponse,
  parseJsonWith,
  TunnelStatus,
  ValidateResponse,
} from '../../../shared/protocol/index.js';

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
    { token, body }: { token?: string; body?: unknown },
  ): Promise<GatekeeperResult<S extends v.GenericSchema ? v.InferOutput<S> : null>> {
    type Out = S extends v.GenericSchema ? v.InferOutput<S> : null;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await this.#fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
        redirect: 'error',
      });
      text = await res.text();
    } catch (err) {
      return { ok: false, kind: 'network', message: `${method} ${path}: ${describe(err)}` };
    }
    if (!res.ok) {
      const parsed = parseJsonWith(ErrorBody, text);
      if (!parsed.ok) {
        // A proxy's HTML error page or a 5xx without our body: the Gatekeeper itself gave no verdict.
        return { ok: false, kind: 'network', message: `${method} ${path}: HTTP ${res.status}` };
      }
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {}
      return { ok: false, kind: 'http', status: res.status, ...parsed.value.error, body: json };
    }
    if (schema === null) return { ok: true, status: res.status, value: null as Out };
    const parsed = parseJsonWith(schema, text);
    if (!parsed.ok) {
      return {
        ok: false,
        kind: 'network',
        message: `${method} ${path}: unexpected response (${parsed.error})`,
      };
    }
    return { ok: true, status: res.status, value: parsed.value as Out };
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return err.name === 'TimeoutError' ? 'timed out' : `${err.message}${cause}`;
  }
  return String(err);
}
