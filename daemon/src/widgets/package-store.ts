// Widget packages in the data directory (decisions-4 §14): `widgets/<packageId>/` with manifest.json,
// widget.html, widget.css, widget.js, fields.json and data.json; the media a package brought under
// `media/widgets/<packageId>/`. Every write goes into a temporary folder first and is renamed into place,
// so a package is there whole or not at all, and a refused import leaves nothing behind.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  MediaPath,
  parseJsonWith,
  parseWith,
  WIDGET_PACKAGES_MAX,
  WidgetPackage,
  type WidgetSummary,
} from '../../../shared/protocol/index.js';
import { diskFullOr } from '../store/atomic-file.js';
import { type WidgetDraft, widgetMediaName } from './importers.js';
import { shownName, WidgetRefused } from './zip-reader.js';

const PACKAGE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The files of a package folder, by the field of WidgetPackage they hold. */
const FILES = {
  manifest: 'manifest.json',
  html: 'widget.html',
  css: 'widget.css',
  js: 'widget.js',
  fields: 'fields.json',
  data: 'data.json',
} as const;

export interface WidgetStoreDirs {
  widgetsDir: string;
  mediaDir: string;
  overlaysDir: string;
}

/** The package could not be written (a full disk): nothing of it is in force. */
export type WriteOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; reason: 'full' | 'missing'; message: string };

