// Provisioning, status and deletion of a user's tunnel (decisions §2): idempotent, safe under
// concurrent calls, and leaving nothing behind when a step fails half way.
//
// Cloudflare is the source of truth; the KV record is an index that can be lost and rebuilt.
// Every provision converges: find or create the tunnel `overlay-<subdomain>`, make its ingress
// what it should be, find or create the CNAME, fetch the connector token, store the record.
// Whatever this call created is deleted again if a later step fails (docs/tunnels.md).
import type { ProvisionResponse, TunnelStatus } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { ApiError } from '../errors.js';
import {
  CF_DNS_RECORD_EXISTS,
  CF_DUPLICATE_TUNNEL_NAME,
  type CloudflareApi,
  CloudflareApiError,
  cloudflareApi,
  type DnsRecordInfo,
  type IngressRule,
  type TunnelInfo,
} from './cloudflare-api.js';
import { HostnameTakenError, toHttpError } from './errors.js';
import { tunnelState } from './state.js';
import { type TunnelRecord, TunnelStore } from './store.js';
import { deriveSubdomain } from './subdomain.js';

export const DEFAULT_ORIGIN_SERVICE = 'http://localhost:7890';
/** Every tunnel answers hosts other than its own with 404 (cloudflared's catch-all rule). */
const CATCH_ALL: IngressRule = { service: 'http_status:404' };

interface TunnelSettings {
  /** TUNNEL_DOMAIN: the zone's domain (or a subdomain of it) under which tunnel hosts live. */
  domain: string;
  /** TUNNEL_ORIGIN_SERVICE: where cloudflared sends the traffic, on the streamer's machine. */
  originService: string;
  subdomainSecret: string;
}

/** The names a user's tunnel has everywhere, all derived from the user id. */
interface TunnelNames {
  userId: string;
  subdomain: string;
  hostname: string;
  tunnelName: string;
  publicUrl: string;
}

/** What this provision call created, so that a failure deletes exactly that. */
interface Created {
  tunnelId?: string;
  dnsRecordId?: string;
}

const cnameTarget = (tunnelId: string) => `${tunnelId}.cfargotunnel.com`;

const pointsAt = (record: DnsRecordInfo, tunnelId: string) =>
  record.type === 'CNAME' && record.content.toLowerCase() === cnameTarget(tunnelId);

/** The `comment` every CNAME we create carries; only such records are ever adopted or deleted as stale. */
const MANAGED_MARK = 'managed by the Gatekeeper';
const managedComment = (tunnelName: string) => `overlay tunnel ${tunnelName}; ${MANAGED_MARK}`;
const TUNNEL_TARGET = /^([0-9a-f-]{36})\.cfargotunnel\.com$/i;

function sameIngress(have: IngressRule[], want: IngressRule[]): boolean {
  return (
    have.length === want.length &&
    have.every(
      (rule, i) =>
        (rule.hostname ?? '') === (want[i]?.hostname ?? '') &&
        rule.service === want[i]?.service &&
        (rule.path ?? '') === (want[i]?.path ?? ''),
    )
  );
}

export class TunnelService {
  constructor(
    private readonly api: CloudflareApi,
    private readonly store: TunnelStore,
    private readonly settings: TunnelSettings,
  ) {}

  async names(userId: string): Promise<TunnelNames> {
    const subdomain = await deriveSubdomain(this.settings.subdomainSecret, userId);
    const hostname = `${subdomain}.${this.settings.domain}`;
    return {
      userId,
      subdomain,
      hostname,
      tunnelName: `overlay-${subdomain}`,
      publicUrl: `https://${hostname}`,
    };
  }

