// The data directory as a live source (decisions §3): first start, external edits, corrupt and deleted files, atomic writes.
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { atomicFs } from '../../daemon/src/store/atomic-file.js';
import { api, startTestDaemon, subscribe, type TestDaemon, waitFor } from '../support/daemon.js';

let daemon: TestDaemon;
let overlayId: string;
let file: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  overlayId = daemon.overlays.list()[0]!.id;
  file = join(daemon.dataDir.overlaysDir, `${overlayId}.json`);
});
afterAll(() => daemon?.stop());
afterEach(() => vi.restoreAllMocks());

/** Makes every write of the daemon fail as a full disk does, once its temporary file exists. */
function fillTheDisk(code = 'ENOSPC'): void {
  const open = atomicFs.open;
  vi.spyOn(atomicFs, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
    const handle = await open(...args);
    vi.spyOn(handle, 'writeFile').mockRejectedValue(
      Object.assign(new Error(`${code}: no space left on device, write`), { code }),
    );
    return handle;
  });
}

describe('first start', () => {
  it('creates the layout: one demo overlay, empty rules, media/, admin.key', async () => {
    expect(await readdir(daemon.dataDir.overlaysDir)).toEqual([`${overlayId}.json`]);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
      id: overlayId,
      name: 'Demo overlay',
      width: 1920,
      height: 1080,
    });
    expect(JSON.parse(await readFile(daemon.dataDir.rulesFile, 'utf8'))).toEqual([]);
    expect((await stat(daemon.dataDir.mediaDir)).isDirectory()).toBe(true);
  });
});

