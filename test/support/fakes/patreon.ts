// A local fake of Patreon's OAuth and v2 identity API, with the real shapes and a test control API under /__fake.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { type FakeServer, listenLoopback, readBody, sendJson } from './listen.js';

const UserSetup = v.object({
  patron_status: v.optional(
    v.nullable(v.picklist(['active_patron', 'declined_patron', 'former_patron'])),
    null,
  ),
  campaign_id: v.optional(v.string()),
  tiers: v.optional(v.array(v.object({ id: v.string(), amount_cents: v.number() })), []),
});
const FailureSetup = v.object({
  endpoint: v.picklist(['token', 'identity']),
  /** An HTTP error status, or 0 to drop the connection without an answer (a network failure). */
  status: v.union([v.literal(0), v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599))]),
  retry_after: v.optional(v.number()),
  times: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 1),
});
const HoldSetup = v.object({ endpoint: v.picklist(['token', 'identity']) });

/**
 * Control API (tests share one fake, so each uses its own user ids):
 * - `PUT /__fake/users/:id` `{patron_status, campaign_id?, tiers?: [{id, amount_cents}]}` creates or
 *   replaces a user; `patron_status` is `active_patron`, `declined_patron`, `former_patron` or null
 *   (never pledged: no membership at all).
 * - `POST /__fake/users/:id/revoke` revokes the user's grants (refresh → 400 invalid_grant, identity → 401).
 * - `POST /__fake/users/:id/failures` `{endpoint: "token"|"identity", status, retry_after?, times?}`
 *   makes the next `times` (default 1) calls for that user fail with `status` (0: connection dropped).
 * - `POST /__fake/users/:id/hold` `{endpoint}` holds the next call for that user to that endpoint
 *   (a refresh, for `token`) without answering, until `POST /__fake/users/:id/release`; then it is
 *   answered as usual. `GET /__fake/users/:id/held` answers 204 once such a call is being held.
 * - `GET /__fake/users/:id` returns `{token_requests, refresh_grants, identity_requests, last_refresh_token}`.
 * Authorize: `GET /oauth2/authorize?...&login_hint=<user id>` approves at once and redirects back
 * with `code` and `state`; `login_hint=deny` redirects with `error=access_denied`; without a hint it
 * shows a page, as the real site asks the person to sign in.
 */
interface FakePatreonOptions {
  port?: number;
  clientId?: string;
  clientSecret?: string;
}

interface FakeUser {
  id: string;
  patronStatus: string | null;
  campaignId: string;
  tiers: { id: string; amountCents: number }[];
  counters: { token_requests: number; refresh_grants: number; identity_requests: number };
  /** The refresh token issued last, so a test can check that the Worker never stores it in clear. */
  lastRefreshToken: string | null;
  failures: { endpoint: 'token' | 'identity'; status: number; retryAfter?: number; times: number }[];
  /** Calls to hold (`release` set once one is held), and the `held` requests waiting for one. */
  holds: { endpoint: 'token' | 'identity'; release?: () => void }[];
  heldWaiters: (() => void)[];
}

interface Grant {
  userId: string;
  redirectUri: string;
}

export const FAKE_PATREON_CAMPAIGN = '1000';

