// No lost edits: ETag on the documents the dashboard edits, If-Match on PUT → 412 conflict.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';

let daemon: TestDaemon;
beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(() => daemon?.stop());

function put(path: string, body: unknown, ifMatch?: string): Promise<Response> {
  return fetch(`${daemon.url}${path}`, {
    method: 'PUT',
    headers: {
      Authorization: `Bearer ${daemon.adminKey}`,
      'Content-Type': 'application/json',
      ...(ifMatch ? { 'If-Match': ifMatch } : {}),
    },
    body: JSON.stringify(body),
  });
}

describe('overlays', () => {
  it('a save with the ETag of a version edited by hand since is 412 conflict, and the edit stays', async () => {
    const overlay = daemon.overlays.list()[0]!;
    const path = `/api/overlays/${overlay.id}`;
    const loaded = await api(daemon, 'GET', path);
    const etag = loaded.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const { id: _id, ...mine } = (await loaded.json()) as typeof overlay;

    const file = join(daemon.dataDir.overlaysDir, `${overlay.id}.json`);
    const theirs = { ...JSON.parse(await readFile(file, 'utf8')), name: 'Edited by hand' };
    await writeFile(file, JSON.stringify(theirs, null, 2));
    await waitFor(() => daemon.overlays.get(overlay.id)?.name === 'Edited by hand');

    const refused = await put(path, { ...mine, name: 'Saved from a stale tab' }, etag ?? '');
    expect(refused.status).toBe(412);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('conflict');
    expect(refused.headers.get('etag')).not.toBe(etag);
    expect(JSON.parse(await readFile(file, 'utf8')).name).toBe('Edited by hand');

    // With the current tag the save goes through, and answers the next tag.
    const current = (await api(daemon, 'GET', path)).headers.get('etag') ?? '';
    const saved = await put(path, { ...mine, name: 'Chosen' }, current);
    expect(saved.status).toBe(200);
    expect(saved.headers.get('etag')).not.toBe(current);
    // Two tabs: the second save with the first tag loses, instead of silently winning.
    expect((await put(path, { ...mine, name: 'Other tab' }, current)).status).toBe(412);
    // Scripts without If-Match are still accepted.
    expect((await put(path, { ...mine, name: 'Script' })).status).toBe(200);
  });

  it('widget state kept from events does not count as a change', async () => {
    const overlay = daemon.overlays.list()[0]!;
    const path = `/api/overlays/${overlay.id}`;
    const created = await api(daemon, 'PUT', path, {
      name: overlay.name,
      width: overlay.width,
      height: overlay.height,
      widgets: [{ id: 'g', type: 'goal', x: 0, y: 0, source: 'likes', target: 100 }],
    });
    expect(created.status).toBe(200);
    const loaded = await api(daemon, 'GET', path);
    const etag = loaded.headers.get('etag') ?? '';
    const body = (await loaded.json()) as typeof overlay;
    await api(daemon, 'POST', '/api/events', {
      type: 'like',
      user: { uniqueId: 'u', nickname: 'n' },
      data: { likeCount: 5 },
    });
    await waitFor(() => (daemon.overlays.get(overlay.id)?.widgets[0] as { current?: number })?.current === 5);
    const { id: _id, ...mine } = body;
    expect((await put(path, { ...mine, name: 'Renamed live' }, etag)).status).toBe(200);
  });
});

describe('rules', () => {
  it('GET has an ETag; PUT with a stale one is 412 conflict and changes nothing', async () => {
    const first = await api(daemon, 'GET', '/api/rules');
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"/);
    const overlayId = daemon.overlays.list()[0]!.id;
    const rule = (id: string) => ({
      id,
      trigger: 'follow',
      actions: [{ overlayId, widgetId: 'w', command: 'reset' }],
    });
    const other = await put('/api/rules', [rule('from-another-tab')], etag);
    expect(other.status).toBe(200);
    const stale = await put('/api/rules', [rule('from-this-tab')], etag);
    expect(stale.status).toBe(412);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('conflict');
    const now = (await (await api(daemon, 'GET', '/api/rules')).json()) as { id: string }[];
    expect(now.map((r) => r.id)).toEqual(['from-another-tab']);
  });
});

describe('settings', () => {
  it('GET has an ETag; PUT with a stale one is 412 conflict and changes nothing', async () => {
    const first = await api(daemon, 'GET', '/api/settings');
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"/);
    const mine = (await first.json()) as { tts: Record<string, unknown> };
    const other = await put('/api/settings', { ...mine, tts: { ...mine.tts, maxChars: 111 } }, etag);
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).not.toBe(etag);
    const stale = await put('/api/settings', { ...mine, tts: { ...mine.tts, maxChars: 222 } }, etag);
    expect(stale.status).toBe(412);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('conflict');
    expect(stale.headers.get('etag')).toBe(other.headers.get('etag'));
    expect(daemon.settings.current().tts.maxChars).toBe(111);
    // A hand edit since the page loaded counts as a change too.
    const loaded = (await api(daemon, 'GET', '/api/settings')).headers.get('etag') ?? '';
    const stored = JSON.parse(await readFile(daemon.dataDir.settingsFile, 'utf8'));
    await writeFile(daemon.dataDir.settingsFile, JSON.stringify({ ...stored, tts: { maxChars: 99 } }));
    await waitFor(() => daemon.settings.current().tts.maxChars === 99);
    expect((await put('/api/settings', mine, loaded)).status).toBe(412);
  });

  it('a partial PUT keeps every stored secret it leaves out; null clears one', async () => {
    const set = await put('/api/settings', {
      obs: { url: 'ws://127.0.0.1:4455', password: 'obs-secret' },
      youtube: { apiKey: 'AIzaSyKey_123' },
    });
    expect(set.status).toBe(200);
    const partial = await put('/api/settings', { tts: { maxChars: 80 } });
    expect(partial.status).toBe(200);
    expect(await partial.json()).toMatchObject({
      obs: { password: { set: true } },
      youtube: { apiKey: { set: true } },
      tts: { maxChars: 80 },
    });
    const stored = JSON.parse(await readFile(daemon.dataDir.settingsFile, 'utf8'));
    expect(stored.obs.password).toBe('obs-secret');
    expect(stored.youtube.apiKey).toBe('AIzaSyKey_123');
    const cleared = await put('/api/settings', { obs: { password: null } });
    expect(await cleared.json()).toMatchObject({
      obs: { password: { set: false } },
      youtube: { apiKey: { set: true } },
    });
  });
});
