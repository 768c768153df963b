// The widget packages' control API on the real daemon: import of each shape, the list with the overlays
// that place a package, read and replace with ETag / If-Match, delete refused while placed, export with
// no secret value, hostile archives refused with nothing written, and who may call it (the admin key, an
// owner device; not a moderator).
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { api, rawRequest, type TestDaemon } from '../support/daemon.js';
import { startTunnelledDaemon, TUNNEL, viaTunnel } from '../support/tunnel-phone.js';
import {
  folderZip,
  GIFT_BOARD,
  lieAboutSize,
  packageZip,
  unixEntry,
  widgetIoZip,
  zeros,
  zipOf,
} from '../support/widget-zips.js';

let daemon: TestDaemon;

beforeEach(async () => {
  ({ daemon } = await startTunnelledDaemon());
});
afterEach(async () => {
  await daemon.stop();
});

function postZip(zip: Buffer) {
  return fetch(`${daemon.url}/api/widgets/import`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/zip' },
    body: new Uint8Array(zip),
  });
}

async function imported(zip: Buffer): Promise<{ id: string; name: string; source: string }> {
  const res = await postZip(zip);
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; name: string; source: string };
}

async function errorOf(res: Response, status: number, code: string): Promise<string> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  return body.error.message;
}

/** What the data directory holds for widgets: package folders, temporaries and media. */
async function widgetFiles(): Promise<string[]> {
  const list = async (dir: string) => readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return [
    ...(await list(daemon.dataDir.widgetsDir)),
    ...(await list(join(daemon.dataDir.mediaDir, 'widgets'))),
  ];
}

/** An overlay file placing package `widget`, as the editor will write it (the custom kind). */
async function placeOn(overlayId: string, name: string, widget: string): Promise<void> {
  await writeFile(
    join(daemon.dataDir.overlaysDir, `${overlayId}.json`),
    JSON.stringify({
      id: overlayId,
      name,
      width: 1920,
      height: 1080,
      widgets: [{ type: 'custom', id: 'board', x: 0, y: 0, width: 400, height: 600, widget }],
    }),
  );
}

