// The shapes a widget arrives in (decisions-4 §14): our own package, a widget.io export, the folder of the
// public widget collections, each as a zip (at its root or under one top folder), or the five panes
// pasted. Each becomes one package draft; anything else is refused in words naming the file.
import { posix } from 'node:path';
import * as v from 'valibot';
import {
  ImportedWidgetManifest,
  MediaPath,
  type PastedWidget,
  parseWith,
  WIDGET_CODE_MAX_BYTES,
  WIDGET_JSON_MAX_BYTES,
  type WidgetData,
  WidgetData as WidgetDataSchema,
  type WidgetFields,
  WidgetFields as WidgetFieldsSchema,
  type WidgetImported,
  widgetDefaults,
} from '../../../shared/protocol/index.js';
import { JSON_MAX_DEPTH, jsonTooDeep } from '../http/body.js';
import { MEDIA_MAX_BYTES, mediaType } from '../media/media.js';
import { type ArchiveFile, readArchive, shownName, WidgetRefused } from './zip-reader.js';

/** A package before it has an id: what the store writes. */
export interface WidgetDraft {
  source: WidgetImported['source'];
  name: string;
  version: string;
  author?: string | undefined;
  description?: string | undefined;
  html: string;
  css: string;
  js: string;
  fields: WidgetFields;
  data: WidgetData;
  /** Files besides the five: media, by their path inside the package. */
  media: { name: string; bytes: Buffer }[];
  /** Files left out (not media), by name. */
  skipped: string[];
}

/** Fonts travel with widgets too; they are served like media. */
const FONT = /\.(woff2?|ttf|otf)$/i;

/** What each shape calls its five files. */
const SHAPES = {
  package: {
    marker: 'manifest.json',
    html: 'widget.html',
    css: 'widget.css',
    js: 'widget.js',
    fields: 'fields.json',
    data: 'data.json',
  },
  'widget-io': {
    marker: 'widget.ini',
    html: 'html.txt',
    css: 'css.txt',
    js: 'js.txt',
    fields: 'fields.txt',
    data: 'data.txt',
  },
  folder: {
    marker: 'widget.html',
    html: 'widget.html',
    css: 'widget.css',
    js: 'widget.js',
    fields: 'widget.json',
    data: 'data.json',
  },
} as const;
type Shape = keyof typeof SHAPES;

/** Files an archiver adds by itself (macOS's resource forks, Finder's and Explorer's notes). */
const clutter = (name: string) =>
  name.startsWith('__MACOSX/') || /(^|\/)(\.DS_Store|Thumbs\.db|desktop\.ini)$/i.test(name);

const text = (bytes: Buffer) => bytes.toString('utf8').replace(/^\uFEFF/, '');

