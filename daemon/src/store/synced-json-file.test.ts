import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { atomicFs } from './atomic-file.js';
import { jsonSyntaxProblem, SyncedJsonFile, WriteFailed } from './synced-json-file.js';

const Counter = v.object({ count: v.number() });
type Counter = v.InferOutput<typeof Counter>;

let dir: string;
let path: string;
let lines: string[];
let edits: Counter[];

function open(): SyncedJsonFile<Counter> {
  return new SyncedJsonFile<Counter>({
    path,
    parse: (text) => parseJsonWith(Counter, text),
    onEdited: (value) => edits.push(value),
    log: (line) => lines.push(line),
    label: '[test]',
  });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'synced-'));
  path = join(dir, 'counter.json');
  lines = [];
  edits = [];
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe('SyncedJsonFile', () => {
  it('writes the newest of a burst of saves and leaves no temporary file', async () => {
    const file = open();
    const saves = Array.from({ length: 50 }, (_, count) => file.save({ count }));
    expect(file.value).toEqual({ count: 49 });
    expect(new Set(await Promise.all(saves))).toEqual(new Set(['written']));
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ count: 49 });
    expect(await readdir(dir)).toEqual(['counter.json']);
  });

  it('takes an edit by another program that it has not read yet instead of writing over it', async () => {
    const file = open();
    await file.save({ count: 1 });
    const edit = '{"count":7}';
    // A different size, so the signature differs however coarse the clock is.
    await writeFile(path, edit);
    await expect(file.save({ count: 2 })).resolves.toBe('edited');
    expect(file.value).toEqual({ count: 7 });
    expect(edits).toEqual([{ count: 7 }]);
    // Left as its author wrote it, not re-formatted.
    expect(await readFile(path, 'utf8')).toBe(edit);
    // Saved again, now that the edit has been read, the value goes through.
    await expect(file.save({ count: 3 })).resolves.toBe('written');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ count: 3 });
  });

  it('keeps the last good value of a file that does not parse, never writes over it, and lets go once it is deleted', async () => {
    const file = open();
    await file.save({ count: 1 });
    await writeFile(path, '{"count": "many"');
    await file.read(true);
    expect(file.unreadable).toMatch(/not valid JSON/);
    expect(file.value).toEqual({ count: 1 });
    expect(lines.join('\n')).toContain(`cannot read ${path}`);
    await expect(file.save({ count: 2 })).resolves.toBe('unreadable');
    expect(await readFile(path, 'utf8')).toBe('{"count": "many"');
    await rm(path);
    expect(file.deleted()).toBe(true);
    expect(file.unreadable).toBeUndefined();
    await expect(file.save({ count: 2 })).resolves.toBe('written');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ count: 2 });
  });

  it('reads a repaired file again and says so', async () => {
    const file = open();
    await writeFile(path, 'not json');
    await file.read(false);
    expect(file.value).toBeUndefined();
    expect(lines.join('\n')).toContain('it is not loaded');
    await writeFile(path, '{"count":5}');
    await file.read(true);
    expect(file.value).toEqual({ count: 5 });
    expect(edits).toEqual([{ count: 5 }]);
    expect(lines.at(-1)).toContain('reads again');
  });

  it('writes nothing once discarded', async () => {
    const file = open();
    const pending = file.save({ count: 1 });
    await file.discard();
    await pending;
    await expect(readFile(path, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('puts back what is on disk when a write fails for want of space, and leaves no temporary file', async () => {
    const file = open();
    await file.save({ count: 1 });
    const real = atomicFs.open;
    vi.spyOn(atomicFs, 'open').mockImplementation(async (...args: Parameters<typeof real>) => {
      const handle = await real(...args);
      vi.spyOn(handle, 'writeFile').mockRejectedValue(Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }));
      return handle;
    });
    const failed = file.save({ count: 2 });
    expect(file.value).toEqual({ count: 2 });
    await expect(failed).rejects.toBeInstanceOf(WriteFailed);
    await expect(failed).rejects.toThrow(/disk is full \(ENOSPC\)/);
    expect(file.value).toEqual({ count: 1 });
    expect(await readdir(dir)).toEqual(['counter.json']);
    vi.restoreAllMocks();
    await expect(file.save({ count: 3 })).resolves.toBe('written');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ count: 3 });
  });

  it('names the line and column where a file stops being JSON', async () => {
    expect(jsonSyntaxProblem('{"count": 1}')).toBeUndefined();
    expect(jsonSyntaxProblem('{\n  "count": 1\n  "other": 2\n}')).toMatch(
      /^not valid JSON at line 3, column 3: /,
    );
    const file = open();
    await writeFile(path, '{\n  "count": 1,\n}');
    await file.read(false);
    expect(file.unreadable).toMatch(/line 3, column 1/);
    expect(lines.join('\n')).toMatch(/line 3, column 1/);
  });
});
