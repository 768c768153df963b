// One-file backups of a data directory: `overlay-daemon backup` writes a .tar.gz of the
// overlays, rules, media, settings (its secrets only with --include-secrets) and a consistent copy
// of events.db (SQLite's online backup, so a running daemon can be backed up); `restore` checks every
// member and every file before it touches anything, keeps the current state under backups/<time>/, then
// swaps. A hostile archive (absolute paths, .., links, devices, a member larger than allowed, more bytes
// or members than a backup holds, a file and a folder of one name) changes nothing. Restored files are
// private to the user (0600, folders 0700) whatever modes the archive gives them.
import { createReadStream, type Stats } from 'node:fs';
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import * as v from 'valibot';
import { LiveValuesFile } from '../../../shared/live-values.js';
import {
  MediaPath,
  parseJsonWith,
  parseWith,
  type WidgetPackage,
  withoutSecretValues,
} from '../../../shared/protocol/index.js';
import { RuleList } from '../../../shared/rules.js';
import { keepMissingSecrets, StoredSettings, withoutSecrets } from '../../../shared/settings.js';
import { DaemonError, type DaemonErrorCode, errorMessage } from '../errors.js';
import { MIGRATION_COUNT } from '../journal/journal.js';
import { safeLogLine } from '../log-line.js';
import { TWITCH_FILE } from '../sources/twitch/auth.js';
import { YOUTUBE_FILE } from '../sources/youtube/token-file.js';
import type { DataDir } from '../store/data-dir.js';
import { parseOverlayFile } from '../store/overlay-store.js';
import { PACKAGE_FILES, WidgetPackageStore, writePackageFolder } from '../widgets/package-store.js';

const FORMAT = 1;
const Manifest = v.object({
  format: v.literal(FORMAT),
  // A date as the backup writes it, nothing else: it is printed in the terminal and the log.
  createdAt: v.pipe(v.string(), v.maxLength(40), v.isoTimestamp('must be a date and time (ISO 8601)')),
  includesSecrets: v.boolean(),
});
export type BackupManifest = v.InferOutput<typeof Manifest>;

/** Files that hold secrets: in a backup only with --include-secrets. */
const SECRET_FILES = ['admin.key', 'license.json', 'tunnel.json', TWITCH_FILE, YOUTUBE_FILE] as const;
const JSON_MAX = 1024 * 1024;
/** The values widgets keep from events (goal progress, counters, top gifters), apart from the overlay files. */
const LIVE_VALUES = 'live-values.json';
const MEDIA_MAX = 20 * 1024 * 1024;
const EVENTS_MAX = 4 * 1024 * 1024 * 1024;
const TOTAL_MAX = 6 * 1024 * 1024 * 1024;
/** Members of every kind (files and folders). */
const MAX_MEMBERS = 20_000;
/**
 * What an archive may expand to, for its packed size: a real backup (a journal, overlays, media that
 * is already compressed) expands a few times, a crafted one hundreds of times. At most this many times
 * its size, or EXPANDED_FLOOR for a small archive, and never more than TOTAL_MAX.
 */
const EXPANSION_MAX = 64;
const EXPANDED_FLOOR = 256 * 1024 * 1024;

export class BackupError extends DaemonError {
  constructor(message: string, code: DaemonErrorCode = 'backup_failed') {
    super(code, message);
  }
}
/** The archive holds more than a backup may (bytes or members): refused while it is read. */
export class BackupTooLarge extends BackupError {
  constructor(message: string) {
    super(message, 'payload_too_large');
  }
}

/** The most an archive of `packed` bytes may expand to. */
export function expandedLimit(packed: number): number {
  return Math.min(TOTAL_MAX, Math.max(EXPANDED_FLOOR, packed * EXPANSION_MAX));
}

/**
 * A member's name as it may be printed (the terminal, the log, an HTTP answer): control characters
 * written as escapes, so a crafted name cannot drive the terminal; at most 200 characters.
 */
function shown(name: string): string {
  const escaped = safeLogLine(name);
  return escaped.length > 200 ? `${escaped.slice(0, 200)}…` : escaped;
}

/** The largest a member may be, by its path; undefined: it has no place in a backup. */
function allowedSize(path: string): number | undefined {
  if (path === 'manifest.json' || path === 'rules.json' || path === 'settings.json' || path === LIVE_VALUES)
    return JSON_MAX;
  if (path === 'events.db') return EVENTS_MAX;
  if ((SECRET_FILES as readonly string[]).includes(path)) return JSON_MAX;
  if (/^overlays\/[0-9a-f-]{36}\.json$/.test(path)) return JSON_MAX;
  if (WIDGET_FILE.test(path)) return JSON_MAX;
  if (path.startsWith('media/') && parseWith(MediaPath, path.slice('media/'.length)).ok) return MEDIA_MAX;
  return undefined;
}

