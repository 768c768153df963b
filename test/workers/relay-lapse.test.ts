// The end of a publication as viewers notice it: the daemon unpublishing (at once), the member no longer
// Premium or signed out (within a minute), and the hub's unpublishMember for the rest of the Worker.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { OverlayRelay } from '../../workers/src/relay/hub.js';
import { PUBLISHER_RETURN_MS } from '../../workers/src/relay/hub-alarm.js';
import { gatekeeper, WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import {
  event,
  hubStub,
  member,
  newOverlayId,
  publisher,
  setMember,
  snapshot,
  viewer,
  viewerSocket,
} from './helpers/relay-sockets.js';

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);

async function published(label: string) {
  const m = await member(label);
  const overlayId = newOverlayId();
  const daemon = await publisher(m.token, overlayId);
  daemon.socket.send(snapshot(label));
  daemon.socket.send(event(1));
  const hub = hubStub(m.subdomain, overlayId);
  await expect.poll(() => hub.published()).toBe(true);
  const viewers = [await viewer(m.subdomain, overlayId), await viewer(m.subdomain, overlayId)];
  return { ...m, overlayId, hub, daemon: daemon.socket, viewers: viewers.map((v) => v.socket) };
}

async function statusOfNewViewer(subdomain: string, overlayId: string): Promise<number> {
  const res = await viewerSocket(subdomain, overlayId);
  if (res instanceof Response) return res.status;
  res.close();
  return 101;
}

describe('unpublish', () => {
  it('closes every viewer with 4403 at once and forgets the overlay: new viewers get 404', async () => {
    const s = await published('relay-unpublish');
    s.daemon.send({ type: 'unpublish' });
    for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
    expect(await s.hub.published()).toBe(false);
    expect(await statusOfNewViewer(s.subdomain, s.overlayId)).toBe(404);
    // Published again later, it starts afresh: the daemon is told the hub has nothing.
    s.daemon.close();
    const again = await publisher(s.token, s.overlayId);
    expect(again.hello.lastSeq).toBeNull();
    expect(again.viewers.count).toBe(0);
    again.socket.send(snapshot('Back'));
    await expect.poll(() => s.hub.published()).toBe(true);
    const fresh = await viewer(s.subdomain, s.overlayId, { resumeFrom: 1 });
    expect(fresh.init).toEqual(snapshot('Back').init);
    expect(await fresh.socket.next()).toMatchObject({ type: 'resumed', replayed: 0, gap: true });
    again.socket.close();
  });

  it('unpublishMember closes viewers and the publisher with 4403', async () => {
    const s = await published('relay-unpublish-member');
    await s.hub.unpublishMember('signed out');
    expect(await s.daemon.closed).toMatchObject({ code: 4403 });
    for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
    expect(await statusOfNewViewer(s.subdomain, s.overlayId)).toBe(404);
  });
});

describe('the member no longer Premium', () => {
  for (const [what, record] of [
    ['a stored verdict of Free', { tier: 'free', epoch: 1 }],
    ['a logout (licence epoch revoked)', { tier: 'premium', epoch: 2 }],
  ] as const) {
    it(`ends the publication within a minute after ${what}: viewers 4403, new viewers 404`, async () => {
      const s = await published(`relay-lapse-${record.tier}`);
      await setMember(s.userId, record);
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        // Checked at most every minute: half a minute on, the viewers still watch.
        vi.setSystemTime(Date.now() + 30_000);
        await runDurableObjectAlarm(s.hub);
        s.daemon.send(event(2));
        for (const v of s.viewers) expect(await v.next()).toMatchObject({ seq: 2 });
        vi.setSystemTime(Date.now() + 30_000);
        await runDurableObjectAlarm(s.hub);
        for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
        expect(await s.daemon.closed).toMatchObject({ code: 4403 });
        expect(await statusOfNewViewer(s.subdomain, s.overlayId)).toBe(404);
        expect(await s.hub.published()).toBe(false);
      } finally {
        vi.useRealTimers();
      }
    });
  }

  it('ends it even while the publisher is away', async () => {
    const s = await published('relay-lapse-away');
    s.daemon.close();
    await s.daemon.closed;
    await setMember(s.userId, { tier: 'free', epoch: 1 });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      await runDurableObjectAlarm(s.hub);
      for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
    } finally {
      vi.useRealTimers();
    }
    expect(await statusOfNewViewer(s.subdomain, s.overlayId)).toBe(404);
  });

  it('ends a publication whose publisher stayed away 10 minutes past its licence’s expiry', async () => {
    const s = await published('relay-away-past-exp');
    s.daemon.close();
    await s.daemon.closed;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(s.expiresAt.getTime());
      await runDurableObjectAlarm(s.hub);
      expect(await s.hub.published()).toBe(true);
      vi.setSystemTime(s.expiresAt.getTime() + PUBLISHER_RETURN_MS);
      await runDurableObjectAlarm(s.hub);
      for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
    } finally {
      vi.useRealTimers();
    }
    expect(await statusOfNewViewer(s.subdomain, s.overlayId)).toBe(404);
  });

  it('answers 404 to a page asking published() when the check is overdue, without waiting for the alarm', async () => {
    const s = await published('relay-lapse-page');
    await setMember(s.userId, { tier: 'free', epoch: 1 });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      expect(await s.hub.published()).toBe(false);
    } finally {
      vi.useRealTimers();
    }
    for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
  });
});

describe('the member’s viewer address changed (SUBDOMAIN_SECRET)', () => {
  const rotated = { ...env, SUBDOMAIN_SECRET: 'a-new-subdomain-secret' };

  it('ends the old address like an unpublished one: its page 404, its viewers 4403, the publisher told to reconnect', async () => {
    const s = await published('relay-moved');
    // The Worker runs with the new secret: a page check on the old address finds it moved.
    const published_ = await runInDurableObject(s.hub, (_instance, state) =>
      new OverlayRelay(state, rotated).published(),
    );
    expect(published_).toBe(false);
    for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
    expect(await s.daemon.closed).toMatchObject({ code: 4401 });
    expect(await s.hub.published()).toBe(false);
    expect(await statusOfNewViewer(s.subdomain, s.overlayId)).toBe(404);
    const page = await gatekeeper(`/v/${s.subdomain}/${s.overlayId}`);
    expect(page.status).toBe(404);
    await page.body?.cancel();
  });

  it('ends it within a minute by the alarm too, with nobody asking', async () => {
    const s = await published('relay-moved-alarm');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      await runInDurableObject(s.hub, (_instance, state) => new OverlayRelay(state, rotated).alarm());
      for (const v of s.viewers) expect(await v.closed).toMatchObject({ code: 4403 });
    } finally {
      vi.useRealTimers();
    }
    expect(await statusOfNewViewer(s.subdomain, s.overlayId)).toBe(404);
  });
});