  /** `created` is true when this call made the tunnel (201), false when it already existed (200). */
  async provision(userId: string): Promise<{ created: boolean; response: ProvisionResponse }> {
    const names = await this.names(userId);
    const created: Created = {};
    try {
      const stored = await this.store.get(userId);
      const tunnel =
        (stored && (await this.api.getTunnel(stored.tunnel_id))) ||
        (await this.findTunnel(names.tunnelName)) ||
        (await this.createTunnel(names.tunnelName, created));
      await this.ensureIngress(tunnel.id, names, created.tunnelId === tunnel.id);
      const record = await this.ensureCname(tunnel.id, names, created);
      const token = await this.api.getConnectorToken(tunnel.id);
      const next: TunnelRecord = {
        user_id: userId,
        tunnel_id: tunnel.id,
        tunnel_name: names.tunnelName,
        subdomain: names.subdomain,
        hostname: names.hostname,
        dns_record_id: record.id,
        created_at: new Date(tunnel.created_at).toISOString(),
      };
      // KV allows one write a second per key: a repeated provision does not rewrite an unchanged record.
      if (JSON.stringify(stored) !== JSON.stringify(next)) await this.store.put(next);
      return {
        created: created.tunnelId !== undefined,
        response: {
          tunnel_id: tunnel.id,
          tunnel_token: token,
          public_url: names.publicUrl,
          subdomain: names.subdomain,
        },
      };
    } catch (err) {
      const clean = await this.rollback(created, names);
      throw toHttpError(err, clean ? 'rolled-back' : 'left-behind');
    }
  }

  async status(userId: string): Promise<TunnelStatus> {
    const names = await this.names(userId);
    try {
      const stored = await this.store.get(userId);
      const tunnel =
        (stored && (await this.api.getTunnel(stored.tunnel_id))) || (await this.findTunnel(names.tunnelName));
      if (!tunnel) {
        // The tunnel was deleted behind our back: the record points at nothing.
        if (stored) await this.store.delete(userId);
        throw new ApiError('not_found', 'This user has no tunnel');
      }
      const connections = await this.api.countConnections(tunnel.id);
      const state = tunnelState(tunnel);
      return {
        tunnel_id: tunnel.id,
        subdomain: names.subdomain,
        public_url: names.publicUrl,
        active: state === 'active',
        state,
        connections,
        created_at: new Date(stored?.created_at ?? tunnel.created_at).toISOString(),
      };
    } catch (err) {
      throw toHttpError(err, 'unchanged');
    }
  }

  /**
   * Deletes the DNS record first (the hostname stops routing), then the tunnel after closing its
   * connections (Cloudflare refuses to delete a connected tunnel), then the record. Each step is
   * idempotent, so a call that failed half way is finished by the next one.
   */
  async remove(userId: string): Promise<void> {
    const names = await this.names(userId);
    try {
      const stored = await this.store.get(userId);
      const tunnel =
        (stored && (await this.api.getTunnel(stored.tunnel_id))) || (await this.findTunnel(names.tunnelName));
      const tunnelIds = [...new Set([tunnel?.id, stored?.tunnel_id].filter((id) => id !== undefined))];
      const atHostname = await this.api.findDnsRecords(names.hostname);
      const stale = await this.staleManagedRecords(atHostname, tunnelIds);
      const records = atHostname.filter((r) => tunnelIds.some((id) => pointsAt(r, id)) || stale.includes(r));
      if (!stored && !tunnel && records.length === 0)
        throw new ApiError('not_found', 'This user has no tunnel');
      for (const record of records) await this.api.deleteDnsRecord(record.id);
      if (tunnel) {
        await this.api.clearConnections(tunnel.id);
        await this.api.deleteTunnel(tunnel.id);
      }
      await this.store.delete(userId);
    } catch (err) {
      throw toHttpError(err, 'resumable');
    }
  }

  /**
   * CNAMEs that we created (their comment says so) pointing at a tunnel that no longer exists: what a
   * rollback whose DNS delete failed leaves behind. They block nobody: provision re-points them, DELETE
   * removes them. A record of anyone else is never touched.
   */
  private async staleManagedRecords(
    records: DnsRecordInfo[],
    liveTunnelIds: string[],
  ): Promise<DnsRecordInfo[]> {
    const stale: DnsRecordInfo[] = [];
    for (const record of records) {
      const target = TUNNEL_TARGET.exec(record.content)?.[1]?.toLowerCase();
      if (record.type !== 'CNAME' || !target || !record.comment?.includes(MANAGED_MARK)) continue;
      if (liveTunnelIds.includes(target)) continue;
      if ((await this.api.getTunnel(target)) === null) stale.push(record);
    }
    return stale;
  }

