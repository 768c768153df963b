// The local control API (decisions §3): auth, loopback only, validation, overlays, events, commands, rules, media, clients.
import { mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, rawRequest, startTestDaemon, subscribe, type TestDaemon } from '../support/daemon.js';

let daemon: TestDaemon;
let demoId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  demoId = daemon.overlays.list()[0]!.id;
});
afterAll(() => daemon?.stop());

const rule = (id: string) => ({
  id,
  trigger: 'gift',
  conditions: { giftName: 'Rose' },
  actions: [
    {
      overlayId: demoId,
      widgetId: 'alerts',
      command: 'show-alert',
      payload: { text: '{user.nickname}', duration: 3000 },
    },
  ],
});

describe('access', () => {
  it('answers 401 unauthenticated without a key or with a wrong one', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong',
      `Basic ${daemon.adminKey}`,
      `Bearer ${daemon.adminKey}x`,
    ]) {
      const res = await fetch(`${daemon.url}/api/overlays`, {
        headers: authorization ? { Authorization: authorization } : {},
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'unauthenticated' } });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 404 through the tunnel, even with the right key', async () => {
    daemon.tunnelHost = 'o-abc.tunnel.example';
    try {
      const res = await rawRequest(daemon.port, {
        path: '/api/overlays',
        headers: { Host: 'o-abc.tunnel.example', Authorization: `Bearer ${daemon.adminKey}` },
      });
      expect(res.status).toBe(404);
      expect(res.json()).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      daemon.tunnelHost = undefined;
    }
  });

  // The router matches paths case-insensitively: every spelling of /api is the control API, and locked.
  it.each(['/API/overlays', '/Api/events', '/aPi/rules', '/API/media/x.png', '/api/OVERLAYS'])(
    'guards %s like /api: 401 locally without the key, 404 through the tunnel, nothing changed',
    async (path) => {
      const before = JSON.stringify(daemon.overlays.list());
      const method = path.toLowerCase().includes('events') ? 'POST' : path.includes('media') ? 'PUT' : 'GET';
      const body =
        method === 'GET' ? undefined : '{"type":"follow","user":{"uniqueId":"x","nickname":"x"},"data":{}}';
      const local = await rawRequest(daemon.port, {
        method,
        path,
        headers: { Host: `127.0.0.1:${daemon.port}`, 'Content-Type': 'application/json' },
        ...(body ? { body } : {}),
      });
      expect(local.status).toBe(401);
      daemon.tunnelHost = 'o-abc.tunnel.example';
      try {
        const remote = await rawRequest(daemon.port, {
          method,
          path,
          headers: { Host: 'o-abc.tunnel.example', 'CF-Connecting-IP': '203.0.113.7' },
          ...(body ? { body } : {}),
        });
        expect(remote.status).toBe(404);
      } finally {
        daemon.tunnelHost = undefined;
      }
      expect(JSON.stringify(daemon.overlays.list())).toBe(before);
      await expect(stat(join(daemon.dataDir.mediaDir, 'x.png'))).rejects.toThrow();
    },
  );

  it('reads the key from admin.key, created with mode 0600', async () => {
    expect((await readFile(daemon.dataDir.adminKeyFile, 'utf8')).trim()).toBe(daemon.adminKey);
    expect((await stat(daemon.dataDir.adminKeyFile)).mode & 0o777).toBe(0o600);
  });
});