describe('edits made by other programs', () => {
  it('broadcasts an edited file as overlay-update within a second', async () => {
    const client = await subscribe(daemon, overlayId);
    const edited = { ...JSON.parse(await readFile(file, 'utf8')), name: 'Edited by hand' };
    const started = Date.now();
    await writeFile(file, JSON.stringify(edited, null, 2));
    const update = await client.next((m) => m.type === 'overlay-update', 2000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(update).toMatchObject({ type: 'overlay-update', overlayId, overlay: { name: 'Edited by hand' } });
    expect(daemon.overlays.get(overlayId)?.name).toBe('Edited by hand');
    client.close();
  });

  it('picks up an editor-style atomic replace (write elsewhere, rename over)', async () => {
    const client = await subscribe(daemon, overlayId);
    const edited = { ...JSON.parse(await readFile(file, 'utf8')), name: 'Renamed over' };
    await writeFile(`${file}.swp`, JSON.stringify(edited));
    await rename(`${file}.swp`, file);
    expect(await client.next((m) => m.type === 'overlay-update', 2000)).toMatchObject({
      overlay: { name: 'Renamed over' },
    });
    client.close();
  });

  it('reports a corrupt file with its path and reason, keeps the last good state, never overwrites it', async () => {
    const client = await subscribe(daemon, overlayId);
    const before = daemon.overlays.get(overlayId);
    const corrupt = '{"id": "broken", "name": ';
    await writeFile(file, corrupt);
    await waitFor(
      () => daemon.logs.some((line) => line.includes(file) && line.includes('not valid JSON')),
      2000,
      'the report',
    );
    expect(daemon.overlays.get(overlayId)).toEqual(before);
    // A change through the API would overwrite the file: refused while it cannot be read.
    const put = await api(daemon, 'PUT', `/api/overlays/${overlayId}`, {
      name: 'API',
      width: 10,
      height: 10,
    });
    expect(put.status).toBe(409);
    expect((await put.json()).error.message).toContain(file);
    expect(await readFile(file, 'utf8')).toBe(corrupt);
    // The page still gets the last good state.
    expect((await fetch(`${daemon.url}/overlay/${overlayId}`)).status).toBe(200);
    expect(client.received.filter((m) => m.type === 'overlay-update')).toEqual([]);

    // Fixing the file brings it back in force.
    await writeFile(file, JSON.stringify({ ...before, name: 'Fixed' }));
    expect(await client.next((m) => m.type === 'overlay-update', 2000)).toMatchObject({
      overlay: { name: 'Fixed' },
    });
    client.close();
  });

  it('reports a file that is valid JSON but not an overlay, naming the field', async () => {
    const other = join(daemon.dataDir.overlaysDir, '11111111-1111-4111-8111-111111111111.json');
    await writeFile(
      other,
      JSON.stringify({
        id: '11111111-1111-4111-8111-111111111111',
        name: 'x',
        width: 'wide',
        height: 1,
        widgets: [],
      }),
    );
    await waitFor(
      () => daemon.logs.some((line) => line.includes(other) && line.includes('width')),
      2000,
      'the report',
    );
    expect(daemon.overlays.get('11111111-1111-4111-8111-111111111111')).toBeUndefined();
    await rm(other);
  });

  it('adds an overlay whose file appears, and removes one whose file is deleted', async () => {
    const id = '22222222-2222-4222-8222-222222222222';
    const path = join(daemon.dataDir.overlaysDir, `${id}.json`);
    await writeFile(path, JSON.stringify({ id, name: 'Dropped in', width: 100, height: 100, widgets: [] }));
    await waitFor(() => daemon.overlays.get(id) !== undefined, 2000, 'the new overlay');
    const client = await subscribe(daemon, id);
    await rm(path);
    expect((await client.closed).code).toBe(1000);
    expect(daemon.overlays.get(id)).toBeUndefined();
    expect((await fetch(`${daemon.url}/overlay/${id}`)).status).toBe(404);
  });
});

describe('writes of the daemon', () => {
  it('broadcasts its own write once, not again when the watcher sees the file change', async () => {
    const client = await subscribe(daemon, overlayId);
    const res = await api(daemon, 'PUT', `/api/overlays/${overlayId}`, {
      name: 'Once',
      width: 640,
      height: 480,
    });
    expect(res.status).toBe(200);
    await client.next((m) => m.type === 'overlay-update');
    // A later, different change is the next message: nothing was echoed in between.
    await api(daemon, 'PUT', `/api/overlays/${overlayId}`, { name: 'Twice', width: 640, height: 480 });
    await client.next((m) => m.type === 'overlay-update' && m.overlay.name === 'Twice');
    // Give the watcher time to report both writes (settle time + slack) before counting.
    const settled = Date.now() + 500;
    await waitFor(() => Date.now() > settled, 1000);
    expect(
      client.received
        .filter((m) => m.type === 'overlay-update')
        .map((m) => m.type === 'overlay-update' && m.overlay.name),
    ).toEqual(['Once', 'Twice']);
    client.close();
  });

  it('coalesces a burst of updates and leaves no temporary files', async () => {
    const base = daemon.overlays.get(overlayId)!;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => daemon.overlays.update({ ...base, name: `Burst ${i}` })),
    );
    expect(JSON.parse(await readFile(file, 'utf8')).name).toBe('Burst 19');
    expect((await readdir(daemon.dataDir.overlaysDir)).filter((name) => name.includes('.tmp'))).toEqual([]);
  });
});