export function startFakePatreon(options: FakePatreonOptions | number = {}): Promise<FakeServer> {
  const opts = typeof options === 'number' ? { port: options } : options;
  const clientId = opts.clientId ?? 'test-client-id';
  const clientSecret = opts.clientSecret ?? 'test-client-secret';
  const users = new Map<string, FakeUser>();
  const codes = new Map<string, Grant>();
  const refreshTokens = new Map<string, string>();
  const accessTokens = new Map<string, string>();
  const token = () => randomBytes(24).toString('base64url');

  function takeFailure(user: FakeUser, endpoint: 'token' | 'identity', res: ServerResponse): boolean {
    const failure = user.failures.find((f) => f.endpoint === endpoint && f.times > 0);
    if (!failure) return false;
    failure.times -= 1;
    if (failure.status === 0) {
      res.socket?.destroy();
      return true;
    }
    const headers: Record<string, string> = failure.retryAfter
      ? { 'Retry-After': String(failure.retryAfter) }
      : {};
    sendJson(
      res,
      failure.status,
      { errors: [{ code: failure.status, detail: 'injected failure' }] },
      headers,
    );
    return true;
  }

  /** Waits here while the test holds this endpoint for this user (POST …/hold). */
  async function holdIfAsked(user: FakeUser, endpoint: 'token' | 'identity'): Promise<void> {
    const hold = user.holds.find((h) => h.endpoint === endpoint && !h.release);
    if (!hold) return;
    await new Promise<void>((resolve) => {
      hold.release = resolve;
      for (const wake of user.heldWaiters.splice(0)) wake();
    });
    user.holds = user.holds.filter((h) => h !== hold);
  }

  function issueTokens(res: ServerResponse, user: FakeUser) {
    const access = token();
    const refresh = token();
    accessTokens.set(access, user.id);
    refreshTokens.set(refresh, user.id);
    user.lastRefreshToken = refresh;
    sendJson(res, 200, {
      access_token: access,
      refresh_token: refresh,
      expires_in: 2678400,
      scope: 'identity identity.memberships',
      token_type: 'Bearer',
    });
  }

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse) {
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return sendJson(res, 400, { error: 'invalid_request', error_description: 'form body expected' });
    }
    const form = new URLSearchParams(await readBody(req));
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
      return sendJson(res, 401, { error: 'invalid_client' });
    }
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') {
      const code = form.get('code') ?? '';
      const grant = codes.get(code);
      const user = grant && users.get(grant.userId);
      if (user) {
        user.counters.token_requests += 1;
        if (takeFailure(user, 'token', res)) return;
      }
      codes.delete(code);
      if (!grant || !user || grant.redirectUri !== form.get('redirect_uri')) {
        return sendJson(res, 400, { error: 'invalid_grant' });
      }
      return issueTokens(res, user);
    }
    if (grantType === 'refresh_token') {
      const refresh = form.get('refresh_token') ?? '';
      const userId = refreshTokens.get(refresh);
      const user = userId === undefined ? undefined : users.get(userId);
      if (user) {
        await holdIfAsked(user, 'token');
        user.counters.token_requests += 1;
        if (takeFailure(user, 'token', res)) return;
      }
      if (!user) return sendJson(res, 400, { error: 'invalid_grant' });
      // Rotation: the refresh token just used is spent.
      refreshTokens.delete(refresh);
      user.counters.refresh_grants += 1;
      return issueTokens(res, user);
    }
    return sendJson(res, 400, { error: 'unsupported_grant_type' });
  }

  async function identityEndpoint(req: IncomingMessage, res: ServerResponse, url: URL) {
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const userId = auth?.[1] ? accessTokens.get(auth[1]) : undefined;
    const user = userId === undefined ? undefined : users.get(userId);
    if (!user) return sendJson(res, 401, { errors: [{ code: 1, status: '401', title: 'Unauthorized' }] });
    await holdIfAsked(user, 'identity');
    user.counters.identity_requests += 1;
    if (takeFailure(user, 'identity', res)) return;
    sendJson(res, 200, identityDocument(user, url.searchParams), {
      'Content-Type': 'application/vnd.api+json',
    });
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string) {
    const match = /^\/__fake\/users\/([^/]+)(\/revoke|\/failures|\/hold|\/held|\/release)?$/.exec(path);
    const id = match?.[1] ? decodeURIComponent(match[1]) : undefined;
    if (!id) return sendJson(res, 404, { error: 'unknown control path' });
    const action = match?.[2];
    if (req.method === 'PUT' && !action) {
      const parsed = parseJsonWith(UserSetup, (await readBody(req)) || '{}');
      if (!parsed.ok) return sendJson(res, 400, { error: parsed.error });
      const body = parsed.value;
      users.set(id, {
        id,
        patronStatus: body.patron_status,
        campaignId: body.campaign_id ?? FAKE_PATREON_CAMPAIGN,
        tiers: body.tiers.map((t) => ({ id: t.id, amountCents: t.amount_cents })),
        counters: { token_requests: 0, refresh_grants: 0, identity_requests: 0 },
        lastRefreshToken: null,
        failures: [],
        holds: [],
        heldWaiters: [],
      });
      return noContent(res);
    }
    const user = users.get(id);
    if (!user) return sendJson(res, 404, { error: 'unknown user' });
    if (req.method === 'GET' && !action) {
      return sendJson(res, 200, { ...user.counters, last_refresh_token: user.lastRefreshToken });
    }
    if (req.method === 'POST' && action === '/revoke') {
      for (const map of [refreshTokens, accessTokens]) {
        for (const [key, owner] of map) if (owner === id) map.delete(key);
      }
      return noContent(res);
    }
    if (req.method === 'POST' && action === '/failures') {
      const parsed = parseJsonWith(FailureSetup, await readBody(req));
      if (!parsed.ok) return sendJson(res, 400, { error: parsed.error });
      const body = parsed.value;
      user.failures.push({
        endpoint: body.endpoint,
        status: body.status,
        ...(body.retry_after === undefined ? {} : { retryAfter: body.retry_after }),
        times: body.times,
      });
      return noContent(res);
    }
    if (req.method === 'POST' && action === '/hold') {
      const parsed = parseJsonWith(HoldSetup, await readBody(req));
      if (!parsed.ok) return sendJson(res, 400, { error: parsed.error });
      user.holds.push({ endpoint: parsed.value.endpoint });
      return noContent(res);
    }
    if (req.method === 'GET' && action === '/held') {
      if (!user.holds.some((h) => h.release)) {
        await new Promise<void>((resolve) => user.heldWaiters.push(resolve));
      }
      return noContent(res);
    }
    if (req.method === 'POST' && action === '/release') {
      for (const hold of user.holds) hold.release?.();
      return noContent(res);
    }
    return sendJson(res, 405, { error: 'method not allowed' });
  }

  function authorize(res: ServerResponse, url: URL) {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri');
    if (q.get('response_type') !== 'code' || q.get('client_id') !== clientId || !redirectUri) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      return res.end('invalid authorization request');
    }
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (state !== null) back.searchParams.set('state', state);
    const hint = q.get('login_hint');
    if (hint === 'deny') {
      back.searchParams.set('error', 'access_denied');
    } else if (hint && users.has(hint)) {
      const code = token();
      codes.set(code, { userId: hint, redirectUri });
      back.searchParams.set('code', code);
    } else {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return res.end(
        '<!doctype html><title>Log in</title><p>Fake Patreon: add login_hint=&lt;user id&gt;.</p>',
      );
    }
    res.writeHead(302, { Location: back.toString() });
    res.end();
  }

  return listenLoopback(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname.startsWith('/__fake/')) await control(req, res, url.pathname);
    else if (req.method === 'GET' && url.pathname === '/oauth2/authorize') authorize(res, url);
    else if (req.method === 'POST' && url.pathname === '/api/oauth2/token') await tokenEndpoint(req, res);
    else if (req.method === 'GET' && url.pathname === '/api/oauth2/v2/identity')
      await identityEndpoint(req, res, url);
    else sendJson(res, 404, { errors: [{ status: '404', title: 'Not Found' }] });
  }, opts.port ?? 0);
}

