// Drives the Gatekeeper inside workerd and the shared fake Patreon: users, logins, requests from one IP.
import { env, exports } from 'cloudflare:workers';
import { inject } from 'vitest';
import { DEFAULT_CONFIG, type RemoteConfig } from '../../../shared/config.js';

const BASE = 'http://gatekeeper.test';
export const PREMIUM_TIER_ID = 't-premium';
export const SUPPORTER_TIER_ID = 't-supporter';

/** The config every login test runs under: one Premium tier and one cheaper tier that stays Free. */
export const TEST_CONFIG: RemoteConfig = {
  ...DEFAULT_CONFIG,
  membership: { tiers: { [PREMIUM_TIER_ID]: 'premium', [SUPPORTER_TIER_ID]: 'free' } },
};

async function useTestConfig(config: RemoteConfig = TEST_CONFIG): Promise<void> {
  await env.GATEKEEPER_KV.put('config', JSON.stringify(config));
}

/**
 * The first Durable Object call of a test file loads the Worker's modules into the object's
 * context, which takes seconds on a busy machine; doing it in `beforeAll` keeps that out of the
 * per-test timeout. Use as `beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS)`.
 */
export async function warmUpOneTimeStore(): Promise<void> {
  await env.ONE_TIME_STORE.get(env.ONE_TIME_STORE.idFromName('warm-up')).take('warm-up');
}
export const WARM_UP_TIMEOUT_MS = 60_000;

/** The login suites' set-up: the test tier map in KV, then the warm-up. Use as `beforeAll(prepareLoginSuite, WARM_UP_TIMEOUT_MS)`. */
export async function prepareLoginSuite(): Promise<void> {
  await useTestConfig();
  await warmUpOneTimeStore();
}

export const patreonBase = () => inject('patreonBase');

/** A user id no other test (in any file) uses: all files share one fake. */
export const uniqueUserId = (label: string) => `${label}-${crypto.randomUUID()}`;

/** A client address of its own, so rate limits of one test never touch another. */
export function uniqueIp(): string {
  const [a, b, c] = crypto.getRandomValues(new Uint8Array(3));
  return `10.${a}.${b}.${c}`;
}

type PatronStatus = 'active_patron' | 'declined_patron' | 'former_patron' | null;

export async function setPatreonUser(
  id: string,
  setup: {
    patron_status: PatronStatus;
    campaign_id?: string;
    tiers?: { id: string; amount_cents: number }[];
  },
): Promise<void> {
  const res = await fetch(`${patreonBase()}/__fake/users/${encodeURIComponent(id)}`, {
    method: 'PUT',
    body: JSON.stringify(setup),
  });
  if (res.status !== 204) throw new Error(`fake Patreon refused the user: ${res.status} ${await res.text()}`);
}

export const premiumPatron = (id: string) =>
  setPatreonUser(id, { patron_status: 'active_patron', tiers: [{ id: PREMIUM_TIER_ID, amount_cents: 500 }] });

export async function injectFailure(
  id: string,
  failure: { endpoint: 'token' | 'identity'; status: number; retry_after?: number; times?: number },
): Promise<void> {
  const res = await fetch(`${patreonBase()}/__fake/users/${encodeURIComponent(id)}/failures`, {
    method: 'POST',
    body: JSON.stringify(failure),
  });
  if (res.status !== 204) throw new Error(`fake Patreon refused the failure: ${res.status}`);
}

export async function revokePatreonGrant(id: string): Promise<void> {
  await fetch(`${patreonBase()}/__fake/users/${encodeURIComponent(id)}/revoke`, { method: 'POST' });
}

/**
 * Holds the user's next call to a platform endpoint (a refresh, for `token`) unanswered until
 * releasePatreon: what a slow platform looks like, without a clock.
 */
export async function holdPatreon(id: string, endpoint: 'token' | 'identity'): Promise<void> {
  const res = await fetch(`${patreonBase()}/__fake/users/${encodeURIComponent(id)}/hold`, {
    method: 'POST',
    body: JSON.stringify({ endpoint }),
  });
  if (res.status !== 204) throw new Error(`fake Patreon refused the hold: ${res.status}`);
}

