// One outbound HTTP request, made the same way for every API the daemon calls: a timeout, the answer's
// JSON checked by a schema through the shared parser, the status mapped to one error code, redirects not
// followed, the answer's size bounded, and the caller's secrets never in a message.
import type * as v from 'valibot';
import { NOT_JSON, parseJsonWith } from '../../../shared/protocol/index.js';
import { formatWait } from '../../../shared/timers.js';
import { DaemonError, type DaemonErrorCode, errorMessage } from '../errors.js';
import type { TimerHandle, Timers } from '../timers.js';

/** How long a request may take, answer included, unless the call says otherwise. */
export const DEFAULT_TIMEOUT_MS = 5000;
/** A larger answer is refused (`bad_response`) and read no further. */
export const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
/** Of an error answer only this much is read: enough for any error body. */
const ERROR_BODY_MAX_BYTES = 64 * 1024;
/** A reason quoted from an error answer is cut to this many characters. */
const REASON_MAX = 200;

/** The codes a request can fail with: a subset of the daemon's one list. */
export type FetchErrorCode = Extract<
  DaemonErrorCode,
  | 'timeout'
  | 'unreachable'
  | 'aborted'
  | 'redirected'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'rejected'
  | 'upstream_error'
  | 'bad_response'
>;

interface FetchErrorDetails {
  status?: number;
  body?: unknown;
  headers?: Headers;
  retryAfterMs?: number;
  field?: string;
}

/** A request that failed. Its message and `reason` carry no secret of the call. */
export class FetchError extends DaemonError {
  declare readonly code: FetchErrorCode;
  /** The HTTP status, when there was an answer. */
  readonly status: number | undefined;
  /**
   * An error answer's JSON (undefined when it was not JSON), for the caller to read a platform's own
   * error code from. It is the other side's text: redact it before it goes into a message.
   */
  readonly body: unknown;
  /** The answer's headers, when there was an answer. */
  readonly headers: Headers | undefined;
  /** `rate_limited`: the wait the answer's Retry-After asks for. */
  readonly retryAfterMs: number | undefined;
  /** `bad_response`: the field of the answer at fault (`data.0.id`), when one is. */
  readonly field: string | undefined;

  constructor(
    code: FetchErrorCode,
    message: string,
    /** Why in a few words, without the service's name: `ECONNREFUSED`, `invalid client`, `data.0.id: …`. */
    readonly reason: string,
    details: FetchErrorDetails = {},
  ) {
    super(code, message);
    this.name = 'FetchError';
    this.status = details.status;
    this.body = details.body;
    this.headers = details.headers;
    this.retryAfterMs = details.retryAfterMs;
    this.field = details.field;
  }
}

export interface FetchJsonOptions<S extends v.GenericSchema | undefined> {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON, with `Content-Type: application/json` unless `headers` name a type. */
  json?: unknown;
  /** Sent as a form (`application/x-www-form-urlencoded`). */
  form?: Record<string, string>;
  /** Sent as it is (text, or bytes such as a media file). */
  body?: string | Uint8Array;
  /** Checks a 2xx answer's JSON. Without one the answer's body is not read and `value` is undefined. */
  schema?: S;
  /** Default 5 s; covers the answer's body too. */
  timeoutMs?: number;
  /** When given, the timeout runs on these (a fake clock in tests) rather than AbortSignal.timeout. */
  timers?: Timers;
  /** The caller's cancel: an aborted signal fails the request with `aborted`. */
  signal?: AbortSignal;
  /**
   * What the call must never show: tokens, keys, client secrets. Each (and its URL-encoded form) is
   * replaced by `[redacted]` in every message, as are query values of `key=`, `token=` and the like, and
   * the values of credential headers (`Authorization`, `X-Api-Key`, any name with token, key or secret).
   */
  secrets?: readonly (string | undefined)[];
  /** What messages call the other side ("Twitch's API"); the URL's origin by default. */
  service?: string;
  /** Default 8 MiB. */
  maxBytes?: number;
  fetch?: typeof fetch;
}

