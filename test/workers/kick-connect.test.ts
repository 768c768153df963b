// Linking a member's Kick account: the authorize URL (PKCE S256, a single-use state bound to the member for
// 10 minutes), the callback (tokens kept sealed, the channel's events subscribed), the status, unlinking,
// refreshing expired tokens and the daily cron making dropped subscriptions again.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KICK_EVENT_TYPES } from '../../shared/protocol/kick.js';
import worker from '../../workers/src/index.js';
import { kickChannelOf } from '../../workers/src/kick/channel.js';
import { KICK_CRON_SCHEDULE, KICK_CRON_STATE_KEY } from '../../workers/src/kick/subscriptions.js';
import { memberForKickChannel } from '../../workers/src/kick/tokens.js';
import { gatekeeper, WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import {
  approveAtKick,
  bearer,
  callback,
  connectUrl,
  kickBase,
  kickControl,
  kickFailure,
  kickMember,
  kickSeen,
  linkedMember,
  putKickUser,
  uniqueKickUserId,
} from './helpers/kick.js';
import { mustOpen } from './helpers/relay-sockets.js';

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);
afterEach(() => {
  vi.useRealTimers();
});

const ALL_EVENTS = [...KICK_EVENT_TYPES].sort();

async function status(token: string): Promise<{ connected: boolean; channel?: string; since?: string }> {
  const res = await gatekeeper('/kick/status', { headers: bearer(token) });
  expect(res.status).toBe(200);
  return res.json();
}

async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  return btoa(String.fromCharCode(...digest))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The Kick trigger of the cron, as the first run of a day's pass (every link of this file fits in it). */
async function runCron(): Promise<void> {
  await env.GATEKEEPER_KV.delete(KICK_CRON_STATE_KEY);
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: KICK_CRON_SCHEDULE }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe('POST /kick/connect', () => {
  it('answers Kick’s authorize URL with PKCE S256, the scopes for events and chat, and a fresh state', async () => {
    const { token } = await kickMember('kick-url');
    const url = await connectUrl(token);
    expect(`${url.origin}${url.pathname}`).toBe(`${kickBase()}/oauth/authorize`);
    const q = url.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe('test-kick-client-id');
    expect(q.get('redirect_uri')).toBe('http://gatekeeper.test/kick/callback');
    expect(q.get('scope')?.split(' ').sort()).toEqual([
      'channel:read',
      'chat:write',
      'events:subscribe',
      'user:read',
    ]);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Each call is a new state and a new challenge.
    const again = await connectUrl(token);
    expect(again.searchParams.get('state')).not.toBe(q.get('state'));
    expect(again.searchParams.get('code_challenge')).not.toBe(q.get('code_challenge'));
  });

  it('needs a licence (any tier): 401 without one', async () => {
    const res = await gatekeeper('/kick/connect', { method: 'POST' });
    expect(res.status).toBe(401);
    const status = await gatekeeper('/kick/status');
    expect(status.status).toBe(401);
    const wrongMethod = await gatekeeper('/kick/connect', { method: 'GET' });
    expect(wrongMethod.status).toBe(405);
  });

  it('the account routes are rate limited per address: past 30 a minute, 429 with Retry-After', async () => {
    const { token } = await kickMember('kick-limit');
    const ip = '10.251.0.1';
    for (let i = 0; i < 30; i++) {
      expect((await gatekeeper('/kick/status', { ip, headers: bearer(token) })).status).toBe(200);
    }
    const limited = await gatekeeper('/kick/connect', { method: 'POST', ip, headers: bearer(token) });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('Retry-After')).toBe('60');
  });
});