describe('overlays', () => {
  it('lists, creates, reads, replaces and deletes overlays, persisting each change', async () => {
    const list = await api(daemon, 'GET', '/api/overlays');
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual(daemon.overlays.list());

    const created = await api(daemon, 'POST', '/api/overlays', {
      name: 'Alerts',
      width: 1920,
      height: 1080,
      unknown: 'ignored',
    });
    expect(created.status).toBe(201);
    const overlay = await created.json();
    expect(overlay).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Alerts',
      width: 1920,
      height: 1080,
      widgets: [],
      public: false,
    });
    expect(created.headers.get('location')).toBe(`/api/overlays/${overlay.id}`);
    const file = join(daemon.dataDir.overlaysDir, `${overlay.id}.json`);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(overlay);

    expect(await (await api(daemon, 'GET', `/api/overlays/${overlay.id}`)).json()).toEqual(overlay);

    const replacement = {
      name: 'Alerts 2',
      width: 1280,
      height: 720,
      widgets: [{ id: 'a', type: 'alert', x: 0, y: 0 }],
    };
    const put = await api(daemon, 'PUT', `/api/overlays/${overlay.id}`, replacement);
    expect(put.status).toBe(200);
    const stored = await put.json();
    expect(stored).toMatchObject({
      id: overlay.id,
      name: 'Alerts 2',
      widgets: [{ id: 'a', type: 'alert', duration: 5000 }],
    });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(stored);

    expect((await api(daemon, 'DELETE', `/api/overlays/${overlay.id}`)).status).toBe(204);
    expect((await api(daemon, 'GET', `/api/overlays/${overlay.id}`)).status).toBe(404);
    await expect(readFile(file, 'utf8')).rejects.toThrow();
    expect((await fetch(`${daemon.url}/overlay/${overlay.id}`)).status).toBe(404);
  });

  it.each([
    ['name', { width: 10, height: 10 }],
    ['width', { name: 'x', width: -1, height: 10 }],
    ['widgets.0.x', { name: 'x', width: 10, height: 10, widgets: [{ id: 'a', type: 'text', content: '' }] }],
  ])('answers 400 bad_request naming the field %s', async (field, body) => {
    const res = await api(daemon, 'POST', '/api/overlays', body);
    expect(res.status).toBe(400);
    const error = (await res.json()).error;
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain(field);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await api(daemon, 'POST', '/api/overlays', '{nope');
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('bad_request');
  });

  it('answers 413 payload_too_large above 1 MiB', async () => {
    const res = await api(daemon, 'POST', '/api/overlays', {
      name: 'x',
      width: 1,
      height: 1,
      pad: 'x'.repeat(1024 * 1024),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
  });

  it('answers 404 for unknown and malformed ids', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'x', width: 1, height: 1 }],
      ['DELETE', undefined],
    ] as const) {
      expect(
        (await api(daemon, method, '/api/overlays/00000000-0000-4000-8000-000000000000', body)).status,
      ).toBe(404);
      expect((await api(daemon, method, '/api/overlays/nope', body)).status).toBe(404);
    }
  });

  it('answers 405 with Allow for a wrong method', async () => {
    const res = await api(daemon, 'PATCH', `/api/overlays/${demoId}`, {});
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE');
  });

  // The Allow header comes from the routes the router holds, so a new route is advertised by itself.
  it.each([
    ['DELETE', '/api/overlays', 'GET, HEAD, POST'],
    ['GET', '/api/overlays/00000000-0000-4000-8000-000000000000/commands', 'POST'],
    ['DELETE', '/api/events', 'GET, HEAD, POST'],
    ['DELETE', '/api/rules', 'GET, HEAD, PUT'],
    ['GET', '/api/media/clips/a.png', 'PUT, DELETE'],
    ['POST', '/api/clients', 'GET, HEAD'],
    ['PUT', '/status', 'GET, HEAD'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const res = await api(daemon, method, path, method === 'GET' ? undefined : {});
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect((await res.json()).error.code).toBe('method_not_allowed');
  });
});

