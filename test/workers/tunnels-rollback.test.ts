// Failures at every step of provisioning and deletion: rolled back, nothing orphaned, retries as designed.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MembershipRecheck } from '../../workers/src/member.js';
import {
  cloudflareApi,
  cloudflareHolding,
  cloudflareHolds,
  deleteTunnel,
  expectError,
  expectNothingLeft,
  type FailureSpec,
  injectFailure,
  LOAD_TUNNEL_ROUTES_TIMEOUT_MS,
  loadTunnelRoutes,
  newUserId,
  provision,
  referenceSubdomain,
  releaseCloudflare,
  tunnelStatus,
} from './tunnels-fixtures.js';

beforeAll(loadTunnelRoutes, LOAD_TUNNEL_ROUTES_TIMEOUT_MS);

/** A call that hangs runs into the 5 s per-attempt timeout; leave room for it and the rollback. */
const SLOW = 30_000;
/** Every attempt of an idempotent call (the first and two retries). */
const ALL_ATTEMPTS = 3;

const callsTo = async (subdomain: string, route: string) =>
  (await cloudflareHolds(subdomain)).calls.filter((c) => c.route === route);

async function failedProvision(
  label: string,
  spec: FailureSpec,
  expected: [number, string] = [502, 'upstream_error'],
) {
  const userId = newUserId(label);
  const subdomain = await referenceSubdomain(userId);
  await injectFailure(subdomain, spec);
  const message = await expectError(await provision(userId), ...expected);
  await expectNothingLeft(subdomain);
  expect(await env.GATEKEEPER_KV.get(`tunnel:${userId}`)).toBeNull();
  return { userId, subdomain, message };
}

/** After the failure has passed, provisioning works from a clean slate. */
async function expectRecovery(userId: string) {
  expect((await provision(userId)).status).toBe(201);
  const { tunnels, records } = await cloudflareHolds(await referenceSubdomain(userId));
  expect(tunnels).toHaveLength(1);
  expect(records).toHaveLength(1);
}

describe('provision rolls back what it created', () => {
  it.each([
    ['an internal error', { status: 500 }],
    ['a rate limit', { status: 429 }],
    ['a permission error', { status: 403, code: 10000 }],
  ])(
    'when creating the tunnel fails with %s: 502, one attempt (a POST is never replayed)',
    async (_, spec) => {
      const { userId, subdomain, message } = await failedProvision('create', {
        route: 'tunnel.create',
        ...spec,
      });
      // The client learns the failed step in plain words, never Cloudflare's codes or messages.
      expect(message).toBe(
        'Cloudflare failed while creating the tunnel; nothing was left behind. Try again.',
      );
      expect(await callsTo(subdomain, 'tunnel.create')).toHaveLength(1);
      await expectRecovery(userId);
    },
  );

  it(
    'when creating the tunnel times out',
    async () => {
      const { userId } = await failedProvision('create-hang', { route: 'tunnel.create', hang: true });
      await expectRecovery(userId);
    },
    SLOW,
  );

  it('when the tunnel was created but the answer was lost: the tunnel is found and deleted', async () => {
    const { userId, subdomain } = await failedProvision('create-lost', {
      route: 'tunnel.create',
      status: 502,
      after: true,
    });
    expect(await callsTo(subdomain, 'tunnel.delete')).toHaveLength(1);
    await expectRecovery(userId);
  });

  it('when setting the ingress keeps failing: the new tunnel is deleted', async () => {
    const { userId, subdomain } = await failedProvision('ingress', {
      route: 'config.put',
      status: 503,
      count: ALL_ATTEMPTS,
    });
    expect(await callsTo(subdomain, 'config.put')).toHaveLength(ALL_ATTEMPTS);
    await expectRecovery(userId);
  });

  it('when the ingress is refused (400): no retry', async () => {
    const { userId, subdomain } = await failedProvision('ingress-400', {
      route: 'config.put',
      status: 400,
      code: 1055,
    });
    expect(await callsTo(subdomain, 'config.put')).toHaveLength(1);
    await expectRecovery(userId);
  });

  it('when listing DNS records keeps failing', async () => {
    const { userId } = await failedProvision('dns-list', {
      route: 'dns.list',
      status: 500,
      count: ALL_ATTEMPTS,
    });
    await expectRecovery(userId);
  });

  it('when creating the DNS record fails: the tunnel is deleted', async () => {
    const { userId, subdomain, message } = await failedProvision('dns-create', {
      route: 'dns.create',
      status: 500,
    });
    expect(message).toBe(
      'Cloudflare failed while creating the DNS record; nothing was left behind. Try again.',
    );
    expect(await callsTo(subdomain, 'dns.create')).toHaveLength(1);
    await expectRecovery(userId);
  });

  it(
    'when the DNS record was created but the answer never came: record and tunnel are deleted',
    async () => {
      const { userId, subdomain } = await failedProvision('dns-lost', {
        route: 'dns.create',
        hang: true,
        after: true,
      });
      expect(await callsTo(subdomain, 'dns.delete')).toHaveLength(1);
      await expectRecovery(userId);
    },
    SLOW,
  );

  it('when fetching the connector token keeps failing: record and tunnel are deleted', async () => {
    const { userId } = await failedProvision('token', {
      route: 'token.get',
      status: 500,
      count: ALL_ATTEMPTS,
    });
    await expectRecovery(userId);
  });

  it('when the hostname has a DNS record that is not ours: 409 conflict, the record is untouched', async () => {
    const userId = newUserId('taken');
    const subdomain = await referenceSubdomain(userId);
    const hostname = `${subdomain}.${env.TUNNEL_DOMAIN}`;
    const foreign = await cloudflareApi('POST', `/zones/${env.CLOUDFLARE_ZONE_ID}/dns_records`, {
      type: 'CNAME',
      name: hostname,
      content: 'somewhere-else.example.net',
      proxied: true,
      ttl: 1,
    });
    expect(foreign.status).toBe(200);

    await expectError(await provision(userId), 409, 'conflict');
    const { tunnels, records } = await cloudflareHolds(subdomain);
    expect(tunnels).toEqual([]);
    expect(records.map((r) => r.content)).toEqual(['somewhere-else.example.net']);
  });

  it('when a record the lookup missed makes the create fail (81053) and is not ours: 409, tunnel deleted', async () => {
    const userId = newUserId('race-dns');
    const subdomain = await referenceSubdomain(userId);
    // Someone else's record exists, but our lookup does not see it yet (a stale read): our create
    // meets the API's 81053 "a record with that host already exists".
    const foreign = await cloudflareApi('POST', `/zones/${env.CLOUDFLARE_ZONE_ID}/dns_records`, {
      type: 'A',
      name: `${subdomain}.${env.TUNNEL_DOMAIN}`,
      content: '192.0.2.10',
    });
    expect(foreign.status).toBe(200);
    await injectFailure(subdomain, { route: 'dns.list', stale: true });
    await expectError(await provision(userId), 409, 'conflict');
    const { tunnels, records, calls } = await cloudflareHolds(subdomain);
    expect(calls.filter((c) => c.route === 'dns.create').map((c) => c.status)).toEqual([200, 400]);
    expect(tunnels).toEqual([]);
    expect(records.map((r) => r.content)).toEqual(['192.0.2.10']);
  });
});

