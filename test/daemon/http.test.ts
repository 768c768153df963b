// HTTP surface of the overlay server (interface §4.2, §5.3; decisions §3): pages, media, Host, CORS, nosniff.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OBS_UNUSED } from '../../daemon/src/http/status-parts.js';
import { DaemonStatus, parseWith } from '../../shared/protocol/index.js';
import { rawRequest, startTestDaemon, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let overlayId: string;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

beforeAll(async () => {
  daemon = await startTestDaemon();
  overlayId = daemon.overlays.list()[0]!.id;
  const media = daemon.dataDir.mediaDir;
  await writeFile(join(media, 'logo.png'), PNG);
  await mkdir(join(media, 'sounds'), { recursive: true });
  await writeFile(join(media, 'sounds', 'ding dong.mp3'), 'ID3fake');
  await writeFile(join(daemon.dataDir.root, 'secret.txt'), 'outside media');
  await symlink(join(daemon.dataDir.root, 'secret.txt'), join(media, 'escape.png'));
  await symlink(daemon.dataDir.root, join(media, 'rootlink'));
});
afterAll(() => daemon?.stop());

const get = (path: string, headers: Record<string, string> = {}) =>
  rawRequest(daemon.port, { path, headers: { Host: `127.0.0.1:${daemon.port}`, ...headers } });

describe('GET / (the home page on this computer)', () => {
  it("links to the dashboard and lists each overlay's URL for OBS, with a strict policy", async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toContain('href="/dashboard"');
    expect(res.body).toContain(`http://127.0.0.1:${daemon.port}/overlay/${overlayId}`);
    expect(res.body).toContain(daemon.overlays.list()[0]!.name);
  });

  it('shows overlay names as text, never as markup', async () => {
    const created = await daemon.overlays.create({
      name: '<script>alert(1)</script> & "quotes"',
      width: 1280,
      height: 720,
      widgets: [],
      public: false,
    });
    try {
      const res = await get('/');
      expect(res.body).not.toContain('<script>alert(1)');
      expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;');
    } finally {
      await daemon.overlays.remove(created.id);
    }
  });

  it('does not exist for viewers through the tunnel', async () => {
    daemon.tunnelHost = 'o-abc.tunnel.example';
    try {
      const res = await get('/', { Host: 'o-abc.tunnel.example', 'CF-Connecting-IP': '203.0.113.9' });
      expect(res.status).toBe(404);
      expect(res.body).not.toContain(overlayId);
    } finally {
      daemon.tunnelHost = undefined;
    }
  });
});

