// Each shape a widget arrives in becomes one package, and each hostile or broken archive is refused in
// words naming the entry or file, with nothing written to widgets/ or media/.
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  folderZip,
  GIFT_BOARD,
  lieAboutSize,
  packageZip,
  unixEntry,
  widgetIoZip,
  zeros,
  zipOf,
} from '../../../test/support/widget-zips.js';
import { importArchive, importPasted } from './importers.js';
import { WidgetPackageStore } from './package-store.js';
import { WidgetRefused } from './zip-reader.js';

let root: string;
let store: WidgetPackageStore;
const dirs = () => ({
  widgetsDir: join(root, 'widgets'),
  mediaDir: join(root, 'media'),
  overlaysDir: join(root, 'overlays'),
});

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'widget-import-'));
  await mkdir(join(root, 'media'));
  await mkdir(join(root, 'overlays'));
  store = new WidgetPackageStore(dirs());
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every file and folder under the data directory's widgets/ and media/, dotted temporaries included. */
async function written(): Promise<string[]> {
  const out: string[] = [];
  for (const top of ['widgets', 'media'])
    for (const name of await readdir(join(root, top), { recursive: true }).catch(() => [] as string[]))
      out.push(`${top}/${name}`);
  return out;
}

/** Imports through the store as the API does: the archive read, then the package written. */
async function importZip(zip: Buffer) {
  const saved = await store.create(await importArchive(zip));
  if (!saved.ok) throw new Error(saved.message);
  return saved.value;
}

/** The refusal of an archive, and proof that nothing was written. */
async function refusal(zip: Buffer): Promise<WidgetRefused> {
  const error = await importZip(zip).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WidgetRefused);
  expect(await written()).toEqual([]);
  return error as WidgetRefused;
}

