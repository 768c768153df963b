// Kick account links inside workerd: Kick users on the shared stand-in (test/support/fakes/kick-api.ts),
// members with licences, and the browser's trip from POST /kick/connect to the Gatekeeper's callback.
import { env } from 'cloudflare:workers';
import { inject } from 'vitest';
import { signLicence } from '../../../workers/src/licence.js';
import { writeMember } from '../../../workers/src/membership/member-store.js';
import { gatekeeper, uniqueUserId } from './gatekeeper.js';

export const kickBase = () => inject('kickBase');

/** A Kick user id no other test uses (every file shares one stand-in). */
export function uniqueKickUserId(): number {
  const [a = 0, b = 0, c = 0] = crypto.getRandomValues(new Uint8Array(3));
  return 10_000_000 + ((a << 16) | (b << 8) | c) * 50 + Math.floor(Math.random() * 50);
}

export async function kickControl(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${kickBase()}/__fake${path}`, init);
}

export async function putKickUser(
  id: number,
  setup: { username?: string; token_ttl?: number; site_refuses?: boolean } = {},
): Promise<void> {
  const res = await kickControl(`/users/${id}`, { method: 'PUT', body: JSON.stringify(setup) });
  if (res.status !== 204)
    throw new Error(`the Kick stand-in refused the user: ${res.status} ${await res.text()}`);
}

export async function kickFailure(
  id: number,
  failure: { endpoint: string; status: number; retry_after?: number; times?: number },
): Promise<void> {
  const res = await kickControl(`/users/${id}/failures`, { method: 'POST', body: JSON.stringify(failure) });
  if (res.status !== 204)
    throw new Error(`the Kick stand-in refused the failure: ${res.status} ${await res.text()}`);
}

export interface KickSeen {
  subscriptions: { id: string; event: string; version: number; broadcaster_user_id: number }[];
  chat: { message_id: string; content: string; type: string; broadcaster_user_id: number }[];
  revoked: string[];
  token_requests: number;
  refresh_grants: number;
  last_access_token: string | null;
  last_refresh_token: string | null;
}

export async function kickSeen(id: number): Promise<KickSeen> {
  return (await kickControl(`/users/${id}`)).json();
}

/** A member (Free unless told) with a licence of theirs. */
export async function kickMember(
  label: string,
  tier: 'free' | 'premium' = 'free',
): Promise<{ userId: string; token: string }> {
  const userId = uniqueUserId(label);
  await writeMember(env, userId, { tier, checked_at: Date.now(), refresh_token: null, epoch: 1 });
  const { token } = await signLicence(env, { sub: userId, tier, epoch: 1 });
  return { userId, token };
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** POST /kick/connect → the authorize URL it answered. */
export async function connectUrl(token: string): Promise<URL> {
  const res = await gatekeeper('/kick/connect', { method: 'POST', headers: bearer(token) });
  if (res.status !== 200) throw new Error(`POST /kick/connect: ${res.status} ${await res.text()}`);
  return new URL(((await res.json()) as { url: string }).url);
}

/** Kick's consent page as the user `as` allows it: where Kick sends the browser back to (the callback URL). */
export async function approveAtKick(authorize: URL, as: number | 'deny'): Promise<URL> {
  const url = new URL(authorize);
  url.searchParams.set('fake_user', String(as));
  const res = await fetch(url, { redirect: 'manual' });
  await res.arrayBuffer();
  const location = res.headers.get('Location');
  if (res.status !== 302 || !location) throw new Error(`Kick's authorize answered ${res.status}`);
  return new URL(location);
}

/** The browser arriving at the Gatekeeper's callback. */
export function callback(url: URL): Promise<Response> {
  return gatekeeper(`${url.pathname}${url.search}`);
}

/** A member whose Kick account `kickUserId` is linked, the whole way through. */
export async function linkedMember(
  label: string,
  kickUserId: number,
): Promise<{ userId: string; token: string }> {
  const member = await kickMember(label);
  const res = await callback(await approveAtKick(await connectUrl(member.token), kickUserId));
  if (res.status !== 200) throw new Error(`the Kick callback answered ${res.status}: ${await res.text()}`);
  return member;
}
