// The Worker's edge to the Cloudflare API (tunnels and DNS records) through the official SDK.
//
// Everything the API answers is validated here and handed on as plain data; every failure
// becomes a CloudflareApiError. Retries are deliberate (see docs/tunnels.md, "Retries"):
// the client retries nothing by default, because the SDK's default retries 409 (which on
// tunnel create means "that name exists") and would replay a POST whose first attempt may
// have succeeded. Reads, PUTs and DELETEs, which are idempotent, opt in per call.
import * as v from 'valibot';
import { parseWith } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';

/** Per attempt. The API answers tunnel and DNS calls in well under a second; 5 s is a stuck call. */
const CLOUDFLARE_TIMEOUT_MS = 5_000;
/** Attempts after the first, for idempotent calls only (reads, PUT, DELETE). */
const IDEMPOTENT_RETRIES = 2;
const DEFAULT_API_BASE = 'https://api.cloudflare.com/client/v4';
/** The longest `Retry-After` of a 429 that is waited out; a longer one fails the call at once (502). */
const MAX_RETRY_AFTER_SECONDS = 2;

/** API error codes the tunnel logic branches on (both are the real API's). */
export const CF_DUPLICATE_TUNNEL_NAME = 1013;
export const CF_DNS_RECORD_EXISTS = 81053;

const nullableString = v.nullish(v.string(), null);

const TunnelInfo = v.object({
  id: v.pipe(v.string(), v.uuid()),
  name: v.string(),
  status: v.optional(v.picklist(['inactive', 'degraded', 'healthy', 'down']), 'inactive'),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  deleted_at: nullableString,
  conns_active_at: nullableString,
  conns_inactive_at: nullableString,
});
export type TunnelInfo = v.InferOutput<typeof TunnelInfo>;

const DnsRecordInfo = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  type: v.string(),
  name: v.string(),
  content: v.optional(v.string(), ''),
  comment: v.nullish(v.string(), null),
});
export type DnsRecordInfo = v.InferOutput<typeof DnsRecordInfo>;

const IngressRule = v.object({
  hostname: v.optional(v.string()),
  service: v.string(),
  path: v.optional(v.string()),
});
export type IngressRule = v.InferOutput<typeof IngressRule>;

const TunnelConfig = v.object({
  config: v.nullish(v.object({ ingress: v.optional(v.array(IngressRule), []) }), null),
});

const Connectors = v.array(v.object({ conns: v.optional(v.array(v.unknown()), []) }));
const ConnectorToken = v.pipe(v.string(), v.minLength(1));

export type FailureKind = 'status' | 'timeout' | 'connection' | 'invalid_response';

/** Any failed call: an HTTP error with the API's error codes, a timeout, or an answer we cannot read. */
export class CloudflareApiError extends Error {
  constructor(
    readonly kind: FailureKind,
    /** Our own name of the call that failed (`create DNS record`); the message adds Cloudflare's detail. */
    readonly step: string,
    detail: string,
    readonly status?: number,
    readonly codes: readonly number[] = [],
  ) {
    super(`${step}: ${detail}`);
  }

  has(code: number): boolean {
    return this.codes.includes(code);
  }

  /** The call may have taken effect at Cloudflare although we saw no success. */
  get ambiguous(): boolean {
    return this.kind === 'timeout' || this.kind === 'connection' || (this.status ?? 0) >= 500;
  }
}

/** The operations the tunnel service needs, in plain data. */
export interface CloudflareApi {
  createTunnel(name: string): Promise<TunnelInfo>;
  findTunnels(name: string): Promise<TunnelInfo[]>;
  /** `null` when the tunnel does not exist or was deleted. */
  getTunnel(id: string): Promise<TunnelInfo | null>;
  /** Deleting a tunnel that is already gone succeeds. */
  deleteTunnel(id: string): Promise<void>;
  getIngress(id: string): Promise<IngressRule[]>;
  putIngress(id: string, ingress: IngressRule[]): Promise<void>;
  getConnectorToken(id: string): Promise<string>;
  countConnections(id: string): Promise<number>;
  clearConnections(id: string): Promise<void>;
  findDnsRecords(name: string): Promise<DnsRecordInfo[]>;
  createCname(name: string, target: string, comment: string): Promise<DnsRecordInfo>;
  /** Deleting a record that is already gone succeeds. */
  deleteDnsRecord(id: string): Promise<void>;
}

/**
 * The SDK is imported on the first tunnel call, not at start-up: its client module imports every
 * API resource, which costs start-up time on routes that never call Cloudflare. Only the resources
 * used here are attached (`createClient`), which keeps the bundle small (docs/tunnels.md).
 */