const DIRECTORIES = new Set(['overlays', 'media', 'widgets']);
/** A file of a widget package (widgets/package-store.ts), and a package's folder. */
const WIDGET_FILE = new RegExp(
  `^widgets/[0-9a-f-]{36}/(${PACKAGE_FILES.map((f) => f.replace('.', '\\.')).join('|')})$`,
);
const WIDGET_FOLDER = /^widgets\/[0-9a-f-]{36}$/;

/** The store of widget packages under `root`/widgets (the data directory, or a restore's staging). */
const widgetStore = (root: string) =>
  new WidgetPackageStore({
    widgetsDir: join(root, 'widgets'),
    mediaDir: join(root, 'media'),
    overlaysDir: join(root, 'overlays'),
  });

/** Regular files under `dir`, relative paths with `/`; links and anything else are left out. */
async function regularFiles(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await regularFiles(path, base)));
    else if (entry.isFile()) out.push(relative(base, path).split(sep).join('/'));
  }
  return out;
}

const exists = (path: string) =>
  lstat(path).then(
    (s: Stats) => s,
    () => undefined,
  );

interface BackupResult {
  file: string;
  members: number;
  bytes: number;
}

export async function createBackup(
  dirs: DataDir,
  file: string,
  options: { includeSecrets: boolean; now?: Date },
): Promise<BackupResult> {
  const staging = await mkdtemp(join(dirs.root, '.backup-'));
  try {
    const members: string[] = [];
    const take = async (from: string, to: string) => {
      await mkdir(join(staging, to, '..'), { recursive: true });
      await copyFile(from, join(staging, to));
      members.push(to);
    };
    for (const name of await regularFiles(dirs.overlaysDir))
      if (allowedSize(`overlays/${name}`) !== undefined)
        await take(join(dirs.overlaysDir, name), `overlays/${name}`);
    for (const name of await regularFiles(dirs.mediaDir))
      if (allowedSize(`media/${name}`) !== undefined) await take(join(dirs.mediaDir, name), `media/${name}`);
    // Widget packages that read, each whole; values of `secret` fields only with --include-secrets.
    const widgets = widgetStore(dirs.root);
    for (const id of await widgets.ids()) {
      const pkg = await widgets.get(id);
      if (!pkg) continue;
      await mkdir(join(staging, 'widgets'), { recursive: true });
      await writePackageFolder(
        join(staging, 'widgets', id),
        options.includeSecrets ? pkg : withoutSecretValues(pkg),
      );
      for (const file of PACKAGE_FILES) members.push(`widgets/${id}/${file}`);
    }
    if ((await exists(dirs.rulesFile))?.isFile()) await take(dirs.rulesFile, 'rules.json');
    if ((await exists(dirs.liveValuesFile))?.isFile()) await take(dirs.liveValuesFile, LIVE_VALUES);
    if ((await exists(dirs.settingsFile))?.isFile()) {
      const settings = parseJsonWith(StoredSettings, await readFile(dirs.settingsFile, 'utf8'));
      if (settings.ok) {
        // Without --include-secrets every secret of the settings is left out (the schema marks them);
        // a restore keeps the ones in place.
        const kept = options.includeSecrets ? settings.value : withoutSecrets(settings.value);
        await writeFile(join(staging, 'settings.json'), `${JSON.stringify(kept, null, 2)}\n`, {
          mode: 0o600,
        });
        members.push('settings.json');
      }
    }
    if (options.includeSecrets)
      for (const name of SECRET_FILES) {
        const path = join(dirs.root, name);
        if ((await exists(path))?.isFile()) await take(path, name);
      }
    if ((await exists(dirs.eventsFile))?.isFile()) {
      // The online backup API: a consistent copy while the daemon goes on writing.
      const db = new Database(dirs.eventsFile, { readonly: true, fileMustExist: true });
      try {
        await db.backup(join(staging, 'events.db'));
      } finally {
        db.close();
      }
      members.push('events.db');
    }
    const manifest: v.InferOutput<typeof Manifest> = {
      format: FORMAT,
      createdAt: (options.now ?? new Date()).toISOString(),
      includesSecrets: options.includeSecrets,
    };
    await writeFile(join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    members.unshift('manifest.json');
    const temp = `${file}.${process.pid}.tmp`;
    await tar.c(
      {
        gzip: true,
        file: temp,
        cwd: staging,
        portable: true,
        mode: 0o600,
      } as tar.TarOptionsWithAliasesAsyncFile,
      members,
    );
    await rename(temp, file);
    return { file, members: members.length, bytes: (await stat(file)).size };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Every member of the archive, checked from its header before any byte of it is written anywhere. */
async function inspect(file: string): Promise<Map<string, number>> {
  const members = new Map<string, number>();
  const folders = new Set<string>();
  const limit = expandedLimit((await stat(file)).size);
  let entries = 0;
  let total = 0;
  let problem: BackupError | undefined;
  const refuse = (error: BackupError) => {
    problem ??= error;
  };
  /** A name that is a file and a folder at once (or a file inside a file) cannot be written. */
  const clash = (path: string, folder: boolean): string | undefined => {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (members.has(parent)) return parent;
    }
    return folder ? (members.has(path) ? path : undefined) : folders.has(path) ? path : undefined;
  };
  const source = createReadStream(file);
  // The bytes the archive expands to are counted as they are read: a crafted archive stops here.
  let expanded = 0;
  const headroom = (MAX_MEMBERS + 4) * 1024;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      expanded += chunk.length;
      done(
        expanded > limit + headroom
          ? new BackupTooLarge(
              `the archive expands to more than ${limit} bytes, more than a backup of its size`,
            )
          : null,
        chunk,
      );
    },
  });
  const parser = new tar.Parser({
    strict: true,
    onReadEntry: (entry) => {
      entry.resume();
      if (problem) return;
      const path = entry.path.replace(/\/+$/, '');
      const raw = entry.header.path ?? entry.path;
      const name = shown(path);
      if (++entries > MAX_MEMBERS)
        refuse(new BackupTooLarge(`the archive holds more than ${MAX_MEMBERS} members`));
      else if (
        raw.startsWith('/') ||
        /^[A-Za-z]:/.test(raw) ||
        raw.split(/[\\/]/).includes('..') ||
        raw.includes('\0')
      )
        refuse(new BackupError(`the member "${shown(raw)}" points outside the backup`));
      else if (entry.type === 'Directory') {
        const other = clash(path, true);
        if (
          !DIRECTORIES.has(path) &&
          !WIDGET_FOLDER.test(path) &&
          !(path.startsWith('media/') && parseWith(MediaPath, path.slice(6)).ok)
        )
          refuse(new BackupError(`the folder "${name}" has no place in a backup`));
        else if (other !== undefined)
          refuse(new BackupError(`"${name}" is both a file and a folder in the archive`));
        else folders.add(path);
      } else if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile')
        refuse(new BackupError(`the member "${name}" is a ${entry.type}, not a file`));
      else {
        const max = allowedSize(path);
        const size = entry.size ?? 0;
        const other = clash(path, false);
        if (max === undefined) refuse(new BackupError(`the member "${name}" has no place in a backup`));
        else if (size > max)
          refuse(new BackupError(`the member "${name}" is ${size} bytes, more than the ${max} allowed`));
        else if (members.has(path)) refuse(new BackupError(`the member "${name}" is there twice`));
        else if (other !== undefined)
          refuse(new BackupError(`"${shown(other)}" is both a file and a folder in the archive`));
        else {
          members.set(path, size);
          total += size;
          if (total > limit)
            refuse(
              new BackupTooLarge(
                `the archive expands to more than ${limit} bytes, more than a backup of its size`,
              ),
            );
        }
      }
      // Stop reading at the first problem: a hostile archive is not decompressed to its end.
      if (problem) source.destroy(problem);
    },
  });
  try {
    await pipeline(source, createGunzip(), counter, parser);
  } catch (err) {
    if (problem) throw problem;
    if (err instanceof BackupError) throw err;
    throw new BackupError(`it is not a readable .tar.gz (${errorMessage(err)})`);
  }
  if (problem) throw problem;
  if (!members.has('manifest.json'))
    throw new BackupError('it has no manifest.json: not a backup of overlay-daemon');
  return members;
}

