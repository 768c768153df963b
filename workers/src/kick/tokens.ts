// The member's Kick link in KV: the channel, and the access and refresh tokens sealed by token-cipher.ts
// (never in clear); the channel → member index the webhook route reads; tokens refreshed before use.
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { openToken, sealToken } from '../token-cipher.js';
import { KickApiError, type KickChannel, type KickTokens, refreshTokens } from './api.js';

/**
 * One record per member, `kick:link:<member id>`, with no expiry: the link lasts until the member
 * disconnects or connects another channel. Writers re-read it and change only their own fields.
 */
export interface KickLink {
  broadcaster_user_id: number;
  slug: string;
  /** Sealed for `kick:<member id>`: a sealed token copied onto another member's record does not open. */
  access_token: string;
  /** Sealed likewise; null once Kick refused it (the member must connect again). */
  refresh_token: string | null;
  /** Epoch milliseconds when the access token expires. */
  expires_at: number;
  scope: string;
  /** Epoch milliseconds of the link (the callback that made it). */
  connected_at: number;
}

const KickLinkSchema: v.GenericSchema<KickLink> = v.object({
  broadcaster_user_id: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  slug: v.string(),
  access_token: v.string(),
  refresh_token: v.nullable(v.string()),
  expires_at: v.pipe(v.number(), v.safeInteger()),
  scope: v.string(),
  connected_at: v.pipe(v.number(), v.safeInteger()),
});

export const KICK_LINK_PREFIX = 'kick:link:';
const linkKey = (member: string) => `${KICK_LINK_PREFIX}${member}`;
/**
 * The channel → member index: `kick:channel:<broadcaster user id>` → member id, written at the link and
 * removed at the unlink, without expiry. KV keeps it durably; what it does not give is read-your-write
 * across locations (up to a minute), and Kick only starts delivering after the callback has written it.
 */
const channelKey = (broadcasterUserId: number | string) => `kick:channel:${broadcasterUserId}`;
/** An access token this close to its expiry is refreshed before use. */
const EXPIRY_MARGIN_MS = 60 * 1000;

const sealFor = (member: string) => `kick:${member}`;

export async function readKickLink(env: GatekeeperEnv, member: string): Promise<KickLink | null> {
  const text = await env.GATEKEEPER_KV.get(linkKey(member), 'text');
  if (text === null) return null;
  const parsed = parseJsonWith(KickLinkSchema, text);
  if (!parsed.ok) console.error(`kick: the link record of ${member} is unreadable: ${parsed.error}`);
  return parsed.ok ? parsed.value : null;
}

/** The member whose Kick channel this is (the broadcaster user id of a webhook), or null. */
export async function memberForKickChannel(
  env: GatekeeperEnv,
  broadcasterUserId: number | string,
): Promise<string | null> {
  if (!/^[0-9]{1,20}$/.test(String(broadcasterUserId))) return null;
  return env.GATEKEEPER_KV.get(channelKey(broadcasterUserId), 'text');
}

/** Stores a new link (tokens sealed) and the channel index; a previous channel of the member is unindexed. */
export async function saveKickLink(
  env: GatekeeperEnv,
  member: string,
  channel: KickChannel,
  tokens: KickTokens,
): Promise<KickLink> {
  const previous = await readKickLink(env, member);
  const link: KickLink = {
    broadcaster_user_id: channel.broadcasterUserId,
    slug: channel.slug,
    access_token: await sealToken(env, sealFor(member), tokens.accessToken),
    refresh_token: await sealToken(env, sealFor(member), tokens.refreshToken),
    expires_at: tokens.expiresAt,
    scope: tokens.scope,
    connected_at: Date.now(),
  };
  await env.GATEKEEPER_KV.put(channelKey(channel.broadcasterUserId), member);
  await env.GATEKEEPER_KV.put(linkKey(member), JSON.stringify(link));
  if (previous && previous.broadcaster_user_id !== channel.broadcasterUserId) {
    await forgetChannelIndex(env, member, previous.broadcaster_user_id);
  }
  return link;
}

async function forgetChannelIndex(env: GatekeeperEnv, member: string, broadcasterUserId: number) {
  if ((await memberForKickChannel(env, broadcasterUserId)) === member) {
    await env.GATEKEEPER_KV.delete(channelKey(broadcasterUserId));
  }
}

/** Removes the member's link and its channel index entry. */
export async function forgetKickLink(env: GatekeeperEnv, member: string, link: KickLink): Promise<void> {
  await env.GATEKEEPER_KV.delete(linkKey(member));
  await forgetChannelIndex(env, member, link.broadcaster_user_id);
}

