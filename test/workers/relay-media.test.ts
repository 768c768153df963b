// Media of public overlays inside workerd: the daemon's upload (HEAD/PUT with a Premium licence, the
// file and member limits, the hash) and the viewers' GET while the overlay is published.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { RELAY_LIMITS } from '../../shared/protocol/relay.js';
import { signLicence } from '../../workers/src/licence.js';
import { MembershipRecheck } from '../../workers/src/member.js';
import { reserveMemberMedia } from '../../workers/src/relay/media-quota.js';
import { gatekeeper, WARM_UP_TIMEOUT_MS } from './helpers/gatekeeper.js';
import { errorOf, publish, relay, subdomainOf, unpublish } from './helpers/relay-app.js';
import { hubStub, member, publisher, snapshot } from './helpers/relay-sockets.js';

const QUOTA = RELAY_LIMITS.mediaMemberBytes;
const FILE_LIMIT = RELAY_LIMITS.mediaFileBytes;

const newMember = (label: string) => `${label}-${crypto.randomUUID()}`;
const licence = async (sub: string, tier: 'free' | 'premium' = 'premium') =>
  (await signLicence(env, { sub, tier })).token;

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A file of `size` random bytes and its content-addressed name. */
async function mediaFile(size: number, ext = 'png'): Promise<{ bytes: Uint8Array; name: string }> {
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += 65536)
    crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65536)));
  return { bytes, name: `${await sha256Hex(bytes)}.${ext}` };
}

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

function put(
  name: string,
  token: string,
  body: BodyInit,
  headers: Record<string, string> = {},
): Promise<Response> {
  const streamed = body instanceof ReadableStream;
  return relay(`/relay/media/${name}`, {
    method: 'PUT',
    headers: { ...auth(token), ...headers },
    body,
    // `duplex` is required by fetch for a streamed body.
    ...(streamed ? { duplex: 'half' } : {}),
  });
}

const head = (name: string, token: string) =>
  relay(`/relay/media/${name}`, { method: 'HEAD', headers: auth(token) });

/** A body sent chunked (no Content-Length) of `total` bytes in 1 MiB chunks. */
function chunked(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close();
      const size = Math.min(1024 * 1024, total - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(7));
    },
  });
}

async function stored(userId: string): Promise<string[]> {
  const listed = await env.RELAY_MEDIA.list({ prefix: `${await subdomainOf(userId)}/` });
  return listed.objects.map((o) => o.key.slice(o.key.indexOf('/') + 1)).sort();
}

const usage = (userId: string) =>
  env.MEMBERSHIP_RECHECK.get(env.MEMBERSHIP_RECHECK.idFromName(`member:${userId}`)).mediaUsage();

/** Fills the member's quota up to `left` bytes short of it, as earlier uploads would have. */
async function fillQuota(userId: string, left: number): Promise<void> {
  const filled = await reserveMemberMedia(env, userId, `${'0'.repeat(64)}.bin`, QUOTA - left, QUOTA);
  expect(filled.ok).toBe(true);
}

beforeAll(async () => {
  await usage(newMember('warm-up'));
}, WARM_UP_TIMEOUT_MS);

describe('PUT and HEAD /relay/media/<sha256>.<ext>: who may upload', () => {
  it('answers 401 without a licence or with a bad one, and stores nothing', async () => {
    const userId = newMember('no-licence');
    const { bytes, name } = await mediaFile(100);
    const missing = await relay(`/relay/media/${name}`, { method: 'PUT', body: bytes });
    expect(await errorOf(missing)).toMatchObject({ status: 401, code: 'unauthenticated' });
    const forged = await put(name, 'not.a.licence', bytes);
    expect(await errorOf(forged)).toMatchObject({ status: 401, code: 'invalid_token' });
    expect((await head(name, 'not.a.licence')).status).toBe(401);
    expect(await stored(userId)).toEqual([]);
  });

  it('answers 403 premium_required to a Free licence', async () => {
    const userId = newMember('free');
    const { bytes, name } = await mediaFile(100);
    const res = await put(name, await licence(userId, 'free'), bytes);
    expect(await errorOf(res)).toMatchObject({ status: 403, code: 'premium_required' });
    expect((await head(name, await licence(userId, 'free'))).status).toBe(403);
    expect(await stored(userId)).toEqual([]);
  });

  it('answers 403 premium_required to a Premium licence whose membership has lapsed since', async () => {
    const { token, userId } = await member('lapsed', { tier: 'free', licenceTier: 'premium' });
    const { bytes, name } = await mediaFile(100);
    expect(await errorOf(await put(name, token, bytes))).toMatchObject({
      status: 403,
      code: 'premium_required',
    });
    expect(await stored(userId)).toEqual([]);
  });

  it('answers 400 to a name that is not <sha256>.<ext>', async () => {
    const token = await licence(newMember('bad-name'));
    const { bytes, name } = await mediaFile(10);
    for (const bad of [
      name.toUpperCase(),
      name.slice(1),
      `${name.slice(0, 64)}`,
      `${name.slice(0, 64)}.toolongext`,
    ]) {
      expect(await errorOf(await put(bad, token, bytes)), bad).toMatchObject({
        status: 400,
        code: 'bad_request',
      });
    }
  });

  it('answers GET and other methods with 405', async () => {
    const token = await licence(newMember('method'));
    const { name } = await mediaFile(10);
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await relay(`/relay/media/${name}`, { method, headers: auth(token) });
      expect(await errorOf(res), method).toMatchObject({ status: 405, code: 'method_not_allowed' });
      expect(res.headers.get('Allow')).toBe('HEAD, PUT');
    }
  });
});