/** The manifest of an archive already checked (a pending import), read without extracting anything. */
export async function readBackupManifest(file: string): Promise<BackupManifest> {
  let text = '';
  const parser = new tar.Parser({
    onReadEntry: (entry) => {
      if (entry.path !== 'manifest.json' || (entry.size ?? 0) > JSON_MAX) return void entry.resume();
      entry.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
    },
  });
  try {
    await pipeline(createReadStream(file), parser);
  } catch (err) {
    throw new BackupError(`it is not a readable .tar.gz (${errorMessage(err)})`);
  }
  const manifest = parseJsonWith(Manifest, text);
  if (!manifest.ok) throw new BackupError(`manifest.json: ${manifest.error}`);
  return manifest.value;
}

/** Checks the extracted files as the daemon would read them. */
async function validate(
  staging: string,
  members: Map<string, number>,
): Promise<v.InferOutput<typeof Manifest>> {
  const text = (name: string) => readFile(join(staging, name), 'utf8');
  const manifest = parseJsonWith(Manifest, await text('manifest.json'));
  if (!manifest.ok) throw new BackupError(`manifest.json: ${manifest.error}`);
  for (const name of SECRET_FILES) {
    if (!members.has(name)) continue;
    // A backup made without secrets never holds them: one that does is not what it says it is.
    if (!manifest.value.includesSecrets)
      throw new BackupError(`${name}: the manifest says the backup holds no secrets, yet it has this file`);
    if (name === 'admin.key' && (await text(name)).trim().length < 16)
      throw new BackupError('admin.key: it holds no usable key (the daemon would refuse to start)');
  }
  for (const path of members.keys()) {
    if (path.startsWith('overlays/')) {
      const id = path.slice('overlays/'.length, -'.json'.length);
      const parsed = parseOverlayFile(id, await text(path));
      if (!parsed.ok) throw new BackupError(`${path}: ${parsed.error}`);
    }
  }
  const packages = new Set(
    [...members.keys()].filter((p) => WIDGET_FILE.test(p)).map((p) => p.split('/')[1]!),
  );
  const restoredWidgets = widgetStore(staging);
  for (const id of packages)
    if (!(await restoredWidgets.get(id)))
      throw new BackupError(`widgets/${id}: not a whole, readable widget package`);
  if (members.has(LIVE_VALUES)) {
    const live = parseJsonWith(LiveValuesFile, await text(LIVE_VALUES));
    if (!live.ok) throw new BackupError(`${LIVE_VALUES}: ${live.error}`);
  }
  if (members.has('rules.json')) {
    const rules = parseJsonWith(RuleList, await text('rules.json'));
    if (!rules.ok) throw new BackupError(`rules.json: ${rules.error}`);
  }
  if (members.has('settings.json')) {
    const settings = parseJsonWith(StoredSettings, await text('settings.json'));
    if (!settings.ok) throw new BackupError(`settings.json: ${settings.error}`);
  }
  if (members.has('events.db')) {
    let db: Database.Database | undefined;
    try {
      db = new Database(join(staging, 'events.db'), { readonly: true, fileMustExist: true });
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(String(check));
      const version = Number(db.pragma('user_version', { simple: true }));
      if (version > MIGRATION_COUNT) throw new Error(`written by a newer version (schema ${version})`);
      checkSequence(db);
    } catch (err) {
      throw new BackupError(`events.db: ${errorMessage(err)}`);
    } finally {
      db?.close();
    }
  }
  return manifest.value;
}