/** A fields or data file: JSON, an object, within 64 KiB; refused naming the file. */
function jsonFile<S extends v.GenericSchema>(file: string, bytes: Buffer | undefined, schema: S) {
  if (bytes === undefined || text(bytes).trim() === '') return {} as v.InferOutput<S>;
  // Limits first: a file of nothing but brackets is refused before a parser or validator recurses into it.
  if (jsonTooDeep(text(bytes))) throw new WidgetRefused(`${file} nests deeper than ${JSON_MAX_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text(bytes));
  } catch {
    throw new WidgetRefused(`${file} is not JSON`);
  }
  const parsed = parseWith(schema, value);
  if (!parsed.ok) throw new WidgetRefused(`${file}: ${parsed.error.replace(/^[^:]*\.json may/, 'it may')}`);
  return parsed.value;
}

/** `name=` (or `title=`) of widget.ini, whatever its section; undefined when it has none. */
function iniName(ini: string): string | undefined {
  for (const line of ini.split(/\r?\n/)) {
    const match = /^\s*(name|title)\s*=\s*(.+?)\s*$/i.exec(line);
    if (match?.[2]) return match[2].replace(/^"(.*)"$/, '$1').slice(0, 100);
  }
  return undefined;
}

/** The shape of the archive and the folder its files sit in ('' at the root). */
function findShape(files: ArchiveFile[]): { shape: Shape; base: string } {
  const names = files.map((f) => f.name).filter((n) => !clutter(n));
  const tops = new Set(names.map((n) => (n.includes('/') ? n.split('/')[0] : '')));
  const bases = [''];
  const [only] = tops;
  if (tops.size === 1 && only) bases.push(`${only}/`);
  for (const base of bases)
    for (const shape of Object.keys(SHAPES) as Shape[])
      if (names.includes(base + SHAPES[shape].marker)) return { shape, base };
  throw new WidgetRefused(
    'the archive is none of the shapes a widget comes in: our package (manifest.json), a widget.io export (widget.ini with html.txt, css.txt, js.txt, fields.txt, data.txt) or a widget folder (widget.html, widget.css, widget.js, widget.json), at its root or in one folder',
  );
}

/** A zip body: refused in words (WidgetRefused) unless it is one of the three shapes, whole and within limits. */
export async function importArchive(buffer: Buffer): Promise<WidgetDraft> {
  const archive = await readArchive(buffer);
  try {
    const { shape, base } = findShape(archive.files);
    const names = SHAPES[shape];
    const byName = new Map(archive.files.map((f) => [f.name, f]));
    const read = async (file: string, max: number) => {
      const entry = byName.get(base + file);
      if (!entry) return undefined;
      return entry.read(
        max,
        () => new WidgetRefused(`${shownName(entry.name)} is larger than the ${max} bytes allowed`),
      );
    };
    const code = async (file: string) => {
      const bytes = await read(file, WIDGET_CODE_MAX_BYTES);
      return bytes === undefined ? '' : text(bytes);
    };
    // The folder's marker is its widget.html, read below with the other panes.
    const marker = shape === 'folder' ? undefined : await read(names.marker, WIDGET_JSON_MAX_BYTES);
    const html = await code(names.html);
    const css = await code(names.css);
    const js = await code(names.js);
    const fields = jsonFile(
      names.fields,
      await read(names.fields, WIDGET_JSON_MAX_BYTES),
      WidgetFieldsSchema,
    );
    const data = jsonFile(names.data, await read(names.data, WIDGET_JSON_MAX_BYTES), WidgetDataSchema);
    const folderName = base ? base.slice(0, -1).slice(0, 100) : undefined;
    let about: Pick<WidgetDraft, 'name' | 'version' | 'author' | 'description'> = {
      name: folderName?.trim() || 'Imported widget',
      version: '1.0.0',
    };
    if (shape === 'package') {
      const manifest = jsonFile('manifest.json', marker, v.unknown());
      const parsed = parseWith(ImportedWidgetManifest, manifest);
      if (!parsed.ok) throw new WidgetRefused(`manifest.json: ${parsed.error}`);
      const { name, version, author, description } = parsed.value;
      about = { name, version, author, description };
    } else if (shape === 'widget-io') {
      const name = marker && iniName(text(marker));
      if (name) about.name = name;
    }
    // Everything else: media the widget refers to by name, under media/widgets/<id>/.
    const own = new Set(Object.values(names).map((n) => base + n));
    const media: WidgetDraft['media'] = [];
    const skipped: string[] = [];
    for (const file of archive.files) {
      if (own.has(file.name) || clutter(file.name)) continue;
      const name = file.name.slice(base.length);
      const usable =
        file.name.startsWith(base) &&
        (mediaType(name) !== undefined || FONT.test(name)) &&
        parseWith(MediaPath, name).ok &&
        !name.split('/').some((part) => part.startsWith('.'));
      if (!usable) {
        skipped.push(shownName(file.name));
        continue;
      }
      const bytes = await file.read(
        MEDIA_MAX_BYTES,
        () =>
          new WidgetRefused(`${shownName(file.name)} is larger than the ${MEDIA_MAX_BYTES} bytes allowed`),
      );
      media.push({ name, bytes });
    }
    return {
      source: shape,
      ...about,
      html,
      css,
      js,
      fields,
      data: widgetDefaults(fields, data),
      media,
      skipped,
    };
  } finally {
    archive.close();
  }
}

/** The five panes pasted (already validated by PastedWidget). */
export function importPasted(input: PastedWidget): WidgetDraft {
  const fields = input.fields ?? {};
  return {
    source: 'pasted',
    name: input.name,
    version: '1.0.0',
    html: input.html,
    css: input.css,
    js: input.js,
    fields,
    data: widgetDefaults(fields, input.data ?? {}),
    media: [],
    skipped: [],
  };
}

/** Where a media file of package `id` is kept, as a media name. */
export const widgetMediaName = (id: string, name: string) => posix.join('widgets', id, name);
