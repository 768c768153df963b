import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { constantTimeEqual, DeviceStore } from './store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'devices-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('constantTimeEqual', () => {
  it('tells equal strings from different ones of the same or another length', () => {
    expect(constantTimeEqual('ABCDEFGHIJ', 'ABCDEFGHIJ')).toBe(true);
    expect(constantTimeEqual('ABCDEFGHIJ', 'ABCDEFGHIK')).toBe(false);
    expect(constantTimeEqual('ABCDEFGHIJ', 'ABCDEFGHI')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('é', 'e')).toBe(false);
  });
});

describe('DeviceStore', () => {
  it('keeps only the SHA-256 of each token, in a 0600 file that a new store reads back', async () => {
    const store = await DeviceStore.open(dir, { now: () => Date.UTC(2026, 0, 1) });
    const { device, token } = await store.create('Phone', 'moderator');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(device).toEqual({
      id: expect.any(String),
      name: 'Phone',
      role: 'moderator',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastSeenAt: null,
      lastIp: null,
    });
    const file = join(dir, 'devices.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(token);
    expect(text).toContain(createHash('sha256').update(token).digest('hex'));

    const again = await DeviceStore.open(dir);
    expect(again.authenticate(token)).toEqual(device);
    expect(again.authenticate(`${token}x`)).toBeUndefined();
    expect(again.authenticate(undefined)).toBeUndefined();
  });

  it('touch records when and from where a device was last seen', async () => {
    const store = await DeviceStore.open(dir, { now: () => Date.UTC(2026, 0, 2) });
    const { device } = await store.create('Phone', 'owner');
    await store.touch(device.id, '203.0.113.9');
    expect(store.list()).toEqual([
      { ...device, lastSeenAt: '2026-01-02T00:00:00.000Z', lastIp: '203.0.113.9' },
    ]);
  });

  it('revoke and revokeAll remove devices at once and tell the listeners', async () => {
    const store = await DeviceStore.open(dir);
    const revoked: string[] = [];
    store.onRevoke((d) => revoked.push(d.name));
    const a = await store.create('A', 'owner');
    await store.create('B', 'moderator');
    await store.create('C', 'moderator');
    expect(await store.revoke(a.device.id)).toBe(true);
    expect(store.authenticate(a.token)).toBeUndefined();
    expect(await store.revoke(a.device.id)).toBe(false);
    expect(await store.revokeAll()).toBe(2);
    expect(revoked).toEqual(['A', 'B', 'C']);
    expect(store.list()).toEqual([]);
    expect((await DeviceStore.open(dir)).list()).toEqual([]);
  });

  it('a new admin key revokes every device before the store is used again', async () => {
    const keys = { current: 'old' };
    const store = await DeviceStore.open(dir, { adminKey: () => keys.current });
    const { token } = await store.create('Phone', 'owner');
    keys.current = 'new';
    expect(store.authenticate(token)).toBeUndefined();
    expect(store.list()).toEqual([]);
  });

  it('refuses a devices.json that does not parse rather than overwrite it', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 'devices.json'), '{"devices":[{"id":1}]}');
    await expect(DeviceStore.open(dir)).rejects.toThrow(/devices.json/);
  });
});