describe('GET /kick/callback', () => {
  it('links the channel: tokens kept sealed (not in clear in KV), the seven events subscribed, the status connected', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId, { username: `Streamer${kickId}` });
    const { userId, token } = await kickMember('kick-link');
    expect(await status(token)).toEqual({ connected: false });

    const before = Date.now();
    const res = await callback(await approveAtKick(await connectUrl(token), kickId));
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
    const text = await res.text();
    expect(text).toContain('Kick is connected');
    expect(text).toContain(`streamer${kickId}`);

    const seen = await kickSeen(kickId);
    expect(seen.subscriptions.map((s) => s.event).sort()).toEqual(ALL_EVENTS);
    expect(seen.subscriptions.every((s) => s.broadcaster_user_id === kickId && s.version === 1)).toBe(true);

    const stored = await env.GATEKEEPER_KV.get(`kick:link:${userId}`, 'text');
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(seen.last_access_token ?? 'missing');
    expect(stored).not.toContain(seen.last_refresh_token ?? 'missing');
    const record = JSON.parse(stored ?? '{}') as Record<string, unknown>;
    expect(record.access_token).toMatch(/^v1\./);
    expect(record.refresh_token).toMatch(/^v1\./);

    expect(await memberForKickChannel(env, kickId)).toBe(userId);
    expect(await memberForKickChannel(env, String(kickId))).toBe(userId);
    const now = await status(token);
    expect(now.connected).toBe(true);
    expect(now.channel).toBe(`streamer${kickId}`);
    expect(Date.parse(now.since ?? '')).toBeGreaterThanOrEqual(before - 1000);
  });

  it('a state is single use: the same callback again is refused and changes nothing', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { token } = await kickMember('kick-once');
    const back = await approveAtKick(await connectUrl(token), kickId);
    expect((await callback(back)).status).toBe(200);
    const requests = (await kickSeen(kickId)).token_requests;
    const replay = await callback(back);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('unknown, used or expired');
    // The code was not presented to Kick again.
    expect((await kickSeen(kickId)).token_requests).toBe(requests);
  });

  it('refuses an unknown state, a missing one, and one older than 10 minutes', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { userId, token } = await kickMember('kick-stale');
    const back = await approveAtKick(await connectUrl(token), kickId);

    const forged = new URL(back);
    forged.searchParams.set('state', 'A'.repeat(43));
    expect((await callback(forged)).status).toBe(400);
    const none = new URL(back);
    none.searchParams.delete('state');
    expect((await callback(none)).status).toBe(400);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 10 * 60 * 1000 + 1000);
    const late = await callback(back);
    expect(late.status).toBe(400);
    expect(await late.text()).toContain('unknown, used or expired');
    vi.useRealTimers();
    expect(await env.GATEKEEPER_KV.get(`kick:link:${userId}`)).toBeNull();
    expect((await kickSeen(kickId)).token_requests).toBe(0);
  });

  it('binds the state to the member who asked: the link lands on that member, not on whoever opens it', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const asker = await kickMember('kick-asker');
    const other = await kickMember('kick-other');
    expect((await callback(await approveAtKick(await connectUrl(asker.token), kickId))).status).toBe(200);
    expect((await status(asker.token)).connected).toBe(true);
    expect((await status(other.token)).connected).toBe(false);
  });

  it('a wrong PKCE challenge makes Kick refuse the code: a clear error page, nothing stored', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { userId, token } = await kickMember('kick-pkce');
    const url = await connectUrl(token);
    // The challenge Kick sees is not the one made from the Gatekeeper's verifier.
    url.searchParams.set('code_challenge', await s256('x'.repeat(43)));
    const res = await callback(await approveAtKick(url, kickId));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('Kick did not accept this sign-in');
    expect(await env.GATEKEEPER_KV.get(`kick:link:${userId}`)).toBeNull();
    expect((await kickSeen(kickId)).subscriptions).toEqual([]);
  });

  it('the member declining at Kick, or Kick failing the exchange, is an error page and no link', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { token } = await kickMember('kick-declined');
    const denied = await callback(await approveAtKick(await connectUrl(token), 'deny'));
    expect(denied.status).toBe(400);
    expect(await denied.text()).toContain('not allowed');

    await kickFailure(kickId, { endpoint: 'token', status: 503 });
    const down = await callback(await approveAtKick(await connectUrl(token), kickId));
    expect(down.status).toBe(502);
    expect(await down.text()).toContain('Kick was not connected');
    // Kick refusing the application itself (a wrong client secret) is the operator's to fix: 502 too.
    await kickFailure(kickId, { endpoint: 'token', status: 401 });
    const misconfigured = await callback(await approveAtKick(await connectUrl(token), kickId));
    expect(misconfigured.status).toBe(502);
    expect(await status(token)).toEqual({ connected: false });
  });

  it('connecting again subscribes only what is missing (no duplicate subscriptions)', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { token } = await linkedMember('kick-twice', kickId);
    const first = (await kickSeen(kickId)).subscriptions.map((s) => s.id).sort();
    expect((await callback(await approveAtKick(await connectUrl(token), kickId))).status).toBe(200);
    expect((await kickSeen(kickId)).subscriptions.map((s) => s.id).sort()).toEqual(first);
  });
});

