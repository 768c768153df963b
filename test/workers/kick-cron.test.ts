// The cron's pass over every linked Kick channel (its own storage: every link in this file is one of its
// own): more links than one run handles are all reached across runs, each once a pass, and the next pass
// starts a day after the last one began.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import worker from '../../workers/src/index.js';
import {
  KICK_CRON_SCHEDULE,
  KICK_CRON_STATE_KEY,
  resubscribeKickChannels,
} from '../../workers/src/kick/subscriptions.js';
import { WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import { kickControl, kickSeen, linkedMember, putKickUser, uniqueKickUserId } from './helpers/kick.js';

const DAY = 24 * 60 * 60 * 1000;

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);
// Each test starts as a Gatekeeper whose cron has not run yet.
beforeEach(() => env.GATEKEEPER_KV.delete(KICK_CRON_STATE_KEY));
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Kick drops each channel's follow subscription (as after a day of failed deliveries). */
async function dropFollows(kickIds: number[]): Promise<void> {
  for (const id of kickIds) {
    const res = await kickControl(`/users/${id}/subscriptions/channel.followed`, { method: 'DELETE' });
    expect(res.status).toBe(204);
  }
}

/** The channels whose follow subscription is there (again). */
async function following(kickIds: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const id of kickIds) {
    if ((await kickSeen(id)).subscriptions.some((s) => s.event === 'channel.followed')) out.push(id);
  }
  return out;
}

describe('the cron’s pass over the links', () => {
  it('reaches every link across runs, a bounded number a run, each once a pass; a new pass a day later', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const kickIds: number[] = [];
    for (let i = 0; i < 7; i++) {
      const id = uniqueKickUserId();
      await putKickUser(id);
      await linkedMember(`kick-cron-${i}`, id);
      kickIds.push(id);
    }
    await dropFollows(kickIds);
    const start = Date.now();
    const reached: number[] = [];
    // Three runs of at most 3 links: 3, 3, 1. Each link got back is dropped again at once, so a link
    // handled twice in the pass would show.
    for (const [run, expected] of [3, 3, 1].entries()) {
      const report = await resubscribeKickChannels(env, { linksPerRun: 3, now: start + run * 600_000 });
      expect(report, `run ${run + 1}`).toMatchObject({ links: expected, truncated: run < 2, idle: false });
      const back = await following(kickIds);
      expect(back, `run ${run + 1}`).toHaveLength(expected);
      reached.push(...back);
      await dropFollows(back);
    }
    expect([...reached].sort()).toEqual([...kickIds].sort());
    // The rest of the day: nothing more (every link was checked today).
    const later = await resubscribeKickChannels(env, { linksPerRun: 3, now: start + 3 * 600_000 });
    expect(later).toMatchObject({ links: 0, idle: true });
    expect(await following(kickIds)).toEqual([]);
    // A day after the pass began, the next one starts from the first link.
    const next = await resubscribeKickChannels(env, { linksPerRun: 3, now: start + DAY });
    expect(next).toMatchObject({ links: 3, truncated: true });
    expect(await following(kickIds)).toEqual(
      reached.slice(0, 3).sort((a, b) => kickIds.indexOf(a) - kickIds.indexOf(b)),
    );
  });

  it('runs on its own trigger, every 10 minutes; the daily trigger only sweeps tunnels', async () => {
    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    const id = uniqueKickUserId();
    await putKickUser(id);
    await linkedMember('kick-cron-trigger', id);
    await dropFollows([id]);
    const run = async (cron: string) => {
      const ctx = createExecutionContext();
      await worker.scheduled(createScheduledController({ cron }), env, ctx);
      await waitOnExecutionContext(ctx);
    };
    await run('17 4 * * *');
    expect(await following([id])).toEqual([]);
    await run(KICK_CRON_SCHEDULE);
    expect(await following([id])).toEqual([id]);
    expect(logs.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(
      /kick: \d+ linked channel\(s\) checked/,
    );
  });
});