describe('events and commands', () => {
  it('accepts a valid event with 202 and rejects a malformed one naming the field', async () => {
    const ok = await api(daemon, 'POST', '/api/events', {
      type: 'like',
      user: { uniqueId: 'a', nickname: 'A' },
      data: { likeCount: 5 },
    });
    expect(ok.status).toBe(202);
    const bad = await api(daemon, 'POST', '/api/events', {
      type: 'gift',
      user: { uniqueId: 'a', nickname: 'A' },
      data: { giftName: 'Rose' },
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('data.repeatCount');
    const unknownType = await api(daemon, 'POST', '/api/events', {
      type: 'raid',
      user: { uniqueId: 'a', nickname: 'A' },
      data: {},
    });
    expect(unknownType.status).toBe(400);
  });

  it('sends a command to an overlay with 202 and says how many clients got it; 404 for an unknown overlay', async () => {
    const client = await subscribe(daemon, demoId);
    const res = await api(daemon, 'POST', `/api/overlays/${demoId}/commands`, {
      command: 'set-text',
      widgetId: 'welcome',
      payload: { text: 'Hi' },
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ delivered: 1 });
    expect(await client.next((m) => m.type === 'overlay-command')).toEqual({
      type: 'overlay-command',
      seq: expect.any(Number),
      at: expect.any(Number),
      command: 'set-text',
      widgetId: 'welcome',
      payload: { text: 'Hi' },
    });
    const missing = await api(daemon, 'POST', '/api/overlays/00000000-0000-4000-8000-000000000000/commands', {
      command: 'x',
      widgetId: 'w',
    });
    expect(missing.status).toBe(404);
    const bad = await api(daemon, 'POST', `/api/overlays/${demoId}/commands`, { widgetId: 'w' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('command');
    client.close();
  });

  it('lists connected clients per overlay', async () => {
    const client = await subscribe(daemon, demoId);
    const res = await api(daemon, 'GET', '/api/clients');
    expect(res.status).toBe(200);
    expect((await res.json()).clients[demoId]).toBe(1);
    client.close();
    await client.closed;
  });
});

describe('rules', () => {
  it('starts empty, replaces atomically, and keeps the old rules when a rule is bad', async () => {
    expect(await (await api(daemon, 'GET', '/api/rules')).json()).toEqual([]);
    const put = await api(daemon, 'PUT', '/api/rules', [rule('r1')]);
    expect(put.status).toBe(200);
    const stored = await put.json();
    expect(stored[0]).toMatchObject({ id: 'r1', enabled: true, cooldownMs: 0 });
    expect(JSON.parse(await readFile(daemon.dataDir.rulesFile, 'utf8'))).toEqual(stored);

    const bad = await api(daemon, 'PUT', '/api/rules', [rule('r2'), { ...rule('r3'), trigger: 'raid' }]);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('1.trigger');
    expect(await (await api(daemon, 'GET', '/api/rules')).json()).toEqual(stored);
    expect(JSON.parse(await readFile(daemon.dataDir.rulesFile, 'utf8'))).toEqual(stored);
  });
});

describe('media', () => {
  it('uploads, lists, serves and deletes media', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const put = await fetch(`${daemon.url}/api/media/alerts/rose.png`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${daemon.adminKey}` },
      body: png,
    });
    expect(put.status).toBe(201);
    expect(await put.json()).toEqual({ name: 'alerts/rose.png', size: png.length, type: 'image/png' });
    const list = await (await api(daemon, 'GET', '/api/media')).json();
    expect(list).toEqual([
      { name: 'alerts/rose.png', size: png.length, type: 'image/png', modified: expect.any(String) },
    ]);
    const served = await fetch(`${daemon.url}/assets/alerts/rose.png`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(png);
    expect((await api(daemon, 'DELETE', '/api/media/alerts/rose.png')).status).toBe(204);
    expect((await fetch(`${daemon.url}/assets/alerts/rose.png`)).status).toBe(404);
    expect((await api(daemon, 'DELETE', '/api/media/alerts/rose.png')).status).toBe(404);
  });

  it.each([
    ['a script', '/api/media/x.js'],
    ['an HTML page', '/api/media/x.html'],
    ['a traversal', '/api/media/..%2fadmin.png'],
    ['a dotfile', '/api/media/.x.png'],
  ])('refuses %s with 400', async (_what, path) => {
    const res = await fetch(`${daemon.url}${path}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${daemon.adminKey}` },
      body: 'x',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('bad_request');
  });

  it('refuses a file over 20 MiB with 413 and keeps nothing of it', async () => {
    const res = await fetch(`${daemon.url}/api/media/huge.mp4`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${daemon.adminKey}` },
      body: Buffer.alloc(20 * 1024 * 1024 + 1),
    });
    expect(res.status).toBe(413);
    expect(await (await api(daemon, 'GET', '/api/media')).json()).toEqual([]);
  });

  it('refuses with 403 an upload into a symlinked folder that leads outside media/, and writes nothing there', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'overlay-daemon-outside-'));
    const link = join(daemon.dataDir.mediaDir, 'out');
    await symlink(outside, link);
    try {
      for (const path of ['/api/media/out/x.png', '/api/media/out/deeper/x.png']) {
        const res = await fetch(`${daemon.url}${path}`, {
          method: 'PUT',
          headers: { Authorization: `Bearer ${daemon.adminKey}` },
          body: Buffer.from('89504e470d0a1a0a', 'hex'),
        });
        expect(res.status).toBe(403);
        expect((await res.json()).error.code).toBe('forbidden');
      }
      expect(await readdir(outside)).toEqual([]);
    } finally {
      await rm(link);
      await rm(outside, { recursive: true, force: true });
    }
  });
});
