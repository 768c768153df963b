import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LicenceRecord, readLicence, writeLicence } from '../../daemon/src/licence/licence-file.js';
import { makeDataDir } from '../support/daemon.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await makeDataDir();
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

const record = (n: number): LicenceRecord => ({
  // Long enough that a torn write would be visible as a truncated or mixed file.
  token: `header.${'p'.repeat(4000)}${n}.sig`,
  tier: 'premium',
  validated_at: new Date(1_780_000_000_000 + n).toISOString(),
  user_id: 'patron-1',
  verdict: 'ok',
});

describe('license.json', () => {
  it('is written with mode 0600 even under a permissive umask', async () => {
    const file = join(dataDir, 'license.json');
    const previous = process.umask(0o000);
    try {
      await writeLicence(file, record(1));
    } finally {
      process.umask(previous);
    }
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await writeLicence(file, record(2)); // a rewrite keeps it private too
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('is replaced atomically: a reader racing the writer sees a whole old or new licence, never a torn one', async () => {
    const file = join(dataDir, 'license.json');
    await writeLicence(file, record(0));
    let writing = true;
    const reads: string[] = [];
    const reader = (async () => {
      while (writing) {
        const r = await readLicence(file);
        reads.push(r.ok && r.record ? r.record.token.slice(-6) : `failed: ${r.ok ? 'missing' : r.error}`);
      }
    })();
    for (let n = 1; n <= 40; n++) await writeLicence(file, record(n));
    writing = false;
    await reader;
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((r) => r.startsWith('failed'))).toEqual([]);
    // No temporary files left behind.
    expect(await readdir(dataDir)).toEqual(['license.json']);
    expect(JSON.parse(await readFile(file, 'utf8')).token.endsWith('40.sig')).toBe(true);
  });

  it('reports a file that is not a licence instead of treating it as signed out', async () => {
    const file = join(dataDir, 'license.json');
    await writeLicence(file, record(1));
    await writeFile(file, JSON.stringify({ token: 'x', tier: 'gold' }));
    const read = await readLicence(file);
    expect(read.ok).toBe(false);
    expect(!read.ok && read.error).toMatch(/license\.json: tier/);
  });
});