describe('the shapes a widget comes in', () => {
  it('our own package, at the root or under one folder, keeps its name and version under a new id', async () => {
    for (const top of ['', 'gift-board-2.1.0/']) {
      const pkg = await importZip(packageZip(top));
      expect(pkg.manifest).toEqual({
        formatVersion: 1,
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Gift board',
        version: '2.1.0',
        author: 'Test author',
        compat: 'se',
      });
      expect(pkg.manifest.id).not.toBe('00000000-0000-4000-8000-000000000000');
      expect(pkg.html).toBe(GIFT_BOARD.html);
      expect(pkg.js).toBe(GIFT_BOARD.js);
      expect(pkg.fields).toEqual(GIFT_BOARD.fields);
      // data.json's values over the fields' defaults.
      expect(pkg.data).toMatchObject({ title: 'Roses and lions', textColor: '#ffcc00', fontSize: 32 });
      const folder = join(root, 'widgets', pkg.manifest.id);
      expect((await readdir(folder)).sort()).toEqual([
        'data.json',
        'fields.json',
        'manifest.json',
        'widget.css',
        'widget.html',
        'widget.js',
      ]);
      expect(JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')).id).toBe(pkg.manifest.id);
    }
  });

  it('a widget.io export: widget.ini names it, the .txt panes are its files, an empty data.txt means the defaults', async () => {
    const draft = await importArchive(widgetIoZip('export/'));
    expect(draft).toMatchObject({ source: 'widget-io', name: 'Gift board from widget.io' });
    expect(draft.css).toBe(GIFT_BOARD.css);
    expect(draft.data).toEqual({
      title: 'Gifts tonight',
      textColor: '#ffcc00',
      font: 'Lato',
      fontSize: 32,
      limit: 5,
      apiKey: 'sk-field-default',
      testGift: 'gift',
    });
  });

  it('the public collections’ folder: named after its folder, widget.json as the fields, images kept as media', async () => {
    const png = zeros(64);
    const pkg = await importZip(
      folderZip('gift-board/', {
        'gift-board/data.json': JSON.stringify({ limit: 3 }),
        'gift-board/img/rose.png': png,
        'gift-board/README.md': 'notes',
        '__MACOSX/gift-board/._widget.html': 'fork',
      }),
    );
    expect(pkg.manifest.name).toBe('gift-board');
    expect(pkg.fields).toEqual(GIFT_BOARD.fields);
    expect(pkg.data.limit).toBe(3);
    const media = join(root, 'media', 'widgets', pkg.manifest.id, 'img', 'rose.png');
    expect((await readFile(media)).length).toBe(64);
    const draft = await importArchive(folderZip('gift-board/', { 'gift-board/README.md': 'notes' }));
    expect(draft.skipped).toEqual(['gift-board/README.md']);
  });

  it('the five panes pasted: fields optional, data from their defaults', () => {
    const draft = importPasted({
      name: 'Pasted',
      html: '<p>{{title}}</p>',
      css: '',
      js: '',
      fields: GIFT_BOARD.fields,
    });
    expect(draft).toMatchObject({ source: 'pasted', name: 'Pasted', version: '1.0.0' });
    expect(draft.data.title).toBe('Gifts tonight');
    expect(importPasted({ name: 'Bare', html: '', css: '', js: '' }).data).toEqual({});
  });
});

describe('refused in words, nothing written', () => {
  it('an archive of no known shape', async () => {
    const error = await refusal(zipOf({ 'index.html': '<p>hi</p>', 'style.css': '' }));
    expect(error.message).toMatch(/none of the shapes/);
  });

  it('a zip that is not a zip', async () => {
    expect((await refusal(Buffer.from('PK not really'))).message).toMatch(/not a readable zip/);
  });

  it('traversal: .., backslashes, absolute paths, drive letters and encoded forms', async () => {
    const names = [
      '../escape.png',
      'gift-board/../../escape.png',
      '..\\escape.png',
      'gift-board\\..\\..\\escape.png',
      '/etc/escape.png',
      'C:/Windows/escape.png',
      '%2e%2e/escape.png',
      '%2e%2e%2fescape.png',
    ];
    for (const name of names) {
      const error = await refusal(folderZip('', { [name]: zeros(8) }));
      expect(error.message).toMatch(/backslash|absolute path|outside the package/);
      expect(error.message).toContain('the entry "');
    }
  });

  it('a symbolic link, and a device', async () => {
    const link = await refusal(folderZip('', { 'rose.png': unixEntry('/etc/passwd', 0o120777) }));
    expect(link.message).toBe('the entry "rose.png" is a symbolic link, not a file');
    const device = await refusal(folderZip('', { 'tty.png': unixEntry('', 0o020644) }));
    expect(device.message).toMatch(/"tty\.png" is a device/);
  });

  it('a name that is a file and a folder at once', async () => {
    const error = await refusal(folderZip('', { 'rose.png': zeros(4), 'rose.png/petal.png': zeros(4) }));
    expect(error.message).toBe('"rose.png" is both a file and a folder in the archive');
  });

  it('10,000 entries, refused from the count alone', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 10_000; i++) files[`f${i}.png`] = '';
    const error = await refusal(folderZip('', files));
    expect(error.message).toBe('the archive holds 10004 entries, more than the 200 allowed');
  });

  it('a zip bomb declaring its size: 4 MiB of zeros in widget.js, 40 MiB of them, or media together past 32 MiB', async () => {
    const js = await refusal(folderZip('', { 'widget.js': zeros(4 * 1024 * 1024) }));
    expect(js.message).toBe('widget.js is larger than the 262144 bytes allowed');
    const huge = await refusal(folderZip('', { 'widget.js': zeros(40 * 1024 * 1024) }));
    expect(huge.message).toBe('the archive unpacks to more than 33554432 bytes (32 MiB)');
    const many: Record<string, Uint8Array> = {};
    for (let i = 0; i < 5; i++) many[`frame${i}.png`] = zeros(8 * 1024 * 1024);
    const total = await refusal(folderZip('', many));
    expect(total.code).toBe('payload_too_large');
    expect(total.message).toMatch(/unpacks to more than 33554432 bytes/);
  });

  it('a zip bomb lying about its size stops at the limit while it inflates', async () => {
    const bomb = lieAboutSize(folderZip('', { 'widget.js': zeros(40 * 1024 * 1024) }), 'widget.js', 100);
    expect(bomb.length).toBeLessThan(100 * 1024);
    expect((await refusal(bomb)).message).toMatch(
      /^the entry "widget\.js" inflates to other than the size it declares/,
    );
    const media = lieAboutSize(folderZip('', { 'big.png': zeros(30 * 1024 * 1024) }), 'big.png', 10);
    expect((await refusal(media)).message).toMatch(
      /^the entry "big\.png" inflates to other than the size it declares/,
    );
  });

  it('a file over its limit, named', async () => {
    const html = await refusal(folderZip('w/', { 'w/widget.html': 'x'.repeat(256 * 1024 + 1) }));
    expect(html.message).toBe('w/widget.html is larger than the 262144 bytes allowed');
    const fields = await refusal(
      widgetIoZip('', { 'fields.txt': JSON.stringify({ a: { type: 'text', value: 'x'.repeat(70_000) } }) }),
    );
    expect(fields.message).toBe('fields.txt is larger than the 65536 bytes allowed');
  });

  it('a field file that is not JSON, or not an object of fields', async () => {
    expect((await refusal(widgetIoZip('', { 'fields.txt': '{title: oops' }))).message).toBe(
      'fields.txt is not JSON',
    );
    expect((await refusal(folderZip('', { 'data.json': 'nope' }))).message).toBe('data.json is not JSON');
    expect((await refusal(folderZip('', { 'widget.json': '[1, 2]' }))).message).toMatch(/^widget\.json: /);
    expect((await refusal(packageZip('', { 'manifest.json': '{"formatVersion": 2}' }))).message).toMatch(
      /^manifest\.json: /,
    );
  });

  it('a fields file nested 30,000 levels deep is refused before it is parsed', async () => {
    const deep = `{"a": {"type": "text", "value": ${'['.repeat(30_000)}${']'.repeat(30_000)}}}`;
    expect((await refusal(folderZip('', { 'widget.json': deep }))).message).toBe(
      'widget.json nests deeper than 64 levels',
    );
  });

  it('data together with the defaults past 64 KiB, named', async () => {
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < 3; i++) fields[`f${i}`] = { type: 'text', value: 'x'.repeat(20_000) };
    const data = { d: 'y'.repeat(20_000) };
    const error = await refusal(
      folderZip('', { 'widget.json': JSON.stringify(fields), 'data.json': JSON.stringify(data) }),
    );
    expect(error.message).toBe('data.json may be at most 65536 bytes (64 KiB)');
  });
});