describe('GET /favicon.ico', () => {
  it('answers with an icon, not a 404', async () => {
    const res = await fetch(`${daemon.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await res.arrayBuffer());
    // An .ico file: reserved 0, type 1 (an icon), one image of 32×32 pixels, 32 bits each.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4)]).toEqual([0, 1, 1]);
    expect([bytes[6], bytes[7], bytes.readUInt16LE(12)]).toEqual([32, 32, 32]);
    expect(bytes.length).toBe(22 + bytes.readUInt32LE(14));
  });
});

describe('GET /status', () => {
  it('answers {running, port}, and on this computer the OBS connection (off until an action needs it)', async () => {
    const res = await get('/status');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      running: true,
      port: daemon.port,
      obs: { state: 'off', detail: OBS_UNUSED },
    });
  });

  it('carries fields other parts of the daemon add', async () => {
    const tiktok = { source: 'tiktok', username: 'someone', state: 'disconnected', attempts: 0 } as const;
    daemon.statusFields.set('tiktok', () => tiktok);
    const body = (await get('/status')).json();
    expect(body).toEqual({
      running: true,
      port: daemon.port,
      obs: { state: 'off', detail: OBS_UNUSED },
      tiktok,
    });
    // The answer is exactly the shared contract the dashboard parses.
    expect(parseWith(DaemonStatus, body).ok).toBe(true);
  });

  it("shows only {running, port} through the tunnel, never the streamer's details", async () => {
    daemon.statusFields.set('licence', () => ({
      tier: 'premium',
      valid_until: '2026-12-01T00:00:00.000Z',
      last_validated_at: null,
      state: 'valid',
    }));
    daemon.tunnelHost = 'o-abc.tunnel.example';
    try {
      const res = await get('/status', { Host: 'o-abc.tunnel.example', 'CF-Connecting-IP': '203.0.113.9' });
      expect(res.json()).toEqual({ running: true, port: daemon.port });
      expect((await get('/status')).json()).toMatchObject({ licence: { tier: 'premium' } });
    } finally {
      daemon.tunnelHost = undefined;
      daemon.statusFields.delete('licence');
    }
    daemon.statusFields.delete('tiktok');
  });
});

describe('GET /overlay/:overlayId', () => {
  it('serves the compiled page with the three globals, asset paths under /overlay-assets/', async () => {
    const res = await get(`/overlay/${overlayId}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain(`window.__APP_OVERLAY_ID__="${overlayId}"`);
    expect(res.body).toContain(`window.__APP_PORT__=${daemon.port};`);
    expect(res.body).toMatch(/window\.__APP_TOKEN__="[A-Za-z0-9_-]{32}"/);
    const script = /src="(\/overlay-assets\/[^"]+\.js)"/.exec(res.body)?.[1];
    expect(script).toBeDefined();
    const bundle = await get(script!);
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect(bundle.headers['x-content-type-options']).toBe('nosniff');
  });

  it('injects a fresh token on every load', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const body = (await get(`/overlay/${overlayId}`)).body;
      tokens.add(/__APP_TOKEN__="([^"]+)"/.exec(body)?.[1] ?? '');
    }
    expect(tokens.size).toBe(5);
  });

  it.each([
    ['an unknown id', '/overlay/00000000-0000-4000-8000-000000000000'],
    ['a malformed id', '/overlay/not-a-uuid'],
    ['an id with a script', '/overlay/%3Cscript%3E'],
  ])('answers 404 with a transparent page that shows nothing for %s', async (_what, path) => {
    const res = await get(path);
    expect(res.status).toBe(404);
    expectTransparentPage(res, 'not_found');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).not.toContain('<script');
  });

  it('answers a transparent 404 page once the overlay is deleted, as an OBS source reloading it gets', async () => {
    const created = await daemon.overlays.create({
      name: 'Gone soon',
      width: 1280,
      height: 720,
      widgets: [],
      public: false,
    });
    expect((await get(`/overlay/${created.id}`)).status).toBe(200);
    await daemon.overlays.remove(created.id);
    const res = await get(`/overlay/${created.id}`);
    expect(res.status).toBe(404);
    expectTransparentPage(res, 'not_found');
  });

  it('answers the same page and headers however the target is written (id case, query, trailing slash, HEAD)', async () => {
    const pageHeaders = (res: { headers: Record<string, unknown> }) => ({
      type: res.headers['content-type'],
      cache: res.headers['cache-control'],
      referrer: res.headers['referrer-policy'],
      nosniff: res.headers['x-content-type-options'],
      vary: res.headers.vary,
      length: res.headers['content-length'],
    });
    const plain = await get(`/overlay/${overlayId}`);
    expect(plain.status).toBe(200);
    expect(pageHeaders(plain)).toMatchObject({ referrer: 'no-referrer', nosniff: 'nosniff', vary: 'Origin' });
    const withoutToken = (body: string) => body.replace(/__APP_TOKEN__="[^"]+"/, '');
    for (const path of [
      `/overlay/${overlayId.toUpperCase()}`,
      `/overlay/${overlayId}?scene=main`,
      `/overlay/${overlayId}/`,
    ]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(pageHeaders(res)).toEqual(pageHeaders(plain));
      expect(withoutToken(res.body)).toBe(withoutToken(plain.body));
    }
    const head = await rawRequest(daemon.port, {
      method: 'HEAD',
      path: `/overlay/${overlayId}`,
      headers: { Host: `127.0.0.1:${daemon.port}` },
    });
    expect(head.status).toBe(200);
    expect(pageHeaders(head)).toEqual(pageHeaders(plain));
    expect(head.body).toBe('');
  });

  it('keeps every other error under /overlay/ off stream too, with its own status', async () => {
    const deeper = await get(`/overlay/${overlayId}/extra`);
    expect(deeper.status).toBe(404);
    expectTransparentPage(deeper, 'not_found');
    const wrongHost = await get(`/overlay/${overlayId}`, { Host: 'evil.example' });
    expect(wrongHost.status).toBe(403);
    expectTransparentPage(wrongHost, 'forbidden');
    const post = await rawRequest(daemon.port, {
      method: 'POST',
      path: `/overlay/${overlayId}`,
      headers: { Host: `127.0.0.1:${daemon.port}` },
    });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toContain('GET');
    expectTransparentPage(post, 'method_not_allowed');
  });
});

/** An error page an OBS browser source can show: HTML, transparent, nothing visible, the reason hidden. */
function expectTransparentPage(res: { headers: Record<string, unknown>; body: string }, code: string): void {
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toMatch(/^<!doctype html>/i);
  expect(res.body).toContain('html,body{margin:0;background:transparent}');
  // The reason is there for a person who opens the URL, hidden from the stream.
  expect(res.body).toMatch(new RegExp(`<p hidden data-error-code="${code}">[^<]+</p></body>`));
  expect(res.body).not.toContain('{"error"');
}