/** The journal's sequence must be whole numbers: a crafted one would number messages NaN. */
function checkSequence(db: Database.Database): void {
  const tables = new Set(
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
  );
  const whole = (value: unknown) =>
    (typeof value === 'number' || typeof value === 'bigint') && Number.isSafeInteger(Number(value));
  if (tables.has('events')) {
    const max = db.prepare('SELECT MAX(seq) FROM events').pluck().get();
    if (max !== null && !whole(max)) throw new Error(`its sequence is not a whole number (${String(max)})`);
  }
  if (tables.has('sessions')) {
    const bad = db
      .prepare(
        "SELECT COUNT(*) FROM sessions WHERE typeof(first_seq) <> 'integer' OR typeof(last_seq) <> 'integer'",
      )
      .pluck()
      .get();
    if (Number(bad) > 0) throw new Error('a session names events by something other than whole numbers');
  }
  if (tables.has('meta')) {
    const reserved = db.prepare("SELECT value FROM meta WHERE key = 'seq_reserved'").pluck().get();
    const value = reserved === undefined ? 0 : Number(reserved);
    if (!Number.isSafeInteger(value) || value < 0)
      throw new Error(`its sequence is not a whole number (seq_reserved is ${JSON.stringify(reserved)})`);
  }
}

/** Makes every file under `dir` private to the user (0600) and every folder 0700, whatever the archive said. */
async function makePrivate(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await makePrivate(path);
    else if (entry.isFile()) await chmod(path, 0o600);
  }
}

/** What a restore replaces, in the data directory. */
const RESTORED = [
  'overlays',
  'widgets',
  LIVE_VALUES,
  'media',
  'rules.json',
  'settings.json',
  'events.db',
  ...SECRET_FILES,
] as const;