describe('import', () => {
  it('each shape, and the five panes pasted, become packages listed with their name and version', async () => {
    const ours = await imported(packageZip('gift-board/'));
    const widgetIo = await imported(widgetIoZip());
    const folder = await imported(folderZip('gift-board/', { 'gift-board/rose.png': zeros(32) }));
    const pasted = await api(daemon, 'POST', '/api/widgets/import', {
      name: 'Pasted board',
      html: GIFT_BOARD.html,
      css: GIFT_BOARD.css,
      js: GIFT_BOARD.js,
      fields: GIFT_BOARD.fields,
    });
    expect(pasted.status).toBe(201);
    const pastedBody = (await pasted.json()) as { id: string; source: string };
    expect([ours.source, widgetIo.source, folder.source, pastedBody.source]).toEqual([
      'package',
      'widget-io',
      'folder',
      'pasted',
    ]);
    expect(folder).toMatchObject({ name: 'gift-board', media: ['rose.png'] });
    const list = await (await api(daemon, 'GET', '/api/widgets')).json();
    expect(list).toEqual(
      expect.arrayContaining([
        { id: ours.id, name: 'Gift board', version: '2.1.0', compat: 'se', usedBy: [] },
        { id: widgetIo.id, name: 'Gift board from widget.io', version: '1.0.0', compat: 'se', usedBy: [] },
        { id: folder.id, name: 'gift-board', version: '1.0.0', compat: 'se', usedBy: [] },
        { id: pastedBody.id, name: 'Pasted board', version: '1.0.0', compat: 'se', usedBy: [] },
      ]),
    );
    // The image it brought is a media file like any other, under widgets/<id>/.
    const media = await fetch(`${daemon.url}/assets/widgets/${folder.id}/rose.png`);
    expect(media.status).toBe(200);
    expect((await media.arrayBuffer()).byteLength).toBe(32);
  });

  it('hostile or broken archives are refused in words naming the file, and nothing is written', async () => {
    const cases: [Buffer, number, string, RegExp][] = [
      [
        folderZip('', { '../../escape.png': zeros(4) }),
        400,
        'bad_request',
        /"\.\.\/\.\.\/escape\.png" points outside/,
      ],
      [
        folderZip('', { 'avatar.png': unixEntry('/etc/passwd', 0o120777) }),
        400,
        'bad_request',
        /symbolic link/,
      ],
      [zipOf({ 'readme.txt': 'hello' }), 400, 'bad_request', /none of the shapes/],
      [widgetIoZip('', { 'fields.txt': 'not json' }), 400, 'bad_request', /^fields\.txt is not JSON$/],
      [
        folderZip('', { 'widget.css': 'a'.repeat(300_000) }),
        400,
        'bad_request',
        /^widget\.css is larger than/,
      ],
      [
        lieAboutSize(folderZip('', { 'widget.js': zeros(20 * 1024 * 1024) }), 'widget.js', 64),
        400,
        'bad_request',
        /"widget\.js" inflates to other than the size it declares/,
      ],
    ];
    for (const [zip, status, code, message] of cases) {
      expect(await errorOf(await postZip(zip), status, code)).toMatch(message);
    }
    const many: Record<string, string> = {};
    for (let i = 0; i < 10_000; i++) many[`n${i}.png`] = '';
    expect(await errorOf(await postZip(folderZip('', many)), 400, 'bad_request')).toMatch(/10004 entries/);
    expect(await widgetFiles()).toEqual([]);
    expect(await (await api(daemon, 'GET', '/api/widgets')).json()).toEqual([]);
  });

  it('an archive over 8 MiB is 413; a body of another type is 400', async () => {
    const big = Buffer.alloc(8 * 1024 * 1024 + 1);
    expect(await errorOf(await postZip(big), 413, 'payload_too_large')).toMatch(/8 MiB/);
    const other = await fetch(`${daemon.url}/api/widgets/import`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'text/plain' },
      body: 'hello',
    });
    expect(await errorOf(other, 400, 'bad_request')).toMatch(/application\/zip/);
    expect(await widgetFiles()).toEqual([]);
  });

  it('pasted panes over their limit are refused naming the file', async () => {
    const res = await api(daemon, 'POST', '/api/widgets/import', {
      name: 'Too big',
      html: '',
      css: '',
      js: 'x'.repeat(256 * 1024 + 1),
    });
    expect(await errorOf(res, 400, 'bad_request')).toBe('widget.js may be at most 262144 bytes (256 KiB)');
    expect(await widgetFiles()).toEqual([]);
  });
});

