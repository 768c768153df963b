// The application's webhook subscriptions to a connected channel's events: made at the link, removed at the
// unlink, and made again by the daily cron when Kick dropped them (it drops subscriptions whose deliveries
// kept failing for a day).
import { KICK_EVENT_TYPES } from '../../../shared/protocol/kick.js';
import type { GatekeeperEnv } from '../env.js';
import { readMember } from '../membership/member-store.js';
import { createSubscriptions, deleteSubscriptions, listSubscriptions, revokeToken } from './api.js';
import { kickChannelOf } from './channel.js';
import {
  forgetKickLink,
  KICK_LINK_PREFIX,
  type KickLink,
  openKickTokens,
  readKickLink,
  withKickToken,
} from './tokens.js';

/** The cron looks at this many links per run at most (KV lists 1,000 keys a page), so a run stays bounded. */
export const KICK_CRON_MAX_LINKS = 1000;

const ofChannel = (broadcasterUserId: number) => (s: { broadcaster_user_id?: number | undefined }) =>
  s.broadcaster_user_id === undefined || s.broadcaster_user_id === broadcasterUserId;

/** Subscribes the channel to every event type the Gatekeeper maps that it is not subscribed to yet; those names. */
export async function ensureKickSubscriptions(
  env: GatekeeperEnv,
  accessToken: string,
  broadcasterUserId: number,
): Promise<string[]> {
  const existing = (await listSubscriptions(env, accessToken)).filter(ofChannel(broadcasterUserId));
  const have = new Set(existing.map((s) => s.event));
  const missing = KICK_EVENT_TYPES.filter((type) => !have.has(type));
  if (missing.length > 0) await createSubscriptions(env, accessToken, broadcasterUserId, missing);
  return missing;
}

/** Removes every subscription of the application to the channel. */
export async function removeKickSubscriptions(
  env: GatekeeperEnv,
  accessToken: string,
  broadcasterUserId: number,
): Promise<number> {
  const ids = (await listSubscriptions(env, accessToken))
    .filter(ofChannel(broadcasterUserId))
    .map((s) => s.id);
  await deleteSubscriptions(env, accessToken, ids);
  return ids.length;
}

/**
 * Unlinks: the channel's subscriptions removed and both tokens revoked at Kick, then the link forgotten.
 * What Kick fails to do is logged; the link is forgotten all the same. `lapsed`: the member stopped using
 * the app, and their feed sockets close as signed out (4403) rather than unlinked (1000).
 */
export async function unlinkKick(
  env: GatekeeperEnv,
  member: string,
  link: KickLink,
  why: 'unlinked' | 'lapsed' = 'unlinked',
): Promise<void> {
  try {
    await withKickToken(
      env,
      member,
      (token) => removeKickSubscriptions(env, token, link.broadcaster_user_id),
      link,
    );
  } catch (err) {
    console.error(
      `kick: unsubscribing channel ${link.slug} of member ${member} failed: ${(err as Error).message}`,
    );
  }
  // A refresh on the way stored new tokens: those are the ones to revoke.
  const current = (await readKickLink(env, member)) ?? link;
  const { accessToken, refreshToken } = await openKickTokens(env, member, current);
  const revocations: Promise<void>[] = [];
  if (accessToken) revocations.push(revokeToken(env, accessToken, 'access_token'));
  if (refreshToken) revocations.push(revokeToken(env, refreshToken, 'refresh_token'));
  for (const result of await Promise.allSettled(revocations)) {
    if (result.status === 'rejected')
      console.error(`kick: revoking a token of ${member} failed: ${result.reason}`);
  }
  await forgetKickLink(env, member, current);
  // The events kept for the daemon go too, and its feed socket closes: nothing of the channel stays.
  await kickChannelOf(env, member).forget(why);
}

export interface ResubscribeReport {
  links: number;
  recreated: number;
  /** Links of members who stopped using the app (their membership record expired), unlinked. */
  unlinked: number;
  failed: number;
  /** Links left for the next run because the bound was reached. */
  truncated: boolean;
}

/**
 * The daily cron: every linked channel gets back the subscriptions Kick dropped, and links of members
 * who stopped using the app are undone. One failing member (Kick
 * down, a link Kick no longer accepts) is logged and skipped; at most KICK_CRON_MAX_LINKS links per run.
 */
export async function resubscribeKickChannels(env: GatekeeperEnv): Promise<ResubscribeReport> {
  const report: ResubscribeReport = { links: 0, recreated: 0, unlinked: 0, failed: 0, truncated: false };
  let cursor: string | undefined;
  do {
    const page = await env.GATEKEEPER_KV.list({
      prefix: KICK_LINK_PREFIX,
      limit: Math.min(1000, KICK_CRON_MAX_LINKS - report.links),
      ...(cursor ? { cursor } : {}),
    });
    for (const { name } of page.keys) {
      report.links += 1;
      const member = name.slice(KICK_LINK_PREFIX.length);
      try {
        const link = await readKickLink(env, member);
        if (!link) continue;
        // The membership record outlives every licence by weeks; once it is gone, nobody can use this
        // link any more, and the Gatekeeper keeps no Kick token of someone who stopped using the app.
        if ((await readMember(env, member)) === null) {
          await unlinkKick(env, member, link, 'lapsed');
          report.unlinked += 1;
          console.log(`kick: unlinked channel ${link.slug}: its member no longer uses the app`);
          continue;
        }
        if (link.refresh_token === null) continue;
        const made = await withKickToken(
          env,
          member,
          (token, current) => ensureKickSubscriptions(env, token, current.broadcaster_user_id),
          link,
        );
        if (made.length > 0) console.log(`kick: re-created ${made.join(', ')} for channel ${link.slug}`);
        report.recreated += made.length;
      } catch (err) {
        report.failed += 1;
        console.error(
          `kick: the subscriptions of member ${member} could not be checked: ${(err as Error).message}`,
        );
      }
    }
    cursor = page.list_complete ? undefined : page.cursor;
    if (cursor && report.links >= KICK_CRON_MAX_LINKS) {
      report.truncated = true;
      cursor = undefined;
    }
  } while (cursor);
  return report;
}