describe('DELETE /kick/connect', () => {
  it('unsubscribes, revokes both tokens at Kick and forgets the link: 204, status not connected', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { userId, token } = await linkedMember('kick-unlink', kickId);
    const linked = await kickSeen(kickId);
    // An event kept for the daemon before the unlink.
    const kept = kickChannelOf(env, userId);
    expect(
      await kept.store('before-unlink', { type: 'livestream', platform: 'kick', live: true }),
    ).toMatchObject({
      stored: true,
    });

    const res = await gatekeeper('/kick/connect', { method: 'DELETE', headers: bearer(token) });
    expect(res.status).toBe(204);
    // Nothing of the channel stays at the Gatekeeper.
    expect(await kept.kept()).toEqual([]);
    const after = await kickSeen(kickId);
    expect(after.subscriptions).toEqual([]);
    expect(after.revoked.sort()).toEqual([linked.last_access_token, linked.last_refresh_token].sort());
    expect(await status(token)).toEqual({ connected: false });
    expect(await env.GATEKEEPER_KV.get(`kick:link:${userId}`)).toBeNull();
    expect(await memberForKickChannel(env, kickId)).toBeNull();
    // Nothing linked: still 204.
    expect((await gatekeeper('/kick/connect', { method: 'DELETE', headers: bearer(token) })).status).toBe(
      204,
    );
  });

  it('forgets the link even when Kick is down (the failure is logged)', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { token } = await linkedMember('kick-unlink-down', kickId);
    await kickFailure(kickId, { endpoint: 'subscriptions', status: 503 });
    await kickFailure(kickId, { endpoint: 'revoke', status: 503, times: 2 });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const res = await gatekeeper('/kick/connect', { method: 'DELETE', headers: bearer(token) });
    errors.mockRestore();
    expect(res.status).toBe(204);
    expect(await status(token)).toEqual({ connected: false });
  });
});

describe('tokens and the daily cron', () => {
  it('refreshes an expired access token before using it, and stores the new tokens sealed', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { userId, token } = await linkedMember('kick-refresh', kickId);
    const sealed = await env.GATEKEEPER_KV.get(`kick:link:${userId}`, 'text');
    // Kick's access tokens last hours: three hours later the next use refreshes first.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 3 * 60 * 60 * 1000);
    const res = await gatekeeper('/kick/chat', {
      method: 'POST',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'after the refresh' }),
    });
    vi.useRealTimers();
    expect(res.status).toBe(200);
    const seen = await kickSeen(kickId);
    expect(seen.refresh_grants).toBe(1);
    expect(seen.chat.map((m) => m.content)).toEqual(['after the refresh']);
    const stored = await env.GATEKEEPER_KV.get(`kick:link:${userId}`, 'text');
    expect(stored).not.toBe(sealed);
    expect(stored).not.toContain(seen.last_refresh_token ?? 'missing');
    expect((await status(token)).connected).toBe(true);
  });

  it('a refresh token Kick refuses leaves the member not connected (connect again)', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { token } = await linkedMember('kick-refused', kickId);
    await kickFailure(kickId, { endpoint: 'refresh', status: 400 });
    await kickControl(`/users/${kickId}/expire`, { method: 'POST' });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const res = await gatekeeper('/kick/chat', {
      method: 'POST',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'hello' }),
    });
    errors.mockRestore();
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /connect Kick again/,
    );
    expect(await status(token)).toEqual({ connected: false });
  });

  it('the daily cron unlinks the Kick account of a member who stopped using the app (membership record gone)', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    const { userId, token } = await linkedMember('kick-gone', kickId);
    const feed = await mustOpen('/kick/events', bearer(token));
    // The membership record expires 30 days after the member last used the app.
    await env.GATEKEEPER_KV.delete(`member:${userId}`);
    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    await runCron();
    logs.mockRestore();
    // The daemon's feed ends as for a sign-out: it does not come back by itself.
    expect(await feed.closed).toMatchObject({ code: 4403 });
    const seen = await kickSeen(kickId);
    expect(seen.subscriptions).toEqual([]);
    expect(seen.revoked).toHaveLength(2);
    expect(await env.GATEKEEPER_KV.get(`kick:link:${userId}`)).toBeNull();
    expect(await memberForKickChannel(env, kickId)).toBeNull();
  });

  it('the daily cron re-creates a subscription Kick dropped, and leaves the others as they are', async () => {
    const kickId = uniqueKickUserId();
    await putKickUser(kickId);
    await linkedMember('kick-cron', kickId);
    const before = (await kickSeen(kickId)).subscriptions;
    await kickControl(`/users/${kickId}/subscriptions/channel.followed`, { method: 'DELETE' });
    expect((await kickSeen(kickId)).subscriptions.map((s) => s.event)).not.toContain('channel.followed');

    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    await runCron();
    const lines = logs.mock.calls.map((call) => String(call[0]));
    logs.mockRestore();
    const after = (await kickSeen(kickId)).subscriptions;
    expect(after.map((s) => s.event).sort()).toEqual(ALL_EVENTS);
    const kept = before
      .filter((s) => s.event !== 'channel.followed')
      .map((s) => s.id)
      .sort();
    expect(
      after
        .filter((s) => s.event !== 'channel.followed')
        .map((s) => s.id)
        .sort(),
    ).toEqual(kept);
    expect(lines.some((line) => line.includes('re-created channel.followed'))).toBe(true);
    expect(
      lines.some((line) =>
        /kick: \d+ linked channel\(s\) checked, [1-9]\d* subscription\(s\) re-created/.test(line),
      ),
    ).toBe(true);
  });
});