/** Checks an archive as a restore would, and changes nothing (the dashboard's import before its restart). */
export async function verifyBackup(dirs: DataDir, file: string): Promise<v.InferOutput<typeof Manifest>> {
  const members = await inspect(file);
  const staging = await mkdtemp(join(dirs.root, '.restore-'));
  try {
    await extract(file, staging, members);
    return await validate(staging, members);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function extract(file: string, staging: string, members: Map<string, number>): Promise<void> {
  await tar.x({
    file,
    cwd: staging,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    // Only what was inspected; anything else (a link slipped past) is not written.
    filter: (path, entry) => {
      const p = path.replace(/\/+$/, '');
      return 'type' in entry && entry.type === 'Directory'
        ? DIRECTORIES.has(p) || p.startsWith('media/') || WIDGET_FOLDER.test(p)
        : members.has(p);
    },
  });
}

export async function restoreBackup(
  dirs: DataDir,
  file: string,
  options: { now?: Date } = {},
): Promise<{ keptIn: string; manifest: BackupManifest }> {
  const members = await inspect(file);
  const staging = await mkdtemp(join(dirs.root, '.restore-'));
  try {
    await extract(file, staging, members);
    const manifest = await validate(staging, members);
    // A secret the backup does not carry (made without secrets, or before it existed) stays as stored.
    if (members.has('settings.json')) {
      const current = parseJsonWith(
        StoredSettings,
        await readFile(dirs.settingsFile, 'utf8').catch(() => ''),
      );
      const restored = parseJsonWith(StoredSettings, await readFile(join(staging, 'settings.json'), 'utf8'));
      if (current.ok && restored.ok) {
        const merged = keepMissingSecrets(restored.value, current.value);
        if (merged !== restored.value)
          await writeFile(join(staging, 'settings.json'), `${JSON.stringify(merged, null, 2)}\n`, {
            mode: 0o600,
          });
      }
    }
    // A widget's secret values the backup does not carry stay as stored, for a package of the same id.
    if (!manifest.includesSecrets) await keepWidgetSecrets(staging, dirs.root);
    // The archive's modes are not kept: everything restored is the user's alone.
    await makePrivate(staging);
    // Everything checked: the current state moves aside, then the backup's takes its place.
    const keptIn = join(dirs.backupsDir, (options.now ?? new Date()).toISOString().replace(/[:.]/g, '-'));
    await mkdir(keptIn, { recursive: true, mode: 0o700 });
    // The backup's overlays and media replace the current ones whole (none in it: none after); the live
    // widget values go with the overlays (a backup without them: the restored overlay files' values).
    const incoming = (name: string) =>
      name === 'overlays' ||
      name === LIVE_VALUES ||
      name === 'media' ||
      name === 'widgets' ||
      members.has(name);
    const moved: string[] = [];
    try {
      for (const name of RESTORED) {
        if (!incoming(name)) continue;
        for (const suffix of name === 'events.db' ? ['', '-wal', '-shm'] : ['']) {
          const path = join(dirs.root, name + suffix);
          if (await exists(path)) {
            await rename(path, join(keptIn, name + suffix));
            moved.push(name + suffix);
          }
        }
      }
      for (const name of RESTORED) {
        const from = join(staging, name);
        if (await exists(from)) await rename(from, join(dirs.root, name));
        else if (name === 'overlays' || name === 'media' || name === 'widgets')
          await mkdir(join(dirs.root, name), { recursive: true, mode: 0o700 });
      }
    } catch (err) {
      // Put back what was moved, so a failed swap leaves the data directory as it was.
      for (const name of moved) await rename(join(keptIn, name), join(dirs.root, name)).catch(() => {});
      throw new BackupError(`the files could not be swapped (${errorMessage(err)}); nothing was changed`);
    }
    return { keptIn, manifest };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Puts the stored values of `secret` fields into restored packages that came without them. */
async function keepWidgetSecrets(staging: string, root: string): Promise<void> {
  const restored = widgetStore(staging);
  const current = widgetStore(root);
  for (const id of await restored.ids()) {
    const pkg = await restored.get(id);
    const stored = await current.get(id);
    if (!pkg || !stored) continue;
    const data: WidgetPackage['data'] = { ...pkg.data };
    let changed = false;
    for (const [key, field] of Object.entries(pkg.fields))
      if (field.type === 'secret' && !(key in data) && key in stored.data) {
        data[key] = stored.data[key];
        changed = true;
      }
    if (!changed) continue;
    await rm(join(staging, 'widgets', id), { recursive: true, force: true });
    await writePackageFolder(join(staging, 'widgets', id), { ...pkg, data });
  }
}
