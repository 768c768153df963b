// The relay over days of fake time: licences that expire and are refreshed (short ones, as
// LICENCE_TTL_SECONDS sets them, and the default week), each alarm run twice at the same instant, a hub
// evicted between runs, a publisher that does not come back, and a lapse at the end of the week.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signLicence } from '../../workers/src/licence.js';
import { OverlayRelay } from '../../workers/src/relay/hub.js';
import { PUBLISHER_RETURN_MS } from '../../workers/src/relay/hub-alarm.js';
import { gatekeeper, WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import {
  event,
  hubStub,
  licenceOf,
  member,
  newOverlayId,
  publisher,
  type Socket,
  setMember,
  snapshot,
  viewer,
  viewerSocket,
} from './helpers/relay-sockets.js';

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);
afterEach(() => {
  vi.useRealTimers();
});

const DAY = 24 * 60 * 60 * 1000;
type Hub = ReturnType<typeof hubStub>;

/**
 * Runs the hub's alarm twice at this instant (on the live object, or on a fresh one over the same
 * storage, as after an eviction); after each run the next alarm is ahead of now, or there is none.
 */
async function alarmTwice(hub: Hub, options: { evicted?: boolean } = {}): Promise<void> {
  for (let run = 0; run < 2; run++) {
    if (options.evicted) {
      await runInDurableObject(hub, (_instance, state) => new OverlayRelay(state, env).alarm());
    } else {
      await runDurableObjectAlarm(hub);
    }
    const next = await runInDurableObject(hub, (_instance, state) => state.storage.getAlarm());
    if (next !== null) expect(next).toBeGreaterThan(Date.now());
  }
}

async function pageStatus(subdomain: string, overlayId: string): Promise<number> {
  const res = await gatekeeper(`/v/${subdomain}/${overlayId}`);
  await res.body?.cancel();
  return res.status;
}

async function newViewerStatus(subdomain: string, overlayId: string): Promise<number> {
  const res = await viewerSocket(subdomain, overlayId);
  if (res instanceof Response) return res.status;
  res.close();
  return 101;
}

/** Nothing but what this overlay's viewers expect: the snapshot's init and then this event. */
async function expectRepublished(viewers: Socket[], name: string, seq: number): Promise<void> {
  for (const v of viewers) {
    expect(await v.next()).toEqual(snapshot(name).init);
    expect(await v.next()).toMatchObject({ type: 'stream-event', seq });
  }
}