describe('provision keeps what it did not create', () => {
  it('leaves an existing tunnel in place when adding its missing DNS record fails', async () => {
    const userId = newUserId('keep');
    const subdomain = await referenceSubdomain(userId);
    const first = await provision(userId);
    expect(first.status).toBe(201);
    const [record] = (await cloudflareHolds(subdomain)).records;
    await cloudflareApi('DELETE', `/zones/${env.CLOUDFLARE_ZONE_ID}/dns_records/${record?.id}`);
    await env.GATEKEEPER_KV.delete(`tunnel:${userId}`);

    await injectFailure(subdomain, { route: 'dns.create', status: 500 });
    await expectError(await provision(userId), 502, 'upstream_error');
    expect((await cloudflareHolds(subdomain)).tunnels).toHaveLength(1);
    expect((await provision(userId)).status).toBe(200);
  });

  it('heals a rollback that itself failed: the next provision adopts the left-over tunnel', async () => {
    const userId = newUserId('heal');
    const subdomain = await referenceSubdomain(userId);
    await injectFailure(subdomain, { route: 'dns.create', status: 500 });
    await injectFailure(subdomain, { route: 'tunnel.delete', status: 500, count: ALL_ATTEMPTS });
    await expectError(await provision(userId), 502, 'upstream_error');
    const [leftOver] = (await cloudflareHolds(subdomain)).tunnels;
    expect(leftOver).toBeDefined();

    const res = await provision(userId);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ tunnel_id: leftOver?.id });
    const { tunnels, records } = await cloudflareHolds(subdomain);
    expect(tunnels).toHaveLength(1);
    expect(records).toHaveLength(1);
  });
});