describe('a package', () => {
  it('reads with an ETag, and a PUT with a stale If-Match is 412 while the current one saves', async () => {
    const { id } = await imported(packageZip());
    const first = await api(daemon, 'GET', `/api/widgets/${id}`);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"/);
    const pkg = (await first.json()) as {
      manifest: { id: string; name: string };
      html: string;
      data: object;
    };
    expect(pkg.manifest.id).toBe(id);
    expect(pkg.html).toBe(GIFT_BOARD.html);
    const put = (body: unknown, ifMatch: string) =>
      fetch(`${daemon.url}/api/widgets/${id}`, {
        method: 'PUT',
        headers: {
          Authorization: `Bearer ${daemon.adminKey}`,
          'Content-Type': 'application/json',
          'If-Match': ifMatch,
        },
        body: JSON.stringify(body),
      });
    const saved = await put(
      { ...pkg, html: '<p>{{title}}!</p>', manifest: { ...pkg.manifest, name: 'Renamed' } },
      etag,
    );
    expect(saved.status).toBe(200);
    const newTag = saved.headers.get('etag');
    expect(newTag).not.toBe(etag);
    const stale = await put({ ...pkg, html: '<p>lost</p>' }, etag);
    expect(await errorOf(stale, 412, 'conflict')).toMatch(/changed since you loaded it/);
    expect(stale.headers.get('etag')).toBe(newTag);
    const now = (await (await api(daemon, 'GET', `/api/widgets/${id}`)).json()) as typeof pkg;
    expect(now.html).toBe('<p>{{title}}!</p>');
    expect(now.manifest.name).toBe('Renamed');
    // A file over its limit in a PUT is named, and the package stays as it was.
    const tooBig = await put({ ...now, css: 'a'.repeat(256 * 1024 + 1) }, newTag ?? '');
    expect(await errorOf(tooBig, 400, 'bad_request')).toBe(
      'widget.css may be at most 262144 bytes (256 KiB)',
    );
    const notFields = await put({ ...now, fields: [] }, newTag ?? '');
    expect(await errorOf(notFields, 400, 'bad_request')).toMatch(/^fields\.json: /);
    expect(((await (await api(daemon, 'GET', `/api/widgets/${id}`)).json()) as typeof pkg).html).toBe(
      '<p>{{title}}!</p>',
    );
  });

  it('an unknown id is 404', async () => {
    for (const method of ['GET', 'DELETE'])
      await errorOf(
        await api(daemon, method, '/api/widgets/3f0c1a52-9a7e-4b7e-8d43-2b3c4d5e6f70'),
        404,
        'not_found',
      );
    await errorOf(await api(daemon, 'GET', '/api/widgets/not-an-id/export'), 404, 'not_found');
  });

  it('is listed with the overlays that place it, and deleting it is refused with 409 naming them', async () => {
    const { id } = await imported(folderZip('board/', { 'board/rose.png': zeros(16) }));
    const overlayId = '6b1f8c2e-4d3a-4f5b-9c6d-7e8f9a0b1c2d';
    await placeOn(overlayId, 'Main scene', id);
    const list = (await (await api(daemon, 'GET', '/api/widgets')).json()) as { usedBy: string[] }[];
    expect(list[0]?.usedBy).toEqual([overlayId]);
    const refused = await api(daemon, 'DELETE', `/api/widgets/${id}`);
    expect(await errorOf(refused, 409, 'conflict')).toBe(
      `The widget package is placed on an overlay: "Main scene" (${overlayId}); take it off it first`,
    );
    expect((await api(daemon, 'GET', `/api/widgets/${id}`)).status).toBe(200);
    await rm(join(daemon.dataDir.overlaysDir, `${overlayId}.json`));
    expect((await api(daemon, 'DELETE', `/api/widgets/${id}`)).status).toBe(204);
    expect((await api(daemon, 'GET', `/api/widgets/${id}`)).status).toBe(404);
    // Its media go with it.
    expect(await widgetFiles()).toEqual([]);
  });

  it('exports as our package with no value for a secret field, and the export imports again', async () => {
    const { id } = await imported(
      folderZip('board/', {
        'board/data.json': JSON.stringify(GIFT_BOARD.data),
        'board/img/rose.png': zeros(8),
      }),
    );
    const res = await api(daemon, 'GET', `/api/widgets/${id}/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="board.zip"');
    const zip = Buffer.from(await res.arrayBuffer());
    const files = unzipSync(zip);
    expect(Object.keys(files).sort()).toEqual([
      'data.json',
      'fields.json',
      'img/rose.png',
      'manifest.json',
      'widget.css',
      'widget.html',
      'widget.js',
    ]);
    const text = (name: string) => new TextDecoder().decode(files[name]);
    expect(JSON.parse(text('fields.json')).apiKey).toEqual({
      type: 'secret',
      label: 'Key of my own service',
    });
    expect(JSON.parse(text('data.json'))).not.toHaveProperty('apiKey');
    expect(JSON.parse(text('data.json')).title).toBe('Roses and lions');
    expect(zip.includes('sk-typed-by-the-streamer')).toBe(false);
    expect(zip.includes('sk-field-default')).toBe(false);
    // The stored package keeps its secret.
    const stored = (await (await api(daemon, 'GET', `/api/widgets/${id}`)).json()) as {
      data: { apiKey: string };
    };
    expect(stored.data.apiKey).toBe('sk-typed-by-the-streamer');
    const again = await imported(zip);
    expect(again).toMatchObject({ name: 'board', source: 'package', media: ['img/rose.png'] });
  });
});

describe('who may call it', () => {
  /** Pairs a phone with `role` (offer, the phone's code, approve) and returns its cookie and CSRF token. */
  async function pairDevice(role: 'owner' | 'moderator') {
    const offered = await api(daemon, 'POST', '/api/pairings/offer', { role });
    const { code } = (await offered.json()) as { code: string };
    const asked = await viaTunnel(daemon, 'POST', '/pair', { body: { code, deviceName: `${role} phone` } });
    const { pairingId } = asked.json() as { pairingId: string };
    expect((await api(daemon, 'POST', `/api/pairings/${pairingId}/approve`)).status).toBe(204);
    const approved = await viaTunnel(daemon, 'GET', `/pair/${pairingId}`);
    const setCookie = approved.headers['set-cookie'];
    const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
    const session = await viaTunnel(daemon, 'GET', '/api/session', { headers: { Cookie: cookie } });
    const { csrf } = session.json() as { csrf: string };
    return { cookie, csrf };
  }
  const asDevice = (device: { cookie: string; csrf: string }, change: boolean) => ({
    Cookie: device.cookie,
    ...(change ? { Origin: `https://${TUNNEL}`, 'X-Overlay-CSRF': device.csrf } : {}),
  });

  it('an owner device lists, imports and exports; a moderator is refused', async () => {
    const owner = await pairDevice('owner');
    const moderator = await pairDevice('moderator');
    const pasted = { name: 'From the phone', html: '<b>{{title}}</b>', css: '', js: '' };
    const made = await viaTunnel(daemon, 'POST', '/api/widgets/import', {
      body: pasted,
      headers: asDevice(owner, true),
    });
    expect(made.status).toBe(201);
    const { id } = made.json() as { id: string };
    const zip = await rawRequest(daemon.port, {
      method: 'POST',
      path: '/api/widgets/import',
      headers: {
        Host: TUNNEL,
        'CF-Connecting-IP': '203.0.113.9',
        'Content-Type': 'application/zip',
        ...asDevice(owner, true),
      },
      body: packageZip(),
    });
    expect(zip.status).toBe(201);
    const listed = await viaTunnel(daemon, 'GET', '/api/widgets', { headers: asDevice(owner, false) });
    expect((listed.json() as unknown[]).length).toBe(2);
    expect(
      (await viaTunnel(daemon, 'GET', `/api/widgets/${id}/export`, { headers: asDevice(owner, false) }))
        .status,
    ).toBe(200);

    for (const [method, path] of [
      ['GET', '/api/widgets'],
      ['GET', `/api/widgets/${id}`],
      ['GET', `/api/widgets/${id}/export`],
      ['DELETE', `/api/widgets/${id}`],
    ] as const) {
      const res = await viaTunnel(daemon, method, path, { headers: asDevice(moderator, method !== 'GET') });
      expect({
        path,
        status: res.status,
        code: (res.json() as { error: { code: string } }).error.code,
      }).toEqual({
        path,
        status: 403,
        code: 'forbidden',
      });
    }
    const refused = await viaTunnel(daemon, 'POST', '/api/widgets/import', {
      body: pasted,
      headers: asDevice(moderator, true),
    });
    expect(refused.status).toBe(403);
    expect((await (await api(daemon, 'GET', '/api/widgets')).json()) as unknown[]).toHaveLength(2);
  });
});