async function loadSdk() {
  const [
    { createClient },
    errors,
    { BaseRecords },
    { BaseCloudflared },
    { Configurations },
    { Connections },
    { Token },
  ] = await Promise.all([
    import('cloudflare/tree-shakable'),
    import('cloudflare/core/error'),
    import('cloudflare/resources/dns/records'),
    import('cloudflare/resources/zero-trust/tunnels/cloudflared/cloudflared'),
    import('cloudflare/resources/zero-trust/tunnels/cloudflared/configurations'),
    import('cloudflare/resources/zero-trust/tunnels/cloudflared/connections'),
    import('cloudflare/resources/zero-trust/tunnels/cloudflared/token'),
  ]);
  const newClient = (env: GatekeeperEnv) =>
    createClient({
      apiToken: env.CLOUDFLARE_API_TOKEN,
      baseURL: env.CLOUDFLARE_API_BASE || DEFAULT_API_BASE,
      maxRetries: 0,
      timeout: CLOUDFLARE_TIMEOUT_MS,
      logLevel: 'off',
      fetch: fetchWithBoundedRetryAfter,
      resources: [BaseCloudflared, Configurations, Connections, Token, BaseRecords],
    });
  return { newClient, errors };
}

/**
 * The SDK sleeps for whatever `Retry-After` a 429 asks before retrying, unbounded; a user waiting
 * on a provision is better served by a quick 502 than by a request held open for a minute. The SDK
 * obeys `x-should-retry: false`, so a longer wait is turned into "do not retry".
 */
