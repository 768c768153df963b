// Bad input never costs the streamer an overlay or a lock (decisions-2 §5): saturating widget state,
// lowercase overlay ids, and a deleted unreadable rules.json lifting its lock.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { api, makeDataDir, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';

const MAX = Number.MAX_SAFE_INTEGER;
const running: TestDaemon[] = [];
const dirs: string[] = [];

async function start(dataDir?: string): Promise<TestDaemon> {
  const daemon = await startTestDaemon(dataDir ? { dataDir } : {});
  running.push(daemon);
  return daemon;
}

afterEach(async () => {
  for (const daemon of running.splice(0)) await daemon.stop();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('widget state saturates at Number.MAX_SAFE_INTEGER', () => {
  it('the largest valid gift, twice, leaves an overlay that still loads after a restart', async () => {
    const dataDir = await makeDataDir();
    dirs.push(dataDir);
    await writeFile(join(dataDir, 'rules.json'), '[]\n');
    const first = await start(dataDir);
    const created = await api(first, 'POST', '/api/overlays', {
      name: 'Whales',
      width: 1920,
      height: 1080,
      widgets: [
        { id: 'goal', type: 'goal', x: 0, y: 0, source: 'diamonds', target: 1000 },
        { id: 'count', type: 'counter', x: 0, y: 100, source: 'diamonds' },
        { id: 'top', type: 'top-gifters', x: 0, y: 200 },
      ],
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const gift = {
      type: 'gift',
      user: { uniqueId: 'whale', nickname: 'Whale' },
      data: { giftName: 'Universe', repeatCount: MAX, diamondCount: MAX },
    };
    for (let i = 0; i < 2; i++) expect((await api(first, 'POST', '/api/events', gift)).status).toBe(202);
    await waitFor(async () => {
      const text = await readFile(join(dataDir, 'overlays', `${id}.json`), 'utf8');
      return text.includes(`"current": ${MAX}`);
    });
    await first.close();

    const second = await start(dataDir);
    const res = await api(second, 'GET', `/api/overlays/${id}`);
    expect(res.status).toBe(200);
    const overlay = (await res.json()) as { widgets: Record<string, unknown>[] };
    const byId = Object.fromEntries(overlay.widgets.map((w) => [w.id, w]));
    expect(byId.goal?.current).toBe(MAX);
    expect(byId.count?.value).toBe(MAX);
    expect((byId.top?.entries as { diamonds: number }[])[0]?.diamonds).toBe(MAX);
    expect((await fetch(`${second.url}/overlay/${id}`)).status).toBe(200);
  });
});

describe('overlay ids are lowercase UUIDs', () => {
  it('a file with an uppercase name or id is reported unreadable, unreachable, not counted, never written', async () => {
    const dataDir = await makeDataDir();
    dirs.push(dataDir);
    await writeFile(join(dataDir, 'rules.json'), '[]\n');
    const first = await start(dataDir);
    const before = first.overlays.list().length;
    await first.close();

    const upper = 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D';
    const upperFile = join(dataDir, 'overlays', `${upper}.json`);
    const upperText = `${JSON.stringify({ id: upper, name: 'From uuidgen', width: 1920, height: 1080, widgets: [] })}\n`;
    await writeFile(upperFile, upperText);
    const mixed = 'b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
    const mixedFile = join(dataDir, 'overlays', `${mixed}.json`);
    const mixedText = `${JSON.stringify({ id: mixed.toUpperCase(), name: 'Id edited by hand', width: 1920, height: 1080, widgets: [] })}\n`;
    await writeFile(mixedFile, mixedText);

    const daemon = await start(dataDir);
    expect(daemon.overlays.list()).toHaveLength(before);
    const listed = (await (await api(daemon, 'GET', '/api/overlays')).json()) as { id: string }[];
    expect(listed.map((o) => o.id.toLowerCase())).not.toContain(upper.toLowerCase());
    expect(listed.map((o) => o.id)).not.toContain(mixed);
    for (const id of [upper, upper.toLowerCase(), mixed]) {
      expect((await api(daemon, 'GET', `/api/overlays/${id}`)).status).toBe(404);
    }
    expect(daemon.logs.join('\n')).toMatch(/lowercase/);
    // Nothing rewrote the files or made twins of them.
    expect(await readFile(upperFile, 'utf8')).toBe(upperText);
    expect(await readFile(mixedFile, 'utf8')).toBe(mixedText);
    const files = await readdir(join(dataDir, 'overlays'));
    expect(files.filter((f) => f.toLowerCase() === `${upper.toLowerCase()}.json`)).toHaveLength(1);
  });

  it('a hand edit that uppercases the id of a loaded overlay is not overwritten by the next save', async () => {
    const daemon = await start();
    const overlay = daemon.overlays.list()[0]!;
    const file = join(daemon.dataDir.overlaysDir, `${overlay.id}.json`);
    const edited = `${JSON.stringify({ ...overlay, id: overlay.id.toUpperCase(), name: 'Edited' })}\n`;
    await writeFile(file, edited);
    await waitFor(() => daemon.logs.some((l) => l.includes('not lowercase')));
    const { id: _id, ...input } = overlay;
    const put = await api(daemon, 'PUT', `/api/overlays/${overlay.id}`, {
      ...input,
      name: 'From the dashboard',
    });
    expect(put.status).toBe(409);
    expect(await readFile(file, 'utf8')).toBe(edited);
  });
});

describe('deleting an unreadable file lifts its lock at once', () => {
  it('rules.json: 409 while it does not parse, 200 right after it is deleted, without a restart', async () => {
    const daemon = await start();
    const rulesFile = daemon.dataDir.rulesFile;
    await writeFile(rulesFile, '[{"broken": ');
    await waitFor(() => daemon.logs.some((l) => l.includes('cannot read')));
    expect((await api(daemon, 'PUT', '/api/rules', [])).status).toBe(409);
    await rm(rulesFile);
    await waitFor(async () => (await api(daemon, 'PUT', '/api/rules', [])).status === 200);
    expect(JSON.parse(await readFile(rulesFile, 'utf8'))).toEqual([]);
  });
});
