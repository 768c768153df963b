// The application's webhook subscriptions to a connected channel's events: made at the link, removed at the
// unlink, and made again by the cron's daily pass over every link when Kick dropped them (it drops
// subscriptions whose deliveries kept failing for a day).
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
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

/** The cron trigger of the pass over the links (wrangler.toml `triggers.crons`): every 10 minutes. */
export const KICK_CRON_SCHEDULE = '*/10 * * * *';

/**
 * The bounds of one run. A Worker invocation may make 1,000 subrequests on the Workers Paid plan (the
 * lower of the figures Cloudflare gives; KV and Durable Object calls count as well as fetches). A link
 * costs at most 20: its record and the member's (2 KV reads), an access token refreshed (a call to Kick,
 * a KV read and write), the subscriptions listed and made again (2 calls), all of which once more when
 * Kick answers 401 anyway (12 in all); undoing a link of a member who is gone costs at most 19 (the
 * same, the removal, two revocations, 3 KV calls and the channel object). A run also reads and writes
 * where the pass stands and lists one page of links.
 */
export const KICK_CRON_LIMITS = {
  subrequestsPerRun: 1000,
  subrequestsPerLink: 20,
  subrequestsPerRunOverhead: 10,
  /** Links handled per run: (1,000 - 10) / 20 = 49. At one run every 10 minutes, 7,056 links a day. */
  linksPerRun: Math.floor((1000 - 10) / 20),
  /** A pass over every link starts at most this often; links a pass has not reached yet wait for it. */
  passEveryMs: 24 * 60 * 60 * 1000,
} as const;

/** Where the pass over the links stands, between runs (a KV key). */
export const KICK_CRON_STATE_KEY = 'kick:cron';
const CronState = v.object({
  /** When the current (or last) pass began (ms). */
  passStartedAt: v.pipe(v.number(), v.safeInteger()),
  /** KV's list cursor after the links handled so far; null once the pass reached the last link. */
  cursor: v.nullable(v.pipe(v.string(), v.maxLength(4096))),
});
type CronState = v.InferOutput<typeof CronState>;

async function readCronState(env: GatekeeperEnv): Promise<CronState | null> {
  const text = await env.GATEKEEPER_KV.get(KICK_CRON_STATE_KEY, 'text');
  if (text === null) return null;
  const parsed = parseJsonWith(CronState, text);
  if (!parsed.ok) console.error(`kick: the cron's state is unreadable (${parsed.error}): a new pass starts`);
  return parsed.ok ? parsed.value : null;
}

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
  /** Links left for the next runs of this pass. */
  truncated: boolean;
  /** Nothing to do: the last pass reached every link less than a day ago. */
  idle: boolean;
}

/**
 * One run of the cron: the next links of the pass over every linked channel get back the subscriptions
 * Kick dropped, and links of members who stopped using the app are undone. A pass starts at most once a
 * day and goes on from where the last run stopped (KV's list cursor, kept in KV), at most
 * `linksPerRun` links a run, so every link is reached, each once per pass. One failing member (Kick
 * down, a link Kick no longer accepts) is logged and skipped.
 */
export async function resubscribeKickChannels(
  env: GatekeeperEnv,
  options: { linksPerRun?: number; now?: number } = {},
): Promise<ResubscribeReport> {
  const now = options.now ?? Date.now();
  const linksPerRun = Math.min(1000, Math.max(1, options.linksPerRun ?? KICK_CRON_LIMITS.linksPerRun));
  const report: ResubscribeReport = {
    links: 0,
    recreated: 0,
    unlinked: 0,
    failed: 0,
    truncated: false,
    idle: false,
  };
  const state = await readCronState(env);
  let passStartedAt = state?.passStartedAt ?? now;
  let cursor = state?.cursor ?? undefined;
  if (state && state.cursor === null) {
    if (now - state.passStartedAt < KICK_CRON_LIMITS.passEveryMs) return { ...report, idle: true };
    passStartedAt = now;
  }
  let page: KVNamespaceListResult<unknown, string>;
  try {
    page = await env.GATEKEEPER_KV.list({
      prefix: KICK_LINK_PREFIX,
      limit: linksPerRun,
      ...(cursor ? { cursor } : {}),
    });
  } catch (err) {
    if (!cursor) throw err;
    // A cursor KV no longer takes: this pass starts again from the first link.
    console.error(
      `kick: the cron's place in the links was refused (${(err as Error).message}): starting over`,
    );
    cursor = undefined;
    passStartedAt = now;
    page = await env.GATEKEEPER_KV.list({ prefix: KICK_LINK_PREFIX, limit: linksPerRun });
  }
  // Taken before they are handled: a run that overlaps this one goes on after these links.
  const next: CronState = { passStartedAt, cursor: page.list_complete ? null : page.cursor };
  await env.GATEKEEPER_KV.put(KICK_CRON_STATE_KEY, JSON.stringify(next));
  report.truncated = !page.list_complete;
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
  return report;
}