/** Returns once the fake is holding a call of this user (holdPatreon). */
export async function patreonHolding(id: string): Promise<void> {
  const res = await fetch(`${patreonBase()}/__fake/users/${encodeURIComponent(id)}/held`);
  if (res.status !== 204) throw new Error(`fake Patreon holds nothing: ${res.status}`);
}

export async function releasePatreon(id: string): Promise<void> {
  await fetch(`${patreonBase()}/__fake/users/${encodeURIComponent(id)}/release`, { method: 'POST' });
}

interface PatreonCounters {
  token_requests: number;
  refresh_grants: number;
  identity_requests: number;
  last_refresh_token: string | null;
}

export async function patreonCounters(id: string): Promise<PatreonCounters> {
  const res = await fetch(`${patreonBase()}/__fake/users/${encodeURIComponent(id)}`);
  return res.json();
}

/** A request to the Worker as Cloudflare's edge would pass it on: with the client's IP. */
export function gatekeeper(path: string, init: RequestInit & { ip?: string } = {}): Promise<Response> {
  const { ip = uniqueIp(), ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('CF-Connecting-IP', ip);
  return exports.default.fetch(`${BASE}${path}`, { ...rest, headers, redirect: 'manual' });
}

export function postJson(path: string, body: unknown, ip?: string): Promise<Response> {
  return gatekeeper(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(ip ? { ip } : {}),
  });
}

export function validate(token: string | null, ip?: string): Promise<Response> {
  return gatekeeper('/validate', {
    method: 'POST',
    headers: token === null ? {} : { Authorization: `Bearer ${token}` },
    ...(ip ? { ip } : {}),
  });
}

export function logout(token: string, ip?: string): Promise<Response> {
  return gatekeeper('/auth/logout', {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    ...(ip ? { ip } : {}),
  });
}

export function location(res: Response): URL {
  const value = res.headers.get('Location');
  if (!value) throw new Error(`expected a redirect, got ${res.status}`);
  return new URL(value);
}

/** Steps 1–2 of the login: the Gatekeeper's redirect, then the platform approving as `userId`. */
export async function authorizeAt(
  userId: string,
  options: { ip: string; query?: string },
): Promise<{ authorize: URL; callback: URL }> {
  const start = await gatekeeper(`/auth/membership${options.query ?? ''}`, { ip: options.ip });
  if (start.status !== 302) throw new Error(`/auth/membership answered ${start.status}`);
  const authorize = location(start);
  authorize.searchParams.set('login_hint', userId);
  const approved = await fetch(authorize, { redirect: 'manual' });
  return { authorize, callback: location(approved) };
}

/** The whole login as the app sees it: the deep-link code exchanged for a licence. */
export async function login(
  userId: string,
  ip = uniqueIp(),
): Promise<{ token: string; tier: string; deepLink: URL }> {
  const { callback } = await authorizeAt(userId, { ip });
  const done = await gatekeeper(`${callback.pathname}${callback.search}`, { ip });
  if (done.status !== 302) throw new Error(`/auth/callback answered ${done.status}: ${await done.text()}`);
  const deepLink = location(done);
  const exchanged = await postJson('/auth/exchange', { code: deepLink.searchParams.get('code') }, ip);
  if (exchanged.status !== 200) throw new Error(`/auth/exchange answered ${exchanged.status}`);
  const body: { token: string; tier: string } = await exchanged.json();
  return { ...body, deepLink };
}

/** Moves the user's last platform check (and last failed attempt) into the past, as if that much time had gone by. */
export async function ageMembership(userId: string, ms: number): Promise<void> {
  const key = `member:${userId}`;
  const text = await env.GATEKEEPER_KV.get(key);
  if (text === null) throw new Error(`no member record for ${userId}`);
  const record: { checked_at: number; last_attempt_at?: number } = JSON.parse(text);
  const aged = { ...record, checked_at: record.checked_at - ms };
  if (record.last_attempt_at !== undefined) aged.last_attempt_at = record.last_attempt_at - ms;
  await env.GATEKEEPER_KV.put(key, JSON.stringify(aged));
}

/** Five minutes and a second: past the pause after a failed re-check (check.ts RETRY_AFTER_FAILURE_MS). */
export const AFTER_RETRY_PAUSE = 5 * 60 * 1000 + 1000;

export const HOUR = 60 * 60 * 1000;