describe('a full disk', () => {
  it('refuses an overlay save in words (503), applies nothing and leaves no temporary file', async () => {
    const client = await subscribe(daemon, overlayId);
    const before = daemon.overlays.get(overlayId)!;
    const onDisk = await readFile(file, 'utf8');
    fillTheDisk();
    const put = await api(daemon, 'PUT', `/api/overlays/${overlayId}`, {
      name: 'Never written',
      width: 640,
      height: 480,
    });
    expect(put.status).toBe(503);
    const body = (await put.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('unavailable');
    expect(body.error.message).toMatch(/disk is full \(ENOSPC\)/);
    expect(body.error.message).toContain(file);
    // Nothing in force that is not on disk: the page is told the state it had, and the file is as it was.
    expect(daemon.overlays.get(overlayId)).toEqual(before);
    await client.next((m) => m.type === 'overlay-update' && m.overlay.name === before.name);
    expect(await readFile(file, 'utf8')).toBe(onDisk);
    expect((await readdir(daemon.dataDir.overlaysDir)).filter((name) => name.includes('.tmp'))).toEqual([]);
    client.close();
  });

  it('refuses a new overlay, rules and settings alike, and names a used-up quota (EDQUOT)', async () => {
    const overlays = daemon.overlays.list().length;
    const rules = daemon.rules.current();
    const settings = daemon.settings.current();
    fillTheDisk('EDQUOT');
    const created = await api(daemon, 'POST', '/api/overlays', { name: 'New', width: 10, height: 10 });
    expect(created.status).toBe(503);
    expect(((await created.json()) as { error: { message: string } }).error.message).toMatch(/EDQUOT/);
    expect(daemon.overlays.list()).toHaveLength(overlays);
    const rulesPut = await api(daemon, 'PUT', '/api/rules', [
      { id: 'lost', trigger: 'follow', actions: [{ overlayId, widgetId: 'w', command: 'reset' }] },
    ]);
    expect(rulesPut.status).toBe(503);
    expect(daemon.rules.current()).toEqual(rules);
    const settingsPut = await api(daemon, 'PUT', '/api/settings', { tts: { maxChars: 42 } });
    expect(settingsPut.status).toBe(503);
    expect(((await settingsPut.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    expect(daemon.settings.current()).toEqual(settings);
    expect((await readdir(daemon.dataDir.root)).filter((name) => name.includes('.tmp'))).toEqual([]);
    expect((await readdir(daemon.dataDir.overlaysDir)).filter((name) => name.includes('.tmp'))).toEqual([]);
  });
});

describe('settings.json', () => {
  it('takes a settings.json written by hand where there was none, while events are journaled beside it', async () => {
    const fresh = await startTestDaemon();
    try {
      await expect(stat(fresh.dataDir.settingsFile)).rejects.toThrow();
      const gift = {
        type: 'gift',
        user: { uniqueId: 'fan', nickname: 'Fan' },
        data: { giftName: 'Rose', repeatCount: 1 },
      };
      for (let i = 0; i < 5; i++) expect((await api(fresh, 'POST', '/api/events', gift)).status).toBe(202);
      await writeFile(fresh.dataDir.settingsFile, JSON.stringify({ tts: { maxChars: 140 } }, null, 2));
      await waitFor(() => fresh.settings.current().tts.maxChars === 140, 2000, 'the new file');
      await rm(fresh.dataDir.settingsFile);
      for (let i = 0; i < 5; i++) expect((await api(fresh, 'POST', '/api/events', gift)).status).toBe(202);
      expect(fresh.settings.current().tts.maxChars).toBe(140);
    } finally {
      await fresh.stop();
    }
  });

  const secrets = {
    obs: { url: 'ws://127.0.0.1:4455', password: 'obs-secret' },
    youtube: { apiKey: 'AIzaSyKey_123' },
    sources: [{ platform: 'tiktok', channel: 'streamer' }],
  };

  it('picks up a valid hand edit within a second', async () => {
    expect((await api(daemon, 'PUT', '/api/settings', secrets)).status).toBe(200);
    const stored = JSON.parse(await readFile(daemon.dataDir.settingsFile, 'utf8'));
    const started = Date.now();
    await writeFile(
      daemon.dataDir.settingsFile,
      JSON.stringify({ ...stored, tts: { ...stored.tts, maxChars: 150 } }, null, 2),
    );
    await waitFor(() => daemon.settings.current().tts.maxChars === 150, 2000, 'the hand edit');
    expect(Date.now() - started).toBeLessThan(1000);
    const view = (await (await api(daemon, 'GET', '/api/settings')).json()) as { tts: { maxChars: number } };
    expect(view.tts.maxChars).toBe(150);
  });

  it('refuses a save (409 naming the file and the problem) while the file holds an invalid value, and keeps every secret', async () => {
    expect((await api(daemon, 'PUT', '/api/settings', secrets)).status).toBe(200);
    const stored = JSON.parse(await readFile(daemon.dataDir.settingsFile, 'utf8'));
    const broken = JSON.stringify({ ...stored, tts: { ...stored.tts, maxChars: 'lots' } }, null, 2);
    await writeFile(daemon.dataDir.settingsFile, broken);
    await waitFor(
      () => daemon.logs.some((l) => l.includes(daemon.dataDir.settingsFile) && l.includes('maxChars')),
      2000,
      'the report',
    );
    // The last good settings stay in force.
    expect(daemon.settings.current().obs.password).toBe('obs-secret');
    const view = (await (await api(daemon, 'GET', '/api/settings')).json()) as Record<string, unknown>;
    const put = await api(daemon, 'PUT', '/api/settings', view);
    expect(put.status).toBe(409);
    const message = ((await put.json()) as { error: { message: string } }).error.message;
    expect(message).toContain(daemon.dataDir.settingsFile);
    expect(message).toContain('maxChars');
    expect(await readFile(daemon.dataDir.settingsFile, 'utf8')).toBe(broken);
    const problem = (await (await api(daemon, 'GET', '/api/settings/problem')).json()) as { problem: string };
    expect(problem.problem).toContain(daemon.dataDir.settingsFile);

    // Fixed by hand: in force again, secrets and sources included, and saves go through.
    await writeFile(daemon.dataDir.settingsFile, JSON.stringify({ ...stored, tts: { maxChars: 120 } }));
    await waitFor(() => daemon.settings.current().tts.maxChars === 120, 2000, 'the fixed file');
    expect((await api(daemon, 'PUT', '/api/settings', view)).status).toBe(200);
    const saved = JSON.parse(await readFile(daemon.dataDir.settingsFile, 'utf8'));
    expect(saved.obs.password).toBe('obs-secret');
    expect(saved.youtube.apiKey).toBe('AIzaSyKey_123');
    expect(saved.sources).toEqual([{ platform: 'tiktok', channel: 'streamer', enabled: true }]);
    expect((await stat(daemon.dataDir.settingsFile)).mode & 0o777).toBe(0o600);
  });

  it('an invalid file at start: defaults in force, but a save (even keeping the secrets) never erases them', async () => {
    const dir = `${daemon.dataDir.root}-settings`;
    const first = await startTestDaemon({ dataDir: dir });
    expect((await api(first, 'PUT', '/api/settings', secrets)).status).toBe(200);
    await first.close();
    const stored = JSON.parse(await readFile(join(dir, 'settings.json'), 'utf8'));
    const broken = JSON.stringify({ ...stored, points: { perLike: -1 } }, null, 2);
    await writeFile(join(dir, 'settings.json'), broken);
    const second = await startTestDaemon({ dataDir: dir });
    try {
      expect(second.logs.some((l) => l.includes(join(dir, 'settings.json')) && l.includes('perLike'))).toBe(
        true,
      );
      const put = await api(second, 'PUT', '/api/settings', {
        obs: { password: { set: true } },
        youtube: { apiKey: { set: true } },
      });
      expect(put.status).toBe(409);
      expect(await readFile(join(dir, 'settings.json'), 'utf8')).toBe(broken);
    } finally {
      await second.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('rules.json', () => {
  it('does not overwrite an edit made by another program that it has not read yet: 409, the edit in force', async () => {
    const rules = [
      {
        id: 'edited-first',
        trigger: 'follow',
        actions: [{ overlayId, widgetId: 'w', command: 'show-alert', payload: {} }],
      },
    ];
    const text = JSON.stringify(rules);
    // A watcher that waits long for files to settle, so the API call surely comes before it reads the edit.
    const slow = await startTestDaemon({ watchSettleMs: 5000 });
    try {
      // Saved by hand, then replaced through the API before the watcher reports the edit.
      await writeFile(slow.dataDir.rulesFile, text);
      const put = await api(slow, 'PUT', '/api/rules', []);
      expect(put.status).toBe(409);
      expect((await put.json()).error.code).toBe('conflict');
      expect(slow.rules.current().map((rule) => rule.id)).toEqual(['edited-first']);
      expect(await readFile(slow.dataDir.rulesFile, 'utf8')).toBe(text);
      // Sent again, now that the edit has been read, the replacement goes through.
      expect((await api(slow, 'PUT', '/api/rules', [])).status).toBe(200);
      expect(slow.rules.current()).toEqual([]);
    } finally {
      await slow.stop();
    }
  });

  it('picks up an external edit and keeps the last good rules when it breaks', async () => {
    const rules = [
      {
        id: 'hand',
        trigger: 'follow',
        actions: [{ overlayId, widgetId: 'w', command: 'show-alert', payload: {} }],
      },
    ];
    await writeFile(daemon.dataDir.rulesFile, JSON.stringify(rules));
    await waitFor(() => daemon.rules.current().length === 1, 2000, 'the edited rules');
    await writeFile(daemon.dataDir.rulesFile, '[{"id": 1}]');
    await waitFor(
      () => daemon.logs.some((line) => line.includes(daemon.dataDir.rulesFile)),
      2000,
      'the report',
    );
    expect(daemon.rules.current()[0]?.id).toBe('hand');
    const put = await api(daemon, 'PUT', '/api/rules', []);
    expect(put.status).toBe(409);
    expect(await readFile(daemon.dataDir.rulesFile, 'utf8')).toBe('[{"id": 1}]');
  });

  it('names the line and column of a JSON error, in the log and in the refusal', async () => {
    const broken = '[\n  {\n    "id": "hand",\n    "trigger": "follow"\n    "actions": []\n  }\n]\n';
    await writeFile(daemon.dataDir.rulesFile, broken);
    await waitFor(
      () =>
        daemon.logs.some(
          (line) => line.includes(daemon.dataDir.rulesFile) && line.includes('line 5, column 5'),
        ),
      2000,
      'the report with its line',
    );
    const put = await api(daemon, 'PUT', '/api/rules', []);
    expect(put.status).toBe(409);
    expect(((await put.json()) as { error: { message: string } }).error.message).toContain(
      'line 5, column 5',
    );
    // The Rules view asks when it opens.
    const problem = (await (await api(daemon, 'GET', '/api/rules/problem')).json()) as { problem: string };
    expect(problem.problem).toContain(daemon.dataDir.rulesFile);
    expect(problem.problem).toContain('line 5, column 5');
    await writeFile(daemon.dataDir.rulesFile, '[]\n');
    await waitFor(() => daemon.rules.unreadable === undefined, 2000, 'the fixed rules');
    expect(await (await api(daemon, 'GET', '/api/rules/problem')).json()).toEqual({ problem: null });
  });
});

describe('restart', () => {
  it('loads what was persisted, and reports a corrupt file at start without touching it', async () => {
    const dataDir = daemon.dataDir.root;
    const first = await startTestDaemon({ dataDir: `${dataDir}-restart` });
    const id = first.overlays.list()[0]!.id;
    await api(first, 'PUT', `/api/overlays/${id}`, { name: 'Persisted', width: 10, height: 10 });
    const broken = join(first.dataDir.overlaysDir, '33333333-3333-4333-8333-333333333333.json');
    await writeFile(broken, 'not json');
    await first.close();
    const second = await startTestDaemon({ dataDir: `${dataDir}-restart` });
    try {
      expect(second.overlays.get(id)?.name).toBe('Persisted');
      expect(second.logs.some((line) => line.includes(broken))).toBe(true);
      expect(await readFile(broken, 'utf8')).toBe('not json');
    } finally {
      await second.close();
      await rm(`${dataDir}-restart`, { recursive: true, force: true });
    }
  });
});