/** Writes back only the token fields, onto the record as it is now (none when it was removed meanwhile). */
async function writeTokens(
  env: GatekeeperEnv,
  member: string,
  fields: Pick<KickLink, 'access_token' | 'refresh_token' | 'expires_at' | 'scope'>,
): Promise<KickLink | null> {
  const current = await readKickLink(env, member);
  if (!current) return null;
  const next = { ...current, ...fields };
  await env.GATEKEEPER_KV.put(linkKey(member), JSON.stringify(next));
  return next;
}

export const notConnected = () =>
  new ApiError('conflict', 'Kick is not connected for this member: connect Kick first (POST /kick/connect)');
const connectAgain = () =>
  new ApiError(
    'conflict',
    'Kick no longer accepts this account link: connect Kick again (POST /kick/connect)',
  );

/** Both tokens of a link, opened; null when they do not open (the record was tampered with or copied). */
export async function openKickTokens(
  env: GatekeeperEnv,
  member: string,
  link: KickLink,
): Promise<{ accessToken: string | null; refreshToken: string | null }> {
  return {
    accessToken: await openToken(env, sealFor(member), link.access_token),
    refreshToken:
      link.refresh_token === null ? null : await openToken(env, sealFor(member), link.refresh_token),
  };
}

/**
 * Refreshes the member's tokens. Kick rotates refresh tokens, so of two requests refreshing at once the
 * second is refused: it then takes the tokens the first one stored. A refusal otherwise ends the link's
 * usefulness (the refresh token is dropped, the status says not connected) until the member connects again.
 */
async function refreshLink(
  env: GatekeeperEnv,
  member: string,
  link: KickLink,
): Promise<{ link: KickLink; accessToken: string }> {
  const { refreshToken } = await openKickTokens(env, member, link);
  if (refreshToken === null) throw connectAgain();
  let tokens: KickTokens;
  try {
    tokens = await refreshTokens(env, refreshToken);
  } catch (err) {
    if (!(err instanceof KickApiError)) throw err;
    if (!err.grantRefused) {
      console.error(`kick: refreshing the tokens of ${member} failed: ${err.message}`);
      throw new ApiError('upstream_error', 'Kick did not answer the token refresh; try again');
    }
    const now = await readKickLink(env, member);
    if (now && now.access_token !== link.access_token && now.expires_at - EXPIRY_MARGIN_MS > Date.now()) {
      const accessToken = await openToken(env, sealFor(member), now.access_token);
      if (accessToken !== null) return { link: now, accessToken };
    }
    console.error(`kick: Kick refused the refresh token of ${member}: ${err.message}`);
    if (now && now.refresh_token === link.refresh_token) {
      await writeTokens(env, member, {
        access_token: now.access_token,
        refresh_token: null,
        expires_at: now.expires_at,
        scope: now.scope,
      });
    }
    throw connectAgain();
  }
  const written = await writeTokens(env, member, {
    access_token: await sealToken(env, sealFor(member), tokens.accessToken),
    refresh_token: await sealToken(env, sealFor(member), tokens.refreshToken),
    expires_at: tokens.expiresAt,
    scope: tokens.scope,
  });
  if (!written) throw notConnected();
  return { link: written, accessToken: tokens.accessToken };
}

/**
 * Runs `use` with a working access token of the member: refreshed first when it has expired (or is about
 * to), and once more when Kick answers 401 anyway. Not connected, or Kick refusing the link: 409 `conflict`.
 */
export async function withKickToken<T>(
  env: GatekeeperEnv,
  member: string,
  use: (accessToken: string, link: KickLink) => Promise<T>,
  known?: KickLink,
): Promise<T> {
  let link = known ?? (await readKickLink(env, member));
  if (!link) throw notConnected();
  if (link.refresh_token === null) throw connectAgain();
  let accessToken: string | null = null;
  let refreshed = false;
  if (link.expires_at - EXPIRY_MARGIN_MS > Date.now()) {
    accessToken = (await openKickTokens(env, member, link)).accessToken;
  }
  if (accessToken === null) {
    ({ link, accessToken } = await refreshLink(env, member, link));
    refreshed = true;
  }
  try {
    return await use(accessToken, link);
  } catch (err) {
    if (!(err instanceof KickApiError) || err.status !== 401) throw err;
    if (refreshed) throw connectAgain();
  }
  ({ link, accessToken } = await refreshLink(env, member, link));
  try {
    return await use(accessToken, link);
  } catch (err) {
    if (err instanceof KickApiError && err.status === 401) throw connectAgain();
    throw err;
  }
}