describe('licence expiry, refreshed within 10 minutes', () => {
  it('keeps every viewer, the page and the kept messages across several 30-second licences', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const m = await member('relay-week-short', { ttlSeconds: 30 });
    expect(m.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(30_000);
    const overlayId = newOverlayId();
    const hub = hubStub(m.subdomain, overlayId);
    let daemon = (await publisher(m.token, overlayId)).socket;
    let seq = 1;
    daemon.send(snapshot('Short'));
    daemon.send(event(seq));
    await expect.poll(() => hub.published()).toBe(true);
    const viewers = [
      (await viewer(m.subdomain, overlayId)).socket,
      (await viewer(m.subdomain, overlayId)).socket,
    ];
    let exp = m.expiresAt.getTime();
    // Back at once, a second later, five minutes later, just inside the ten minutes; every other
    // round the hub was evicted in between.
    for (const [round, backAfter] of [0, 1000, 5 * 60_000, PUBLISHER_RETURN_MS - 1000].entries()) {
      vi.setSystemTime(exp);
      await alarmTwice(hub, { evicted: round % 2 === 1 });
      expect(await daemon.closed).toMatchObject({ code: 4401 });
      expect(await hub.published()).toBe(true);
      expect(await pageStatus(m.subdomain, overlayId)).toBe(200);
      vi.setSystemTime(exp + backAfter);
      await alarmTwice(hub, { evicted: round % 2 === 0 });
      const refreshed = await licenceOf(m.userId, { ttlSeconds: 30 });
      const back = await publisher(refreshed.token, overlayId);
      expect(back.hello.lastSeq).toBe(seq);
      expect(back.viewers.count).toBe(2);
      daemon = back.socket;
      daemon.send(snapshot('Short'));
      daemon.send(event(++seq));
      await expectRepublished(viewers, 'Short', seq);
      exp = refreshed.expiresAt.getTime();
    }
    // A viewer resuming now still gets what was kept across the expiries.
    const resuming = await viewer(m.subdomain, overlayId, { resumeFrom: 1 });
    expect((await resuming.socket.take(seq - 1)).map((f) => f.seq)).toEqual(
      Array.from({ length: seq - 1 }, (_, i) => i + 2),
    );
    expect(await resuming.socket.next()).toMatchObject({ type: 'resumed', gap: false });
    for (const v of viewers) expect(v.unread()).toEqual([]);
    daemon.close();
  });

  it('ends the publication when no publisher came back within 10 minutes of the expiry', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const m = await member('relay-week-away', { ttlSeconds: 20 });
    const overlayId = newOverlayId();
    const hub = hubStub(m.subdomain, overlayId);
    const daemon = (await publisher(m.token, overlayId)).socket;
    daemon.send(snapshot('Away'));
    await expect.poll(() => hub.published()).toBe(true);
    const watching = (await viewer(m.subdomain, overlayId)).socket;
    const exp = m.expiresAt.getTime();
    vi.setSystemTime(exp);
    await alarmTwice(hub);
    expect(await daemon.closed).toMatchObject({ code: 4401 });
    vi.setSystemTime(exp + PUBLISHER_RETURN_MS - 1);
    await alarmTwice(hub);
    expect(await pageStatus(m.subdomain, overlayId)).toBe(200);
    vi.setSystemTime(exp + PUBLISHER_RETURN_MS);
    await alarmTwice(hub);
    expect(await watching.closed).toMatchObject({ code: 4403 });
    expect(await pageStatus(m.subdomain, overlayId)).toBe(404);
    expect(await newViewerStatus(m.subdomain, overlayId)).toBe(404);
    // Coming back later publishes afresh.
    const late = await publisher((await licenceOf(m.userId, { ttlSeconds: 20 })).token, overlayId);
    expect(late.hello.lastSeq).toBeNull();
    late.socket.close();
  });

  it('a page asking after the 10 minutes, before the alarm ran, gets 404', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const m = await member('relay-week-page', { ttlSeconds: 20 });
    const overlayId = newOverlayId();
    const hub = hubStub(m.subdomain, overlayId);
    const daemon = (await publisher(m.token, overlayId)).socket;
    daemon.send(snapshot('Page'));
    await expect.poll(() => hub.published()).toBe(true);
    const watching = (await viewer(m.subdomain, overlayId)).socket;
    daemon.close();
    await daemon.closed;
    vi.setSystemTime(m.expiresAt.getTime() + PUBLISHER_RETURN_MS);
    expect(await pageStatus(m.subdomain, overlayId)).toBe(404);
    expect(await watching.closed).toMatchObject({ code: 4403 });
  });
});

describe('a week with the default licence', () => {
  it('walks seven days of re-checks and two expiries, evicted every other day, then ends at a lapse', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const m = await member('relay-week-default');
    expect(m.expiresAt.getTime() - Date.now()).toBeGreaterThan(6 * DAY);
    const overlayId = newOverlayId();
    const hub = hubStub(m.subdomain, overlayId);
    let daemon = (await publisher(m.token, overlayId)).socket;
    let seq = 1;
    daemon.send(snapshot('Week'));
    daemon.send(event(seq));
    await expect.poll(() => hub.published()).toBe(true);
    const watching = (await viewer(m.subdomain, overlayId)).socket;
    const start = Date.now();
    let exp = m.expiresAt.getTime();
    for (let day = 1; day <= 8; day++) {
      vi.setSystemTime(start + day * DAY);
      if (Date.now() >= exp) {
        // The daemon noticed the 4401 and is back with a refreshed licence 30 seconds later.
        vi.setSystemTime(exp);
        await alarmTwice(hub, { evicted: day % 2 === 0 });
        expect(await daemon.closed).toMatchObject({ code: 4401 });
        vi.setSystemTime(exp + 30_000);
        const refreshed = await signLicence(env, { sub: m.userId, tier: 'premium', epoch: 1 });
        const back = await publisher(refreshed.token, overlayId);
        expect(back.hello.lastSeq).toBe(seq);
        daemon = back.socket;
        daemon.send(snapshot('Week'));
        daemon.send(event(++seq));
        await expectRepublished([watching], 'Week', seq);
        exp = refreshed.expiresAt.getTime();
      }
      await alarmTwice(hub, { evicted: day % 2 === 0 });
      daemon.send(event(++seq));
      expect(await watching.next()).toMatchObject({ seq });
      expect(await pageStatus(m.subdomain, overlayId)).toBe(200);
    }
    // The membership lapses: within a minute the publication ends.
    await setMember(m.userId, { tier: 'free', epoch: 1 });
    vi.setSystemTime(Date.now() + 60_000);
    await alarmTwice(hub);
    expect(await watching.closed).toMatchObject({ code: 4403 });
    expect(await daemon.closed).toMatchObject({ code: 4403 });
    expect(await pageStatus(m.subdomain, overlayId)).toBe(404);
  });
});