export interface FetchJsonAnswer<T> {
  status: number;
  headers: Headers;
  value: T;
}

type ValueOf<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined;

/** Query parameters whose values are credentials wherever they appear (a value ends before `:` or `.` closing a sentence). */
const SECRET_PARAMS =
  /\b((?:key|api_key|apikey|token|access_token|refresh_token|id_token|client_secret|secret|password|code|code_verifier|device_code|signature|sig)=)[^&#\s"'<>),;]*[^&#\s"'<>),;:.]/gi;
/** Headers whose values are credentials. */
const CREDENTIAL_HEADER = /^(?:authorization|proxy-authorization|cookie)$|token|secret|key|password|auth/i;

/** The values of credential headers, and the credential of `Bearer <token>`-like ones on its own. */
function credentialsIn(headers: Record<string, string> | undefined): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!CREDENTIAL_HEADER.test(name)) continue;
    found.push(value);
    const scheme = /^\S+\s+(\S+)$/.exec(value.trim());
    if (scheme?.[1]) found.push(scheme[1]);
  }
  return found;
}

/** A shorter "secret" would blank out ordinary words of a message. */
const MIN_SECRET_LENGTH = 4;

/** `text` with each secret (as given and URL-encoded) and every credential-like query value replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(new URLSearchParams({ s: secret }).toString().slice(2));
  }
  // Longest first, so a secret inside another one cannot leave the rest of the longer one behind.
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join('[redacted]');
  return out.replace(SECRET_PARAMS, '$1[redacted]');
}

/** The code an error status means. */
export function codeOfStatus(status: number): FetchErrorCode {
  if (status >= 300 && status < 400) return 'redirected';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'upstream_error';
  return 'rejected';
}

/**
 * One request; resolves with a 2xx answer (its JSON checked by `schema`), or rejects with a FetchError:
 * `timeout`, `unreachable`, `aborted`, `bad_response`, or the code of the status (`codeOfStatus`).
 */
