import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/wait.js';
import { type FileChange, FileWatcher } from './file-watcher.js';

let dir: string;
let files: FileWatcher;
let lines: string[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-watcher-'));
  lines = [];
  files = new FileWatcher({ settleMs: 20, log: (line) => lines.push(line) });
});

afterEach(async () => {
  await files.close();
  await rm(dir, { recursive: true, force: true });
});

/** What a listener was told, in order. */
function recorder(): { seen: FileChange[]; listener: (change: FileChange) => void } {
  const seen: FileChange[] = [];
  return { seen, listener: (change) => seen.push(change) };
}

describe('the file watcher', () => {
  it('notices a file that did not exist when the watch began, and its deletion', async () => {
    const path = join(dir, 'licence.json');
    const { seen, listener } = recorder();
    files.watch(path, listener);
    await writeFile(path, '{}');
    await waitFor(() => seen.length === 1, 3000, 'the new file');
    expect(seen).toEqual(['changed']);
    await rm(path);
    await waitFor(() => seen.length === 2, 3000, 'the deletion');
    expect(seen).toEqual(['changed', 'deleted']);
    // Created again after its deletion: still followed.
    await writeFile(path, '{"again":true}');
    await waitFor(() => seen.length === 3, 3000, 'the file again');
    expect(seen).toEqual(['changed', 'deleted', 'changed']);
    expect(lines).toEqual([]);
  });

  it('follows a file replaced by a rename, time after time', async () => {
    const path = join(dir, 'tunnel.json');
    await writeFile(path, '{"n":0}');
    const { seen, listener } = recorder();
    files.watch(path, listener);
    for (let n = 1; n <= 3; n++) {
      const temporary = join(dir, `.tunnel.json.${n}.tmp`);
      await writeFile(temporary, `{"n":${n}}`);
      await rename(temporary, path);
      await waitFor(() => seen.length === n, 3000, `replacement ${n}`);
    }
    expect(seen).toEqual(['changed', 'changed', 'changed']);
  });

  it('watches a file once however many listen to it, and tells each of them', async () => {
    const path = join(dir, 'twitch.json');
    const first = recorder();
    const second = recorder();
    const stopFirst = files.watch(path, first.listener);
    files.watch(path, second.listener);
    // Another file of the same folder shares the folder's one watch.
    const other = recorder();
    files.watch(join(dir, 'youtube.json'), other.listener);
    expect(files.watches).toBe(1);
    await writeFile(path, '{}');
    await waitFor(() => first.seen.length === 1 && second.seen.length === 1, 3000, 'both listeners');
    expect(other.seen).toEqual([]);
    // One listener stops: the other goes on being told.
    stopFirst();
    await writeFile(path, '{"changed":true}');
    await waitFor(() => second.seen.length === 2, 3000, 'the second change');
    expect(first.seen).toEqual(['changed']);
    expect(files.watches).toBe(1);
  });

  it('tells nothing for a report that changed nothing it follows (a chmod)', async () => {
    const path = join(dir, 'rules.json');
    const { seen, listener } = recorder();
    files.watch(path, listener);
    const marker = recorder();
    files.watch(join(dir, 'marker'), marker.listener);
    await writeFile(path, '[]');
    await waitFor(() => seen.length === 1, 3000, 'the write');
    await chmod(path, 0o600);
    await writeFile(join(dir, 'marker'), 'x');
    await waitFor(() => marker.seen.length === 1, 3000, 'the marker');
    expect(seen).toEqual(['changed']);
  });

  it('follows the files of a folder that a name test takes, new ones and deleted ones', async () => {
    const overlays = join(dir, 'overlays');
    await mkdir(overlays);
    await writeFile(join(overlays, 'a.json'), '{}');
    const told: string[] = [];
    files.watchFolder(
      overlays,
      (name) => name.endsWith('.json'),
      (change, path) => told.push(`${change} ${path}`),
    );
    await writeFile(join(overlays, 'b.json'), '{}');
    await writeFile(join(overlays, 'notes.txt'), 'not watched');
    await waitFor(() => told.length === 1, 3000, 'the new file');
    await rm(join(overlays, 'a.json'));
    await waitFor(() => told.length === 2, 3000, 'the deletion');
    expect(told).toEqual([`changed ${join(overlays, 'b.json')}`, `deleted ${join(overlays, 'a.json')}`]);
  });

  it('stops watching once closed, or once its last listener leaves', async () => {
    const path = join(dir, 'settings.json');
    const { seen, listener } = recorder();
    const stop = files.watch(path, listener);
    stop();
    expect(files.watches).toBe(0);
    files.watch(path, listener);
    await files.close();
    expect(files.watches).toBe(0);
    // A watch asked for after the close is none.
    files.watch(path, listener);
    expect(files.watches).toBe(0);
    // Another watcher sees the change the closed one no longer reports.
    const witness = new FileWatcher({ settleMs: 20 });
    const seenByWitness = recorder();
    witness.watch(path, seenByWitness.listener);
    try {
      await writeFile(path, '{}');
      await waitFor(() => seenByWitness.seen.length === 1, 3000, 'the witness');
      expect(seen).toEqual([]);
    } finally {
      await witness.close();
    }
  });

  it('a listener that throws does not keep the others from being told', async () => {
    const path = join(dir, 'admin.key');
    files.watch(path, () => {
      throw new Error('boom');
    });
    const { seen, listener } = recorder();
    files.watch(path, listener);
    await writeFile(path, 'key');
    await waitFor(() => seen.length === 1, 3000, 'the second listener');
    expect(lines).toEqual([`[files] following ${path} failed: boom`]);
  });
});