  private async findTunnel(name: string): Promise<TunnelInfo | null> {
    const found = await this.api.findTunnels(name);
    // Names are unique among live tunnels; the oldest wins should that ever not hold.
    return found.sort((a, b) => a.created_at.localeCompare(b.created_at))[0] ?? null;
  }

  private async createTunnel(name: string, created: Created): Promise<TunnelInfo> {
    try {
      const tunnel = await this.api.createTunnel(name);
      created.tunnelId = tunnel.id;
      return tunnel;
    } catch (err) {
      if (!(err instanceof CloudflareApiError)) throw err;
      if (err.has(CF_DUPLICATE_TUNNEL_NAME)) {
        // A concurrent provision for the same user created it between our lookup and our create.
        const winner = await this.findTunnel(name);
        if (winner) return winner;
      } else if (err.ambiguous) {
        // The create may have happened although we saw no answer: if the tunnel exists now,
        // it is treated as ours so that the rollback removes it.
        const maybe = await this.findTunnel(name).catch(() => null);
        if (maybe) created.tunnelId = maybe.id;
      }
      throw err;
    }
  }

  private async ensureIngress(tunnelId: string, names: TunnelNames, isNew: boolean): Promise<void> {
    const want: IngressRule[] = [
      { hostname: names.hostname, service: this.settings.originService },
      CATCH_ALL,
    ];
    // A tunnel that already existed keeps its configuration (and version) when it is already right.
    if (!isNew && sameIngress(await this.api.getIngress(tunnelId), want)) return;
    await this.api.putIngress(tunnelId, want);
  }

  private async ensureCname(tunnelId: string, names: TunnelNames, created: Created): Promise<DnsRecordInfo> {
    const lookup = async () => {
      const records = await this.api.findDnsRecords(names.hostname);
      const ours = records.find((r) => pointsAt(r, tunnelId));
      if (ours) return ours;
      // Adopt what an earlier failed rollback left: the stale record goes, a fresh one points here.
      const stale = await this.staleManagedRecords(records, [tunnelId]);
      for (const record of stale) await this.api.deleteDnsRecord(record.id);
      if (records.length > stale.length) {
        throw new HostnameTakenError(
          `${names.hostname} already has a DNS record that does not point at this tunnel`,
        );
      }
      return null;
    };
    const existing = await lookup();
    if (existing) return existing;
    try {
      const record = await this.api.createCname(
        names.hostname,
        cnameTarget(tunnelId),
        managedComment(names.tunnelName),
      );
      created.dnsRecordId = record.id;
      return record;
    } catch (err) {
      if (!(err instanceof CloudflareApiError)) throw err;
      if (err.has(CF_DNS_RECORD_EXISTS)) {
        // Created since our lookup: by a concurrent provision of this user (fine), or by someone else (conflict).
        const now = await lookup();
        if (now) return now;
      } else if (err.ambiguous) {
        const maybe = await lookup().catch(() => null);
        if (maybe) created.dnsRecordId = maybe.id;
      }
      throw err;
    }
  }

  /**
   * Best effort, newest first; a rollback failure is logged and the original error still answers.
   * True when everything this call created is gone again.
   */
  private async rollback(created: Created, names: TunnelNames): Promise<boolean> {
    let clean = true;
    if (created.dnsRecordId) {
      await this.api.deleteDnsRecord(created.dnsRecordId).catch((err) => {
        clean = false;
        console.error(`rollback: DNS record ${names.hostname} left behind`, err);
      });
    }
    if (created.tunnelId) {
      await this.api.deleteTunnel(created.tunnelId).catch((err) => {
        clean = false;
        console.error(`rollback: tunnel ${names.tunnelName} left behind`, err);
      });
    }
    return clean;
  }
}

export function tunnelService(env: GatekeeperEnv): TunnelService {
  if (!env.TUNNEL_DOMAIN) throw new Error('TUNNEL_DOMAIN is not set');
  return new TunnelService(cloudflareApi(env), new TunnelStore(env.GATEKEEPER_KV), {
    domain: env.TUNNEL_DOMAIN.toLowerCase(),
    originService: env.TUNNEL_ORIGIN_SERVICE || DEFAULT_ORIGIN_SERVICE,
    subdomainSecret: env.SUBDOMAIN_SECRET,
  });
}