async function fetchWithBoundedRetryAfter(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const res = await fetch(input, init);
  const retryAfter = res.status === 429 ? res.headers.get('retry-after') : null;
  if (retryAfter === null) return res;
  const seconds = /^\d+$/.test(retryAfter.trim())
    ? Number(retryAfter)
    : (Date.parse(retryAfter) - Date.now()) / 1000;
  if (seconds <= MAX_RETRY_AFTER_SECONDS) return res;
  const headers = new Headers(res.headers);
  headers.set('x-should-retry', 'false');
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;
type SdkClient = ReturnType<Sdk['newClient']>;
let sdk: Promise<Sdk> | undefined;

function toApiError({ errors }: Sdk, err: unknown, what: string): CloudflareApiError {
  if (err instanceof CloudflareApiError) return err;
  if (err instanceof errors.APIConnectionTimeoutError) {
    return new CloudflareApiError('timeout', what, 'timed out');
  }
  if (err instanceof errors.APIError && err.status !== undefined) {
    const codes = err.errors.flatMap((e) => (typeof e.code === 'number' ? [e.code] : []));
    const detail = err.errors.map((e) => `${e.code ?? '?'} ${e.message ?? ''}`.trim()).join('; ');
    return new CloudflareApiError('status', what, `HTTP ${err.status} ${detail}`.trim(), err.status, codes);
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new CloudflareApiError('connection', what, reason);
}

function parsed<S extends v.GenericSchema>(what: string, schema: S, data: unknown): v.InferOutput<S> {
  const result = parseWith(schema, data);
  if (!result.ok)
    throw new CloudflareApiError('invalid_response', what, `unexpected answer (${result.error})`);
  return result.value;
}

const isNotFound = (err: CloudflareApiError) => err.status === 404;

const idempotent = { maxRetries: IDEMPOTENT_RETRIES };

/** How the calls below reach the SDK. */
interface Caller {
  /** Runs one SDK call; whatever it throws comes out as a CloudflareApiError naming the step. */
  call<T>(what: string, run: (client: SdkClient) => Promise<T>): Promise<T>;
  /** As `call`, and a 404 (already gone) is a success. */
  ignoreNotFound(what: string, run: (client: SdkClient) => Promise<unknown>): Promise<void>;
}

function sdkCaller(env: GatekeeperEnv): Caller {
  let client: SdkClient | undefined;

  const call = async <T>(what: string, run: (client: SdkClient) => Promise<T>): Promise<T> => {
    sdk ??= loadSdk();
    const loaded = await sdk;
    client ??= loaded.newClient(env);
    try {
      return await run(client);
    } catch (err) {
      throw toApiError(loaded, err, what);
    }
  };

  const ignoreNotFound = async (
    what: string,
    run: (client: SdkClient) => Promise<unknown>,
  ): Promise<void> => {
    try {
      await call(what, run);
    } catch (err) {
      if (err instanceof CloudflareApiError && isNotFound(err)) return;
      throw err;
    }
  };

  return { call, ignoreNotFound };
}

type TunnelCalls = Omit<CloudflareApi, 'findDnsRecords' | 'createCname' | 'deleteDnsRecord'>;
type DnsCalls = Pick<CloudflareApi, 'findDnsRecords' | 'createCname' | 'deleteDnsRecord'>;

/** The account's tunnels: the tunnel itself, its ingress, its connector token and connections. */
function tunnelCalls({ call, ignoreNotFound }: Caller, account_id: string): TunnelCalls {
  return {
    async createTunnel(name) {
      // `config_src: cloudflare` makes it remotely managed: ingress lives at Cloudflare (decisions §2).
      const tunnel = await call('create tunnel', (c) =>
        c.zeroTrust.tunnels.cloudflared.create({ account_id, name, config_src: 'cloudflare' }),
      );
      return parsed('create tunnel', TunnelInfo, tunnel);
    },

    async findTunnels(name) {
      const page = await call('list tunnels', (c) =>
        c.zeroTrust.tunnels.cloudflared.list(
          { account_id, name, is_deleted: false, per_page: 50 },
          idempotent,
        ),
      );
      return parsed('list tunnels', v.array(TunnelInfo), page.result).filter(
        (t) => t.name === name && !t.deleted_at,
      );
    },

    async getTunnel(id) {
      try {
        const tunnel = await call('get tunnel', (c) =>
          c.zeroTrust.tunnels.cloudflared.get(id, { account_id }, idempotent),
        );
        const info = parsed('get tunnel', TunnelInfo, tunnel);
        return info.deleted_at ? null : info;
      } catch (err) {
        if (err instanceof CloudflareApiError && isNotFound(err)) return null;
        throw err;
      }
    },

    async deleteTunnel(id) {
      await ignoreNotFound('delete tunnel', (c) =>
        c.zeroTrust.tunnels.cloudflared.delete(id, { account_id }, idempotent),
      );
    },

    async getIngress(id) {
      const result = await call('get tunnel configuration', (c) =>
        c.zeroTrust.tunnels.cloudflared.configurations.get(id, { account_id }, idempotent),
      );
      return parsed('get tunnel configuration', TunnelConfig, result).config?.ingress ?? [];
    },

    async putIngress(id, ingress) {
      // The API wants the catch-all rule without a hostname, but the SDK's type requires one on
      // every rule; the SDK's documented `body` request option sends the body exactly as the API
      // expects (the hostname is left out, not sent as "").
      await call('set tunnel configuration', (c) =>
        c.zeroTrust.tunnels.cloudflared.configurations.update(
          id,
          { account_id },
          { ...idempotent, body: { config: { ingress } } },
        ),
      );
    },

    async getConnectorToken(id) {
      const token = await call('get tunnel token', (c) =>
        c.zeroTrust.tunnels.cloudflared.token.get(id, { account_id }, idempotent),
      );
      return parsed('get tunnel token', ConnectorToken, token);
    },

    async countConnections(id) {
      const page = await call('list tunnel connections', (c) =>
        c.zeroTrust.tunnels.cloudflared.connections.get(id, { account_id }, idempotent),
      );
      const connectors = parsed('list tunnel connections', Connectors, page.result);
      return connectors.reduce((n, connector) => n + connector.conns.length, 0);
    },

    async clearConnections(id) {
      await ignoreNotFound('clear tunnel connections', (c) =>
        c.zeroTrust.tunnels.cloudflared.connections.delete(id, { account_id }, idempotent),
      );
    },
  };
}

/** The zone's DNS records of tunnel hostnames. */
function dnsCalls({ call, ignoreNotFound }: Caller, zone_id: string): DnsCalls {
  return {
    async findDnsRecords(name) {
      const page = await call('list DNS records', (c) =>
        c.dns.records.list({ zone_id, name: { exact: name }, per_page: 50 }, idempotent),
      );
      return parsed('list DNS records', v.array(DnsRecordInfo), page.result).filter(
        (r) => r.name.toLowerCase() === name.toLowerCase(),
      );
    },

    async createCname(name, target, comment) {
      // TTL 1 means "automatic", the only TTL a proxied record has.
      const record = await call('create DNS record', (c) =>
        c.dns.records.create({
          zone_id,
          type: 'CNAME',
          name,
          content: target,
          proxied: true,
          ttl: 1,
          comment,
        }),
      );
      return parsed('create DNS record', DnsRecordInfo, record);
    },

    async deleteDnsRecord(id) {
      await ignoreNotFound('delete DNS record', (c) => c.dns.records.delete(id, { zone_id }, idempotent));
    },
  };
}

export function cloudflareApi(env: GatekeeperEnv): CloudflareApi {
  const caller = sdkCaller(env);
  return {
    ...tunnelCalls(caller, env.CLOUDFLARE_ACCOUNT_ID),
    ...dnsCalls(caller, env.CLOUDFLARE_ZONE_ID),
  };
}
