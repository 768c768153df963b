// A rollback whose DNS delete failed leaves a CNAME at a deleted tunnel: it must not lock the member out.
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cloudflareApi,
  cloudflareHolds,
  deleteTunnel,
  expectError,
  expectNothingLeft,
  injectFailure,
  LOAD_TUNNEL_ROUTES_TIMEOUT_MS,
  loadTunnelRoutes,
  newUserId,
  provision,
  referenceSubdomain,
} from './tunnels-fixtures.js';

beforeAll(loadTunnelRoutes, LOAD_TUNNEL_ROUTES_TIMEOUT_MS);

/** Every attempt of an idempotent call (the first and two retries). */
const ALL_ATTEMPTS = 3;

/** Provision fails after the CNAME exists, and the rollback deletes the tunnel but not the CNAME. */
async function leaveStaleCname(label: string) {
  const userId = newUserId(label);
  const subdomain = await referenceSubdomain(userId);
  await injectFailure(subdomain, { route: 'token.get', status: 500, count: ALL_ATTEMPTS });
  await injectFailure(subdomain, { route: 'dns.delete', status: 500, count: ALL_ATTEMPTS });
  await expectError(await provision(userId), 502, 'upstream_error');
  const { tunnels, records } = await cloudflareHolds(subdomain);
  expect(tunnels, 'the rollback deleted the tunnel').toEqual([]);
  expect(records, 'the CNAME the rollback failed to delete').toHaveLength(1);
  return { userId, subdomain, stale: records[0] };
}

describe('a CNAME left by a failed rollback', () => {
  it('is adopted by the next provision: 201, one tunnel, one CNAME pointing at it', async () => {
    const { userId, subdomain, stale } = await leaveStaleCname('adopt');
    const res = await provision(userId);
    expect(res.status).toBe(201);
    const body: { tunnel_id: string } = await res.json();
    const { tunnels, records } = await cloudflareHolds(subdomain);
    expect(tunnels.map((t) => t.id)).toEqual([body.tunnel_id]);
    expect(records).toHaveLength(1);
    expect(records[0]?.content).toBe(`${body.tunnel_id}.cfargotunnel.com`);
    expect(records[0]?.content).not.toBe(stale?.content);
  });

  it('is deleted by DELETE: 204, nothing left, and a provision afterwards works', async () => {
    const { userId, subdomain } = await leaveStaleCname('delete');
    expect((await deleteTunnel(userId)).status).toBe(204);
    await expectNothingLeft(subdomain);
    expect((await provision(userId)).status).toBe(201);
  });

  it('when the tunnel delete of the rollback failed too, the next provision heals both', async () => {
    const userId = newUserId('both');
    const subdomain = await referenceSubdomain(userId);
    await injectFailure(subdomain, { route: 'token.get', status: 500, count: ALL_ATTEMPTS });
    await injectFailure(subdomain, { route: 'dns.delete', status: 500, count: ALL_ATTEMPTS });
    await injectFailure(subdomain, { route: 'tunnel.delete', status: 500, count: ALL_ATTEMPTS });
    await expectError(await provision(userId), 502, 'upstream_error');
    expect((await provision(userId)).status).toBe(200);
    const { tunnels, records } = await cloudflareHolds(subdomain);
    expect(tunnels).toHaveLength(1);
    expect(records).toHaveLength(1);
  });

  it("is never adopted when someone else's record holds the hostname: 409", async () => {
    const userId = newUserId('foreign');
    const subdomain = await referenceSubdomain(userId);
    const { records: before } = await cloudflareHolds(subdomain);
    expect(before).toEqual([]);
    // A record made by hand, without the Gatekeeper's comment, at a tunnel id that does not exist.
    const made = await cloudflareApi('POST', `/zones/${env.CLOUDFLARE_ZONE_ID}/dns_records`, {
      type: 'CNAME',
      name: `${subdomain}.${env.TUNNEL_DOMAIN}`,
      content: '00000000-0000-4000-8000-000000000000.cfargotunnel.com',
      comment: 'made by hand',
    });
    expect(made.ok).toBe(true);
    await expectError(await provision(userId), 409, 'conflict');
    expect((await cloudflareHolds(subdomain)).records).toHaveLength(1);
  });
});
