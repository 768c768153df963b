// The member's Kick account link at the Gatekeeper (`/kick/connect`, `/kick/status`) as the daemon reads it,
// for the CLI and the dashboard; the events feed (edge-events.ts) asks it whether Kick is linked.
import type * as v from 'valibot';
import { ErrorBody } from '../../../../shared/protocol/errors.js';
import { parseWith } from '../../../../shared/protocol/index.js';
import { KickConnectAnswer, KickStatus } from '../../../../shared/protocol/kick-account.js';
import { errorMessage } from '../../errors.js';
import { FetchError, fetchJson, redact } from '../../http-client/fetch-json.js';

/** A failed call: `http` when the Gatekeeper answered with its error body, `network` otherwise. */
export type KickLinkFailure =
  | { ok: false; kind: 'http'; status: number; code: string; message: string }
  | { ok: false; kind: 'network'; message: string };
export type KickLinkResult<T> = { ok: true; value: T } | KickLinkFailure;

/** The member's Kick link at the Gatekeeper: connect (a URL to open), status, disconnect. */
export class KickLink {
  readonly baseUrl: string;
  readonly #fetch: typeof fetch | undefined;

  constructor(baseUrl: string, options: { fetch?: typeof fetch } = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#fetch = options.fetch;
  }

  status(token: string): Promise<KickLinkResult<KickStatus>> {
    return this.#request('GET', '/kick/status', token, KickStatus);
  }

  connect(token: string): Promise<KickLinkResult<{ url: string }>> {
    return this.#request('POST', '/kick/connect', token, KickConnectAnswer);
  }

  disconnect(token: string): Promise<KickLinkResult<null>> {
    return this.#request('DELETE', '/kick/connect', token, null);
  }

  async #request<S extends v.GenericSchema | null>(
    method: string,
    path: string,
    token: string,
    schema: S,
  ): Promise<KickLinkResult<S extends v.GenericSchema ? v.InferOutput<S> : null>> {
    type Out = S extends v.GenericSchema ? v.InferOutput<S> : null;
    try {
      const answer = await fetchJson(`${this.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
        ...(schema !== null ? { schema } : {}),
        timeoutMs: 15_000,
        secrets: [token],
        service: 'the Gatekeeper',
        ...(this.#fetch ? { fetch: this.#fetch } : {}),
      });
      return { ok: true, value: (schema === null ? null : answer.value) as Out };
    } catch (err) {
      if (!(err instanceof FetchError))
        return { ok: false, kind: 'network', message: redact(errorMessage(err), [token]) };
      if (err.status === undefined || err.code === 'bad_response')
        return { ok: false, kind: 'network', message: err.message };
      const parsed = parseWith(ErrorBody, err.body);
      return {
        ok: false,
        kind: 'http',
        status: err.status,
        code: parsed.ok ? parsed.value.error.code : `http_${err.status}`,
        message: parsed.ok ? redact(parsed.value.error.message, [token]) : `HTTP ${err.status}`,
      };
    }
  }
}