describe('concurrent provisions of one member', () => {
  it('never hand out a tunnel that a failed provision then rolls back', async () => {
    const userId = newUserId('race');
    const subdomain = await referenceSubdomain(userId);
    // The first provision creates the tunnel, then its DNS create waits at Cloudflare and fails.
    await injectFailure(subdomain, { route: 'dns.create', status: 500, hold: true });
    const first = provision(userId);
    await cloudflareHolding(subdomain);

    // A second provision of the same member arrives meanwhile. Let it run as far as it may: it
    // either finishes, or waits for the first one (the member's provisions run one at a time).
    let secondDone = false;
    const second = provision(userId).finally(() => {
      secondDone = true;
    });
    const member = env.MEMBERSHIP_RECHECK.get(env.MEMBERSHIP_RECHECK.idFromName(`member:${userId}`));
    const waiting = () =>
      runInDurableObject(member, (object) => (object as MembershipRecheck).provisionsInFlight >= 2);
    while (!secondDone && !(await waiting())) await new Promise((resolve) => setTimeout(resolve, 10));
    await releaseCloudflare(subdomain);

    await expectError(await first, 502, 'upstream_error');
    const answer = await second;
    const { tunnel_id } = (await answer.json()) as { tunnel_id: string };
    // What the second provision handed out is still there, and it is the member's only tunnel.
    const { tunnels, records } = await cloudflareHolds(subdomain);
    expect(tunnels.map((t) => t.id)).toEqual([tunnel_id]);
    expect(records).toHaveLength(1);
    // It started after the failed one had cleaned up, so it created the tunnel.
    expect(answer.status).toBe(201);
    expect(await (await tunnelStatus(userId)).json()).toMatchObject({ tunnel_id });
  });
});

describe('retries are deliberate', () => {
  it('retries an idempotent read after one 503 and succeeds', async () => {
    const userId = newUserId('retry');
    const subdomain = await referenceSubdomain(userId);
    await injectFailure(subdomain, { route: 'token.get', status: 503 });
    expect((await provision(userId)).status).toBe(201);
    expect((await callsTo(subdomain, 'token.get')).map((c) => c.status)).toEqual([503, 200]);
  });

  it('waits out a short Retry-After on a rate-limited read, and fails fast on a long one', async () => {
    const patient = newUserId('429-short');
    const patientSub = await referenceSubdomain(patient);
    await injectFailure(patientSub, { route: 'token.get', status: 429, retry_after: 1 });
    expect((await provision(patient)).status).toBe(201);
    expect((await callsTo(patientSub, 'token.get')).map((c) => c.status)).toEqual([429, 200]);

    const hurried = newUserId('429-long');
    const hurriedSub = await referenceSubdomain(hurried);
    await injectFailure(hurriedSub, { route: 'token.get', status: 429, retry_after: 120 });
    const started = Date.now();
    await expectError(await provision(hurried), 502, 'upstream_error');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await callsTo(hurriedSub, 'token.get')).toHaveLength(1);
    await expectNothingLeft(hurriedSub);
  });

  it(
    'retries an idempotent read after a timeout and succeeds',
    async () => {
      const userId = newUserId('retry-hang');
      const subdomain = await referenceSubdomain(userId);
      await injectFailure(subdomain, { route: 'token.get', hang: true });
      expect((await provision(userId)).status).toBe(201);
      expect(await callsTo(subdomain, 'token.get')).toHaveLength(2);
    },
    SLOW,
  );

  it('treats 409 1013 on create as "the tunnel exists" and uses it instead of retrying', async () => {
    const userId = newUserId('dup');
    const subdomain = await referenceSubdomain(userId);
    // Another provision's tunnel exists, but our lookup does not see it yet (a stale read), so
    // our create meets the duplicate name.
    const other = await cloudflareApi('POST', `/accounts/${env.CLOUDFLARE_ACCOUNT_ID}/cfd_tunnel`, {
      name: `overlay-${subdomain}`,
      config_src: 'cloudflare',
    });
    expect(other.status).toBe(200);
    const [existing] = (await cloudflareHolds(subdomain)).tunnels;
    await injectFailure(subdomain, { route: 'tunnel.list', stale: true });

    const res = await provision(userId);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ tunnel_id: existing?.id });
    // The first create is the other provision's, the second ours.
    expect((await callsTo(subdomain, 'tunnel.create')).map((c) => c.status)).toEqual([200, 409]);
    expect((await cloudflareHolds(subdomain)).tunnels).toHaveLength(1);
  });
});

describe('delete', () => {
  it.each([
    ['the DNS record', 'dns.delete'],
    ['the connections', 'connections.delete'],
    ['the tunnel', 'tunnel.delete'],
  ])('answers 502 when deleting %s keeps failing, and a second delete finishes the job', async (_, route) => {
    const userId = newUserId('del');
    const subdomain = await referenceSubdomain(userId);
    expect((await provision(userId)).status).toBe(201);
    await injectFailure(subdomain, { route, status: 500, count: ALL_ATTEMPTS });

    const message = await expectError(await deleteTunnel(userId), 502, 'upstream_error');
    expect(message).toMatch(
      /^Cloudflare failed while [A-Za-z' ]+; trying again resumes the removal where it stopped\.$/,
    );
    // The record stays until everything is gone, so the user can still see and retry.
    expect(await env.GATEKEEPER_KV.get(`tunnel:${userId}`)).not.toBeNull();

    expect((await deleteTunnel(userId)).status).toBe(204);
    await expectNothingLeft(subdomain);
    await expectError(await tunnelStatus(userId), 404, 'not_found');
  });
});