export async function fetchJson<S extends v.GenericSchema | undefined = undefined>(
  url: string,
  options: FetchJsonOptions<S> = {},
): Promise<FetchJsonAnswer<ValueOf<S>>> {
  const secrets = [...(options.secrets ?? []), ...credentialsIn(options.headers)];
  const service = options.service ?? originOf(url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fail = (code: FetchErrorCode, message: string, reason: string, details?: FetchErrorDetails) =>
    new FetchError(code, redact(message, secrets), redact(reason, secrets), details);

  const timeout = startTimeout(timeoutMs, options.timers);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  /** Why a request or its answer broke off: the caller's cancel, the timeout, or the network. */
  const broken = (err: unknown): FetchError => {
    if (err instanceof FetchError) return err;
    if (options.signal?.aborted) {
      const why = options.signal.reason instanceof Error ? options.signal.reason.message : 'cancelled';
      return fail('aborted', `the request to ${service} was cancelled: ${why}`, why);
    }
    if (timeout.signal.aborted) {
      const why = `no answer within ${formatWait(timeoutMs)}`;
      return fail('timeout', `${service} gave ${why}`, why);
    }
    const why = networkReason(err);
    return fail('unreachable', `cannot reach ${service}: ${why}`, why);
  };

  const headers: Record<string, string> = { ...options.headers };
  let body: string | URLSearchParams | Uint8Array | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    if (!hasHeader(headers, 'content-type')) headers['Content-Type'] = 'application/json';
  } else if (options.form) {
    body = new URLSearchParams(options.form);
  }
  if (options.schema && !hasHeader(headers, 'accept')) headers.Accept = 'application/json';

  try {
    let res: Response;
    try {
      res = await (options.fetch ?? fetch)(url, {
        method: options.method ?? (body === undefined ? 'GET' : 'POST'),
        headers,
        ...(body !== undefined ? { body } : {}),
        // A redirect could carry a token to another host; every API the daemon calls answers in place.
        redirect: 'manual',
        signal,
      });
    } catch (err) {
      throw broken(err);
    }
    const status = res.status;
    if (status >= 300 && status < 400) {
      await res.body?.cancel().catch(() => {});
      throw fail(
        'redirected',
        `${service} answered HTTP ${status} (redirects are not followed)`,
        `HTTP ${status} (redirects are not followed)`,
        { status, headers: res.headers },
      );
    }
    if (!res.ok) {
      // The error body is read if it comes in time; the status says what happened either way.
      const text = await readText(res, ERROR_BODY_MAX_BYTES).catch(() => '');
      const answer = jsonOrUndefined(text);
      const said = reasonIn(answer);
      const reason = said ? `HTTP ${status}: ${said}` : `HTTP ${status}`;
      const retryAfterMs = status === 429 ? retryAfter(res.headers.get('retry-after')) : undefined;
      throw fail(codeOfStatus(status), `${service} answered ${reason}`, reason, {
        status,
        body: answer,
        headers: res.headers,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    if (!options.schema) {
      await res.body?.cancel().catch(() => {});
      return { status, headers: res.headers, value: undefined as ValueOf<S> };
    }
    let text: string;
    try {
      text = await readText(res, options.maxBytes ?? DEFAULT_MAX_BYTES);
    } catch (err) {
      if (err instanceof TooLarge) {
        const why = `the answer is larger than ${err.max} bytes`;
        throw fail('bad_response', `${service}: ${why}`, why, { status, headers: res.headers });
      }
      throw broken(err);
    }
    const parsed = parseJsonWith(options.schema, text);
    if (!parsed.ok) {
      const why = parsed.error === NOT_JSON ? 'the answer is not JSON' : parsed.error;
      throw fail('bad_response', `${service}'s answer is not understood: ${why}`, why, {
        status,
        headers: res.headers,
        ...(parsed.field !== undefined ? { field: parsed.field } : {}),
      });
    }
    return { status, headers: res.headers, value: parsed.value as ValueOf<S> };
  } finally {
    timeout.clear();
  }
}

function startTimeout(ms: number, timers: Timers | undefined): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  if (!timers) {
    // Not AbortSignal.timeout: its timer cannot be cleared, and would outlive every answered call.
    const timer = setTimeout(
      () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
      ms,
    ).unref();
    return { signal: controller.signal, clear: () => clearTimeout(timer) };
  }
  const handle: TimerHandle = timers.setTimeout(
    () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
    ms,
  );
  return { signal: controller.signal, clear: () => timers.clearTimeout(handle) };
}

class TooLarge extends Error {
  constructor(readonly max: number) {
    super(`larger than ${max} bytes`);
  }
}

/** The answer's text, refused past `max` bytes (declared or streamed). */
async function readText(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body.cancel().catch(() => {});
    throw new TooLarge(max);
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw new TooLarge(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function jsonOrUndefined(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The message an error answer gives, in the shapes APIs use: `{message}` (Twitch),
 * `{error: {message}}` (Google, the Gatekeeper), `{error_description}`, `{error: "..."}`.
 */
function reasonIn(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const record = answer as Record<string, unknown>;
  const nested =
    typeof record.error === 'object' && record.error !== null
      ? (record.error as Record<string, unknown>).message
      : undefined;
  const said = [nested, record.message, record.error_description, record.error].find(
    (candidate): candidate is string => typeof candidate === 'string' && candidate.trim() !== '',
  );
  return said === undefined ? undefined : oneLine(said).slice(0, REASON_MAX);
}

function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/** Retry-After in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfter(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/** fetch says only "fetch failed"; its cause says why (ECONNREFUSED: nothing listens there). */
function networkReason(err: unknown): string {
  const cause =
    err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string' && cause.message) return cause.message;
  return errorMessage(err);
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the server';
  }
}
