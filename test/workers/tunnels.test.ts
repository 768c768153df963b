// The tunnel endpoints inside workerd against the stateful fake Cloudflare API: life cycle, idempotency, recovery.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProvisionResponse, parseWith, TunnelStatus } from '../../shared/protocol/index.js';
import {
  cloudflareApi,
  cloudflareHolds,
  connector,
  deleteTunnel,
  expectError,
  expectNothingLeft,
  LOAD_TUNNEL_ROUTES_TIMEOUT_MS,
  loadTunnelRoutes,
  newUserId,
  provision,
  referenceSubdomain,
  tunnelStatus,
} from './tunnels-fixtures.js';

async function provisioned(res: Response, status: 200 | 201): Promise<ProvisionResponse> {
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  const parsed = parseWith(ProvisionResponse, body);
  expect(parsed.ok, JSON.stringify(body)).toBe(true);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

async function statusOf(userId: string): Promise<TunnelStatus> {
  const res = await tunnelStatus(userId);
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  const parsed = parseWith(TunnelStatus, body);
  expect(parsed.ok, JSON.stringify(body)).toBe(true);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

beforeAll(loadTunnelRoutes, LOAD_TUNNEL_ROUTES_TIMEOUT_MS);

describe('tunnel life cycle', () => {
  it('provisions a remotely managed tunnel with its ingress, proxied CNAME and connector token', async () => {
    const userId = newUserId('life');
    const tunnel = await provisioned(await provision(userId), 201);
    const subdomain = await referenceSubdomain(userId);
    expect(tunnel.subdomain).toBe(subdomain);
    expect(tunnel.subdomain).toMatch(/^o-[a-z2-7]{16}$/);
    expect(tunnel.public_url).toBe(`https://${subdomain}.${env.TUNNEL_DOMAIN}`);

    const { tunnels, records } = await cloudflareHolds(subdomain);
    expect(tunnels).toHaveLength(1);
    expect(tunnels[0]).toMatchObject({ id: tunnel.tunnel_id, config_src: 'cloudflare', status: 'inactive' });
    // The catch-all rule carries no hostname at all: that is what the API accepts.
    expect(tunnels[0]?.config?.config).toEqual({
      ingress: [
        { hostname: `${subdomain}.${env.TUNNEL_DOMAIN}`, service: env.TUNNEL_ORIGIN_SERVICE },
        { service: 'http_status:404' },
      ],
    });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      type: 'CNAME',
      content: `${tunnel.tunnel_id}.cfargotunnel.com`,
      proxied: true,
    });
    // The connector token is the one Cloudflare issued for this tunnel.
    const decoded: unknown = JSON.parse(atob(tunnel.tunnel_token));
    expect(decoded).toMatchObject({ a: env.CLOUDFLARE_ACCOUNT_ID, t: tunnel.tunnel_id });

    // The KV record holds the ids but never the connector token.
    const stored = await env.GATEKEEPER_KV.get(`tunnel:${userId}`);
    expect(stored).not.toBeNull();
    expect(JSON.parse(stored ?? '{}')).toMatchObject({
      tunnel_id: tunnel.tunnel_id,
      subdomain,
      dns_record_id: records[0]?.id,
    });
    expect(stored).not.toContain(tunnel.tunnel_token);
  });

  it('moves provisioned → active ⇄ inactive → none, and the subdomain comes back on re-provision', async () => {
    const userId = newUserId('states');
    const first = await provisioned(await provision(userId), 201);

    const fresh = await statusOf(userId);
    expect(fresh).toMatchObject({
      tunnel_id: first.tunnel_id,
      subdomain: first.subdomain,
      public_url: first.public_url,
      state: 'provisioned',
      active: false,
      connections: 0,
    });

    await connector(first.tunnel_id, 4);
    expect(await statusOf(userId)).toMatchObject({ state: 'active', active: true, connections: 4 });

    await connector(first.tunnel_id, 1, 'degraded');
    expect(await statusOf(userId)).toMatchObject({ state: 'active', active: true, connections: 1 });

    await connector(first.tunnel_id, 0);
    expect(await statusOf(userId)).toMatchObject({ state: 'inactive', active: false, connections: 0 });

    await connector(first.tunnel_id, 2);
    const again = await statusOf(userId);
    expect(again).toMatchObject({ state: 'active', active: true, connections: 2 });
    expect(again.created_at).toBe(fresh.created_at);

    // Deleting a connected tunnel closes its connections first (Cloudflare refuses otherwise).
    const res = await deleteTunnel(userId);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    await expectNothingLeft(first.subdomain);
    expect(await env.GATEKEEPER_KV.get(`tunnel:${userId}`)).toBeNull();
    await expectError(await tunnelStatus(userId), 404, 'not_found');
    await expectError(await deleteTunnel(userId), 404, 'not_found');

    const second = await provisioned(await provision(userId), 201);
    expect(second.subdomain).toBe(first.subdomain);
    expect(second.public_url).toBe(first.public_url);
    expect(second.tunnel_id).not.toBe(first.tunnel_id);
    expect((await statusOf(userId)).state).toBe('provisioned');
  });

  it('answers 404 not_found for the status of a user who never provisioned', async () => {
    await expectError(await tunnelStatus(newUserId('never')), 404, 'not_found');
  });
});