async function writePrivate(path: string, data: string | Buffer): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const serialise = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export class WidgetPackageStore {
  readonly #dirs: WidgetStoreDirs;
  /** One change at a time: the count limit and the swaps are checked against what is on disk. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(dirs: WidgetStoreDirs) {
    this.#dirs = dirs;
  }

  #serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => {});
    return next;
  }

  /** The ids of the package folders (temporary and foreign folders left out). */
  async ids(): Promise<string[]> {
    const entries = await readdir(this.#dirs.widgetsDir, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory() && PACKAGE_ID.test(e.name)).map((e) => e.name);
  }

  /** A package as stored, or undefined when there is none of that id (or its files do not read). */
  async get(id: string): Promise<WidgetPackage | undefined> {
    if (!PACKAGE_ID.test(id)) return undefined;
    const folder = join(this.#dirs.widgetsDir, id);
    try {
      const read = (file: string) => readFile(join(folder, file), 'utf8');
      const manifest = parseJsonWith(WidgetPackage.entries.manifest, await read(FILES.manifest));
      const fields = parseJsonWith(WidgetPackage.entries.fields, await read(FILES.fields));
      const data = parseJsonWith(WidgetPackage.entries.data, await read(FILES.data));
      if (!manifest.ok || !fields.ok || !data.ok || manifest.value.id !== id) return undefined;
      const pkg = parseWith(WidgetPackage, {
        manifest: manifest.value,
        html: await read(FILES.html),
        css: await read(FILES.css),
        js: await read(FILES.js),
        fields: fields.value,
        data: data.value,
      });
      return pkg.ok ? pkg.value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Every package that reads, with the overlays that place it. */
  async list(): Promise<WidgetSummary[]> {
    const usage = await this.usage();
    const out: WidgetSummary[] = [];
    for (const id of await this.ids()) {
      const pkg = await this.get(id);
      if (!pkg) continue;
      const { name, version, compat } = pkg.manifest;
      out.push({ id, name, version, compat, usedBy: (usage.get(id) ?? []).map((o) => o.id) });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /**
   * Package id → the overlays (id and name) whose widgets of `type: "custom"` name it. Read from the overlay files
   * themselves, leniently (only `widgets[].type` and `.widget`), so a placement counts whatever else the
   * file holds.
   */
  async usage(): Promise<Map<string, { id: string; name: string }[]>> {
    const usage = new Map<string, { id: string; name: string }[]>();
    const names = await readdir(this.#dirs.overlaysDir).catch(() => [] as string[]);
    for (const name of names.sort()) {
      const overlayId = /^([0-9a-f-]{36})\.json$/.exec(name)?.[1];
      if (!overlayId) continue;
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(join(this.#dirs.overlaysDir, name), 'utf8'));
      } catch {
        continue;
      }
      const { widgets, name: overlayName } = (doc ?? {}) as { widgets?: unknown; name?: unknown };
      if (!Array.isArray(widgets)) continue;
      for (const widget of widgets as unknown[]) {
        const { type, widget: packageId } = (widget ?? {}) as { type?: unknown; widget?: unknown };
        if (type !== 'custom' || typeof packageId !== 'string') continue;
        const id = packageId.toLowerCase();
        const list = usage.get(id) ?? [];
        if (!list.some((o) => o.id === overlayId))
          list.push({ id: overlayId, name: typeof overlayName === 'string' ? overlayName : overlayId });
        usage.set(id, list);
      }
    }
    return usage;
  }

  /** A new package from an import, under a new id; refused (WidgetRefused) with nothing written. */
  create(draft: WidgetDraft): Promise<WriteOutcome<WidgetPackage>> {
    return this.#serially(async () => {
      if ((await this.ids()).length >= WIDGET_PACKAGES_MAX)
        throw new WidgetRefused(
          `there are ${WIDGET_PACKAGES_MAX} widget packages already, the most allowed: delete one first`,
          'conflict',
        );
      const id = randomUUID();
      const pkg = checked({
        manifest: {
          formatVersion: 1,
          id,
          name: draft.name,
          version: draft.version,
          ...(draft.author === undefined ? {} : { author: draft.author }),
          ...(draft.description === undefined ? {} : { description: draft.description }),
          compat: 'se',
        },
        html: draft.html,
        css: draft.css,
        js: draft.js,
        fields: draft.fields,
        data: draft.data,
      });
      for (const file of draft.media)
        if (!parseWith(MediaPath, widgetMediaName(id, file.name)).ok)
          throw new WidgetRefused(`${shownName(file.name)}: the name is too long for a media file`);
      const tag = randomBytes(6).toString('hex');
      const staging = join(this.#dirs.widgetsDir, `.incoming-${tag}`);
      const mediaRoot = join(this.#dirs.mediaDir, 'widgets');
      const mediaStaging = join(mediaRoot, `.incoming-${tag}`);
      try {
        await this.#writeFolder(staging, pkg);
        if (draft.media.length > 0) {
          for (const file of draft.media) {
            const path = join(mediaStaging, file.name);
            await mkdir(dirname(path), { recursive: true, mode: 0o700 });
            await writePrivate(path, file.bytes);
          }
          await rename(mediaStaging, join(mediaRoot, id));
        }
        await rename(staging, join(this.#dirs.widgetsDir, id));
      } catch (err) {
        await rm(staging, { recursive: true, force: true });
        await rm(mediaStaging, { recursive: true, force: true });
        await rm(join(mediaRoot, id), { recursive: true, force: true });
        return failed(err, this.#dirs.widgetsDir);
      }
      return { ok: true, value: pkg };
    });
  }

  /** Replaces a package's five files and manifest whole (its id stays); its media stay as they are. */
  replace(id: string, next: WidgetPackage): Promise<WriteOutcome<WidgetPackage>> {
    return this.#serially(async () => {
      const folder = join(this.#dirs.widgetsDir, id);
      if (!(await this.get(id)))
        return { ok: false, reason: 'missing', message: 'No widget package has that id' };
      const pkg = checked({ ...next, manifest: { ...next.manifest, id } });
      const tag = randomBytes(6).toString('hex');
      const staging = join(this.#dirs.widgetsDir, `.incoming-${tag}`);
      const old = join(this.#dirs.widgetsDir, `.replaced-${tag}`);
      try {
        await this.#writeFolder(staging, pkg);
        await rename(folder, old);
        try {
          await rename(staging, folder);
        } catch (err) {
          await rename(old, folder).catch(() => {});
          throw err;
        }
      } catch (err) {
        await rm(staging, { recursive: true, force: true });
        return failed(err, folder);
      }
      await rm(old, { recursive: true, force: true });
      return { ok: true, value: pkg };
    });
  }

  /** Removes a package and the media it brought; false when there is none of that id. */
  remove(id: string): Promise<boolean> {
    return this.#serially(async () => {
      if (!(await this.ids()).includes(id)) return false;
      const gone = join(this.#dirs.widgetsDir, `.removed-${randomBytes(6).toString('hex')}`);
      // Out of the list at once (one rename), then its files.
      await rename(join(this.#dirs.widgetsDir, id), gone);
      await rm(gone, { recursive: true, force: true });
      await rm(join(this.#dirs.mediaDir, 'widgets', id), { recursive: true, force: true });
      return true;
    });
  }

  /** The media a package brought (regular files only; links left out), by their path inside the package. */
  async media(id: string): Promise<{ name: string; bytes: Buffer }[]> {
    if (!PACKAGE_ID.test(id)) return [];
    const root = join(this.#dirs.mediaDir, 'widgets', id);
    const out: { name: string; bytes: Buffer }[] = [];
    const walk = async (dir: string, prefix: string, depth: number): Promise<void> => {
      if (depth > 8) return;
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (entry.name.startsWith('.')) continue;
        const name = prefix + entry.name;
        if (entry.isDirectory()) await walk(join(dir, entry.name), `${name}/`, depth + 1);
        else if (entry.isFile()) out.push({ name, bytes: await readFile(join(dir, entry.name)) });
      }
    };
    await walk(root, '', 0);
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  async #writeFolder(folder: string, pkg: WidgetPackage): Promise<void> {
    await mkdir(this.#dirs.widgetsDir, { recursive: true, mode: 0o700 });
    await writePackageFolder(folder, pkg);
  }
}

/** Writes a package's six files into a new folder (private to the user). */
export async function writePackageFolder(folder: string, pkg: WidgetPackage): Promise<void> {
  await mkdir(folder, { mode: 0o700 });
  await writePrivate(join(folder, FILES.manifest), serialise(pkg.manifest));
  await writePrivate(join(folder, FILES.html), pkg.html);
  await writePrivate(join(folder, FILES.css), pkg.css);
  await writePrivate(join(folder, FILES.js), pkg.js);
  await writePrivate(join(folder, FILES.fields), serialise(pkg.fields));
  await writePrivate(join(folder, FILES.data), serialise(pkg.data));
}

/** The files of a package folder, as backups name them. */
export const PACKAGE_FILES: readonly string[] = Object.values(FILES);

/** The package as it will be stored, within every limit; refused naming the file otherwise. */
function checked(pkg: WidgetPackage): WidgetPackage {
  const parsed = parseWith(WidgetPackage, pkg);
  if (!parsed.ok) throw new WidgetRefused(fileOf(parsed.error));
  return parsed.value;
}

/** "html: widget.html may be…" → "widget.html may be…"; "fields.x: …" → "fields.json: x: …". */
export function fileOf(error: string): string {
  const match = /^(manifest|html|css|js|fields|data)(?:\.([^:]*))?: (.*)$/.exec(error);
  if (!match) return error;
  const [, key, path, message] = match as unknown as [string, keyof typeof FILES, string | undefined, string];
  if (message.startsWith(FILES[key])) return message;
  return `${FILES[key]}: ${path ? `${path}: ` : ''}${message}`;
}

function failed(err: unknown, path: string): { ok: false; reason: 'full'; message: string } {
  const error = diskFullOr(path, err);
  if (error !== err) return { ok: false, reason: 'full', message: (error as Error).message };
  throw err;
}