describe('PUT /relay/media/<sha256>.<ext>: the file', () => {
  it('stores the file once: HEAD 404, PUT 201, HEAD 200, the same PUT again 200', async () => {
    const userId = newMember('upload');
    const token = await licence(userId);
    const { bytes, name } = await mediaFile(5000, 'webm');
    expect((await head(name, token)).status).toBe(404);
    expect((await put(name, token, bytes)).status).toBe(201);
    expect((await head(name, token)).status).toBe(200);
    expect((await put(name, token, bytes)).status).toBe(200);
    const object = await env.RELAY_MEDIA.get(`${await subdomainOf(userId)}/${name}`);
    expect(new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(bytes);
    expect(object?.httpMetadata?.contentType).toBe('video/webm');
    expect(await usage(userId)).toBe(5000);
    // Another member's copy of the same file is theirs: HEAD says they do not have it yet.
    expect((await head(name, await licence(newMember('other')))).status).toBe(404);
  });

  it('answers 400 when the body is not the file the name says, and stores nothing', async () => {
    const userId = newMember('mismatch');
    const token = await licence(userId);
    const { name } = await mediaFile(100);
    const other = await mediaFile(100);
    const res = await put(name, token, other.bytes);
    const error = await errorOf(res);
    expect(error).toMatchObject({ status: 400, code: 'bad_request' });
    expect(error.message).toContain('SHA-256');
    expect(await stored(userId)).toEqual([]);
    expect(await usage(userId)).toBe(0);
  });

  it('answers 413 to a file over 20 MiB with a Content-Length, before reading it', async () => {
    const userId = newMember('too-large');
    const token = await licence(userId);
    const { bytes, name } = await mediaFile(FILE_LIMIT + 1);
    const res = await put(name, token, bytes);
    expect(await errorOf(res)).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(await stored(userId)).toEqual([]);
    expect(await usage(userId)).toBe(0);
  });

  it('answers 413 to a chunked body (no Content-Length) as soon as it passes 20 MiB', async () => {
    const userId = newMember('too-large-chunked');
    const token = await licence(userId);
    const res = await put(`${'a'.repeat(64)}.mp4`, token, chunked(FILE_LIMIT + 1));
    expect(await errorOf(res)).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(await stored(userId)).toEqual([]);
  });

  it('takes a chunked body of exactly 20 MiB', async () => {
    const userId = newMember('chunked');
    const token = await licence(userId);
    const bytes = new Uint8Array(FILE_LIMIT).fill(7);
    const name = `${await sha256Hex(bytes)}.mp4`;
    expect((await put(name, token, chunked(FILE_LIMIT))).status).toBe(201);
    expect(await stored(userId)).toEqual([name]);
  });
});

describe('PUT /relay/media: 500 MiB per member', () => {
  it('answers 413 naming the quota when a new file would pass it; a smaller one still fits', async () => {
    const userId = newMember('quota');
    const token = await licence(userId);
    await fillQuota(userId, 1500);
    const big = await mediaFile(2000);
    const error = await errorOf(await put(big.name, token, big.bytes));
    expect(error).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(error.message).toContain('500 MiB');
    const small = await mediaFile(1500);
    expect((await put(small.name, token, small.bytes)).status).toBe(201);
    expect(await usage(userId)).toBe(QUOTA);
    // Already there: a re-upload at a full quota costs nothing and succeeds.
    expect((await put(small.name, token, small.bytes)).status).toBe(200);
    expect(await stored(userId)).toEqual([small.name]);
  });

  it('lets concurrent uploads take exactly what is left, never more', async () => {
    const userId = newMember('concurrent');
    const token = await licence(userId);
    await fillQuota(userId, 3 * 1024);
    const files = await Promise.all(Array.from({ length: 10 }, () => mediaFile(1024)));
    const statuses = await Promise.all(files.map((f) => put(f.name, token, f.bytes).then((r) => r.status)));
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 413)).toHaveLength(7);
    expect(await usage(userId)).toBe(QUOTA);
    expect(await stored(userId)).toHaveLength(3);
  });

  it('counts one file uploaded several times at once only once', async () => {
    const userId = newMember('same-file');
    const token = await licence(userId);
    const { bytes, name } = await mediaFile(4096, 'mp3');
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => put(name, token, bytes).then((r) => r.status)),
    );
    expect(statuses.every((s) => s === 200 || s === 201)).toBe(true);
    expect(await usage(userId)).toBe(4096);
    expect(await stored(userId)).toEqual([name]);
  });
});