function noContent(res: ServerResponse) {
  res.writeHead(204);
  res.end();
}

/** The JSON:API document of GET /api/oauth2/v2/identity, honouring `include` and sparse `fields[...]`. */
function identityDocument(user: FakeUser, query: URLSearchParams) {
  const include = new Set((query.get('include') ?? '').split(',').filter(Boolean));
  const fields = (type: string) => new Set((query.get(`fields[${type}]`) ?? '').split(',').filter(Boolean));
  const pick = (type: string, attributes: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(attributes).filter(([name]) => fields(type).has(name)));

  const hasMembership = user.patronStatus !== null;
  const memberId = `member-${user.id}`;
  // A former patron keeps the membership object but is entitled to nothing.
  const entitled = user.patronStatus === 'former_patron' ? [] : user.tiers;
  const data = {
    id: user.id,
    type: 'user',
    attributes: pick('user', { full_name: `User ${user.id}`, email: `${user.id}@example.test` }),
    relationships: include.has('memberships')
      ? { memberships: { data: hasMembership ? [{ id: memberId, type: 'member' }] : [] } }
      : {},
    links: { self: `https://www.patreon.com/api/oauth2/v2/user/${user.id}` },
  };
  const included: unknown[] = [];
  if (hasMembership && include.has('memberships')) {
    const relationships: Record<string, unknown> = {};
    if (include.has('memberships.campaign')) {
      relationships.campaign = { data: { id: user.campaignId, type: 'campaign' } };
    }
    if (include.has('memberships.currently_entitled_tiers')) {
      relationships.currently_entitled_tiers = { data: entitled.map((t) => ({ id: t.id, type: 'tier' })) };
    }
    included.push({
      id: memberId,
      type: 'member',
      attributes: pick('member', {
        patron_status: user.patronStatus,
        currently_entitled_amount_cents: entitled.reduce((sum, t) => sum + t.amountCents, 0),
        full_name: `User ${user.id}`,
      }),
      relationships,
    });
    if (include.has('memberships.campaign')) {
      included.push({ id: user.campaignId, type: 'campaign', attributes: {} });
    }
    if (include.has('memberships.currently_entitled_tiers')) {
      for (const t of entitled) {
        included.push({
          id: t.id,
          type: 'tier',
          attributes: pick('tier', { amount_cents: t.amountCents, title: `Tier ${t.id}` }),
        });
      }
    }
  }
  return { data, included, links: { self: `https://www.patreon.com/api/oauth2/v2/user/${user.id}` } };
}
