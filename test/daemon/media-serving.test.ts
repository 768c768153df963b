// Serving /assets/* (interface §4.2): validators, ranges, HEAD, and files that change or go away between requests.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaFiles } from '../../daemon/src/media/media.js';
import { rawRequest, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
const SMALL = Buffer.from('0123456789abcdefghij');
/** Larger than what is kept in memory, so it is streamed from disk. */
const LARGE = randomBytes(3 * 1024 * 1024 + 17);

beforeAll(async () => {
  daemon = await startTestDaemon();
  const media = daemon.dataDir.mediaDir;
  await writeFile(join(media, 'small.png'), SMALL);
  await writeFile(join(media, 'large.mp4'), LARGE);
  await symlink(join(media, 'small.png'), join(media, 'alias.png'));
});
afterAll(() => daemon?.stop());

/** GET (or another method) with the body as bytes. */
function fetchAsset(path: string, headers: Record<string, string> = {}, method = 'GET') {
  return fetch(`http://127.0.0.1:${daemon.port}${path}`, { method, headers }).then(async (res) => ({
    status: res.status,
    headers: res.headers,
    body: Buffer.from(await res.arrayBuffer()),
  }));
}

describe('GET /assets/*', () => {
  it('sends the bytes with type, length, ETag, Last-Modified, the 5-minute cache and the sandbox CSP', async () => {
    for (let i = 0; i < 2; i++) {
      // The second request is answered from memory: it must look the same.
      const res = await fetchAsset('/assets/small.png');
      expect(res.status).toBe(200);
      expect(res.body.equals(SMALL)).toBe(true);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('content-length')).toBe(String(SMALL.length));
      expect(res.headers.get('etag')).toMatch(/^W\/"20-\d+"$/);
      expect(res.headers.get('last-modified')).toBeTruthy();
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('content-security-policy')).toContain('sandbox');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const etag = (await fetchAsset('/assets/small.png')).headers.get('etag') ?? '';
    const res = await fetchAsset('/assets/small.png', { 'If-None-Match': etag });
    expect(res.status).toBe(304);
    expect(res.body.length).toBe(0);
    expect((await fetchAsset('/assets/small.png', { 'If-None-Match': 'W/"1-1"' })).status).toBe(200);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await fetchAsset('/assets/large.mp4', {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(LARGE.length));
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.body.length).toBe(0);
  });

  it.each([
    ['small.png', SMALL],
    ['large.mp4', LARGE],
  ])('serves byte ranges of %s (206, suffix ranges, 416 past the end)', async (name, bytes) => {
    const part = await fetchAsset(`/assets/${name}`, { Range: 'bytes=2-9' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 2-9/${bytes.length}`);
    expect(part.body.equals(bytes.subarray(2, 10))).toBe(true);
    const tail = await fetchAsset(`/assets/${name}`, { Range: 'bytes=-5' });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(bytes.subarray(bytes.length - 5))).toBe(true);
    const past = await fetchAsset(`/assets/${name}`, { Range: `bytes=${bytes.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
  });

  it('streams a large file whole', async () => {
    const res = await fetchAsset('/assets/large.mp4');
    expect(res.status).toBe(200);
    expect(res.body.equals(LARGE)).toBe(true);
  });

  it('serves a symlink that stays inside media/', async () => {
    const res = await fetchAsset('/assets/alias.png');
    expect(res.status).toBe(200);
    expect(res.body.equals(SMALL)).toBe(true);
  });

  it('serves the new bytes once a file is replaced, and 404 once it is deleted', async () => {
    const path = join(daemon.dataDir.mediaDir, 'changing.png');
    await writeFile(path, 'first version');
    expect((await fetchAsset('/assets/changing.png')).body.toString()).toBe('first version');
    // Same size, swapped in by rename the way uploads are.
    await writeFile(`${path}.tmp`, 'other version');
    await rename(`${path}.tmp`, path);
    expect((await fetchAsset('/assets/changing.png')).body.toString()).toBe('other version');
    // Rewritten in place with another size.
    await writeFile(path, 'a third, longer version');
    expect((await fetchAsset('/assets/changing.png')).body.toString()).toBe('a third, longer version');
    await rm(path);
    const gone = await rawRequest(daemon.port, {
      path: '/assets/changing.png',
      headers: { Host: 'localhost' },
    });
    expect(gone.status).toBe(404);
    expect(gone.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});

describe('the in-memory copy of small files', () => {
  it('reads and counts a file once when many requests for it arrive before it is cached', async () => {
    const mediaDir = join(daemon.dataDir.root, 'cache-media');
    await mkdir(mediaDir);
    const bytes = randomBytes(64 * 1024);
    await writeFile(join(mediaDir, 'burst.png'), bytes);
    const media = new MediaFiles(mediaDir);
    const server = createServer((req, res) => {
      void media.serve(req, res, (req.url ?? '').slice('/assets/'.length), (status) => {
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`http://127.0.0.1:${port}/assets/burst.png`).then(async (res) => ({
            status: res.status,
            body: Buffer.from(await res.arrayBuffer()),
          })),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body.equals(bytes)).toBe(true);
      }
      // Counted more than once, the total would creep up until the cache evicted every file.
      expect(media.cachedBytes).toBe(bytes.length);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