describe('GET /v/<subdomain>/<overlayId>/assets/<sha256>.<ext>', () => {
  async function uploaded(label: string, ext = 'png') {
    const userId = newMember(label);
    const file = await mediaFile(3000, ext);
    expect((await put(file.name, await licence(userId), file.bytes)).status).toBe(201);
    const subdomain = await subdomainOf(userId);
    const overlayId = crypto.randomUUID();
    publish(subdomain, overlayId);
    return { ...file, subdomain, overlayId, path: `/v/${subdomain}/${overlayId}/assets/${file.name}` };
  }

  it('serves the file with its type, kept for a year, with an ETag', async () => {
    const { bytes, path } = await uploaded('serve');
    const res = await relay(path);
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('image/png');
    expect(res.headers.get('Cache-Control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('ETag')).toMatch(/^"[^"]+"$/);
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  it('answers 304 to If-None-Match with its ETag', async () => {
    const { path } = await uploaded('etag');
    const first = await relay(path);
    await first.arrayBuffer();
    const etag = first.headers.get('ETag') ?? '';
    const again = await relay(path, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('ETag')).toBe(etag);
    expect(again.headers.get('Cache-Control')).toBe('public, max-age=31536000, immutable');
    expect(await again.text()).toBe('');
  });

  it('answers a range (what a video element asks) with 206', async () => {
    const { bytes, path } = await uploaded('range', 'mp4');
    const res = await relay(path, { headers: { Range: 'bytes=100-199' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('Content-Range')).toBe(`bytes 100-199/${bytes.length}`);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes.subarray(100, 200));
  });

  it('answers 404 while the overlay is not published, and for another member or a missing file', async () => {
    const { subdomain, overlayId, name, path } = await uploaded('unpublished');
    unpublish(subdomain, overlayId);
    expect(await errorOf(await relay(path))).toMatchObject({ status: 404, code: 'not_found' });
    publish(subdomain, overlayId);
    const stranger = await subdomainOf(newMember('stranger'));
    publish(stranger, overlayId);
    const elsewhere = await relay(`/v/${stranger}/${overlayId}/assets/${name}`);
    expect(await errorOf(elsewhere)).toMatchObject({ status: 404, code: 'not_found' });
    const missing = await relay(`/v/${subdomain}/${overlayId}/assets/${'b'.repeat(64)}.png`);
    expect(await errorOf(missing)).toMatchObject({ status: 404, code: 'not_found' });
    const malformed = await relay(`/v/${subdomain}/${overlayId}/assets/logo.png`);
    expect(await errorOf(malformed)).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('through the Worker and the overlay hub', () => {
  it('takes the upload and serves it while the daemon publishes the overlay, 404 once it unpublishes', async () => {
    const { token, subdomain } = await member('media-hub');
    const overlayId = crypto.randomUUID();
    const { bytes, name } = await mediaFile(2048, 'gif');
    const upload = { method: 'PUT', headers: auth(token), body: bytes };
    expect((await gatekeeper(`/relay/media/${name}`, upload)).status).toBe(201);
    expect((await gatekeeper(`/relay/media/${name}`, { method: 'HEAD', headers: auth(token) })).status).toBe(
      200,
    );

    const path = `/v/${subdomain}/${overlayId}/assets/${name}`;
    expect(await errorOf(await gatekeeper(path))).toMatchObject({ status: 404, code: 'not_found' });
    const { socket } = await publisher(token, overlayId);
    socket.send(snapshot('With media'));
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(true);
    const served = await gatekeeper(path);
    expect(served.status).toBe(200);
    expect(served.headers.get('Content-Type')).toBe('image/gif');
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes);

    socket.send({ type: 'unpublish' });
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(false);
    expect(await errorOf(await gatekeeper(path))).toMatchObject({ status: 404, code: 'not_found' });
    socket.close();
  });
});

describe("the member's object keeps the media count", () => {
  it('past the expiry of the member record (its alarm forgets the epoch, not the files counted)', async () => {
    const userId = newMember('alarm');
    const token = await licence(userId);
    const { bytes, name } = await mediaFile(777);
    expect((await put(name, token, bytes)).status).toBe(201);
    const stub = env.MEMBERSHIP_RECHECK.get(env.MEMBERSHIP_RECHECK.idFromName(`member:${userId}`));
    await runInDurableObject(stub, async (_instance, state) => {
      state.storage.kv.put('epoch', 5);
      await new MembershipRecheck(state, env).alarm();
      expect(state.storage.kv.get('epoch')).toBeUndefined();
    });
    expect(await usage(userId)).toBe(777);
    // Counted once still: the same file again costs nothing, and the count is what R2 holds.
    expect((await put(name, token, bytes)).status).toBe(200);
    expect(await usage(userId)).toBe(777);
  });
});