describe('GET /assets/*', () => {
  it('serves a media file with its MIME type and a 5-minute cache', async () => {
    const res = await rawRequest(daemon.port, { path: '/assets/logo.png', headers: { Host: 'localhost' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves a file in a subfolder with an encoded space', async () => {
    const res = await get('/assets/sounds/ding%20dong.mp3');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
    expect(res.body).toBe('ID3fake');
  });

  it('answers 404 for a missing file', async () => {
    const res = await get('/assets/missing.png');
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it.each([
    ['plain ..', '/assets/../admin.key'],
    ['.. inside', '/assets/sounds/../../admin.key'],
    ['encoded dots', '/assets/%2e%2e/admin.key'],
    ['mixed-case encoded dots and slash', '/assets/%2E%2e%2Fadmin.key'],
    ['double-encoded dots', '/assets/%252e%252e/admin.key'],
    ['double-encoded slash', '/assets/..%252fadmin.key'],
    ['backslashes', '/assets/..\\admin.key'],
    ['encoded backslash', '/assets/..%5cadmin.key'],
    ['NUL byte', '/assets/logo.png%00.txt'],
    ['absolute path', '/assets//etc/passwd'],
    ['encoded absolute path', '/assets/%2fetc%2fpasswd'],
    ['a dotfile', '/assets/.hidden.png'],
    ['a symlink to a file outside media/', '/assets/escape.png'],
    ['a symlinked folder outside media/', '/assets/rootlink/secret.txt'],
  ])('answers 403 for %s', async (_what, path) => {
    const res = await get(path);
    expect(res.status).toBe(403);
    expect(res.json()).toMatchObject({ error: { code: 'forbidden' } });
    expect(res.body).not.toContain('outside media');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('Host header (DNS rebinding)', () => {
  it.each(['localhost', 'localhost:7890', '127.0.0.1', `127.0.0.1:${0}`, '[::1]', '[::1]:7890', 'LOCALHOST'])(
    'allows Host %s',
    async (host) => {
      expect((await get('/status', { Host: host })).status).toBe(200);
    },
  );

  it.each(['evil.example', 'localhost.evil.example', '127.0.0.2', '0.0.0.0', 'example.com:7890'])(
    'refuses Host %s with 403',
    async (host) => {
      const res = await get('/status', { Host: host });
      expect(res.status).toBe(403);
      expect(res.json()).toMatchObject({ error: { code: 'forbidden' } });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it('accepts the tunnel hostname once one is configured', async () => {
    expect((await get('/status', { Host: 'o-abc.tunnel.example' })).status).toBe(403);
    daemon.tunnelHost = 'o-abc.tunnel.example';
    try {
      expect((await get('/status', { Host: 'o-abc.tunnel.example' })).status).toBe(200);
    } finally {
      daemon.tunnelHost = undefined;
    }
  });
});

describe('CORS', () => {
  it.each(['http://localhost:5173', 'https://localhost', 'http://127.0.0.1:7890', 'http://[::1]:3000'])(
    'echoes the localhost origin %s',
    async (origin) => {
      const res = await get('/status', { Origin: origin });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers.vary).toContain('Origin');
    },
  );

  it.each(['https://evil.example', 'http://localhost.evil.example', 'null', 'file://', 'http://127.0.0.2'])(
    'rejects origin %s without CORS headers',
    async (origin) => {
      const res = await get('/status', { Origin: origin });
      expect(res.status).toBe(403);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it('answers a preflight from a localhost origin', async () => {
    const res = await rawRequest(daemon.port, {
      method: 'OPTIONS',
      path: '/api/overlays',
      headers: {
        Host: 'localhost',
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'PUT',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-allow-methods']).toContain('PUT');
    expect(res.headers['access-control-allow-headers']).toMatch(/authorization/i);
  });

  it('allows the tunnel origin when a tunnel is configured', async () => {
    daemon.tunnelHost = 'o-abc.tunnel.example';
    try {
      const res = await get('/status', { Origin: 'https://o-abc.tunnel.example' });
      expect(res.headers['access-control-allow-origin']).toBe('https://o-abc.tunnel.example');
    } finally {
      daemon.tunnelHost = undefined;
    }
  });
});

describe('errors', () => {
  it('answers an unknown route with 404 and the error body', async () => {
    const res = await get('/nope');
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const res = await rawRequest(daemon.port, {
      method: 'POST',
      path: '/status',
      headers: { Host: 'localhost' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
    expect(res.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
  });
});