describe('idempotent provisioning', () => {
  it('returns 200 with the same tunnel and token on a second call, creating nothing new', async () => {
    const userId = newUserId('twice');
    const first = await provisioned(await provision(userId), 201);
    const before = await cloudflareHolds(first.subdomain);

    const second = await provisioned(await provision(userId), 200);
    expect(second).toEqual(first);

    const after = await cloudflareHolds(first.subdomain);
    // docs/tunnels.md: six API calls for a new tunnel, four for a repeat, none of them a write.
    expect(before.calls.map((c) => c.route)).toEqual([
      'tunnel.list',
      'tunnel.create',
      'config.put',
      'dns.list',
      'dns.create',
      'token.get',
    ]);
    expect(after.calls.slice(before.calls.length).map((c) => c.route)).toEqual([
      'tunnel.get',
      'config.get',
      'dns.list',
      'token.get',
    ]);
    expect(after.tunnels).toHaveLength(1);
    expect(after.records).toHaveLength(1);
    expect(after.records[0]?.id).toBe(before.records[0]?.id);
    expect(after.calls.filter((c) => c.route === 'tunnel.create')).toHaveLength(1);
    expect(after.calls.filter((c) => c.route === 'dns.create')).toHaveLength(1);
    // An unchanged ingress is not rewritten (a rewrite would push a new config version to cloudflared).
    expect(after.tunnels[0]?.config?.version).toBe(before.tunnels[0]?.config?.version);
  });

  it('recovers the tunnel and DNS record from Cloudflare when the KV record was lost', async () => {
    const userId = newUserId('kvlost');
    const first = await provisioned(await provision(userId), 201);
    await env.GATEKEEPER_KV.delete(`tunnel:${userId}`);

    // Status finds the tunnel by its name even without the record.
    expect((await statusOf(userId)).tunnel_id).toBe(first.tunnel_id);

    const second = await provisioned(await provision(userId), 200);
    expect(second).toEqual(first);
    const { tunnels, records, calls } = await cloudflareHolds(first.subdomain);
    expect(tunnels).toHaveLength(1);
    expect(records).toHaveLength(1);
    expect(calls.filter((c) => c.route === 'tunnel.create')).toHaveLength(1);
    expect(JSON.parse((await env.GATEKEEPER_KV.get(`tunnel:${userId}`)) ?? '{}')).toMatchObject({
      tunnel_id: first.tunnel_id,
      dns_record_id: records[0]?.id,
    });
  });

  it('recreates a missing DNS record of an existing tunnel and keeps the tunnel', async () => {
    const userId = newUserId('nodns');
    const first = await provisioned(await provision(userId), 201);
    const [record] = (await cloudflareHolds(first.subdomain)).records;
    expect(
      (await cloudflareApi('DELETE', `/zones/${env.CLOUDFLARE_ZONE_ID}/dns_records/${record?.id}`)).status,
    ).toBe(200);

    const second = await provisioned(await provision(userId), 200);
    expect(second.tunnel_id).toBe(first.tunnel_id);
    const { records } = await cloudflareHolds(first.subdomain);
    expect(records).toHaveLength(1);
    expect(records[0]?.content).toBe(`${first.tunnel_id}.cfargotunnel.com`);
  });

  it('replaces a stale record whose tunnel was deleted outside the Gatekeeper', async () => {
    const userId = newUserId('stale');
    const first = await provisioned(await provision(userId), 201);
    const [record] = (await cloudflareHolds(first.subdomain)).records;
    const acct = env.CLOUDFLARE_ACCOUNT_ID;
    expect(
      (await cloudflareApi('DELETE', `/zones/${env.CLOUDFLARE_ZONE_ID}/dns_records/${record?.id}`)).status,
    ).toBe(200);
    expect((await cloudflareApi('DELETE', `/accounts/${acct}/cfd_tunnel/${first.tunnel_id}`)).status).toBe(
      200,
    );

    await expectError(await tunnelStatus(userId), 404, 'not_found');
    const second = await provisioned(await provision(userId), 201);
    expect(second.tunnel_id).not.toBe(first.tunnel_id);
    expect(second.subdomain).toBe(first.subdomain);
    const { tunnels, records } = await cloudflareHolds(first.subdomain);
    expect(tunnels.map((t) => t.id)).toEqual([second.tunnel_id]);
    expect(records.map((r) => r.content)).toEqual([`${second.tunnel_id}.cfargotunnel.com`]);
  });

  it('creates one tunnel for concurrent provisions of one user, and all of them get it', async () => {
    const userId = newUserId('race');
    const responses = await Promise.all(Array.from({ length: 4 }, () => provision(userId)));
    const bodies = await Promise.all(
      responses.map((res) => provisioned(res, res.status === 201 ? 201 : 200)),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(bodies.map((b) => b.tunnel_id)).size).toBe(1);
    expect(new Set(bodies.map((b) => b.tunnel_token)).size).toBe(1);
    const { tunnels, records } = await cloudflareHolds(bodies[0]?.subdomain ?? '');
    expect(tunnels).toHaveLength(1);
    expect(records).toHaveLength(1);
  });

  it('deletes the tunnel even when the KV record was lost', async () => {
    const userId = newUserId('kvdel');
    const first = await provisioned(await provision(userId), 201);
    await env.GATEKEEPER_KV.delete(`tunnel:${userId}`);
    expect((await deleteTunnel(userId)).status).toBe(204);
    await expectNothingLeft(first.subdomain);
  });
});
