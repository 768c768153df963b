// One-file backups of a data directory (decisions-2 §7): `overlay-daemon backup` writes a .tar.gz of the
// overlays, rules, media, settings (the OBS password only with --include-secrets) and a consistent copy
// of events.db (SQLite's online backup, so a running daemon can be backed up); `restore` checks every
// member and every file before it touches anything, keeps the current state under backups/<time>/, then
// swaps. A hostile archive (absolute paths, .., links, devices, a member larger than allowed) changes nothing.
import { createReadStream, type Stats } from 'node:fs';
import {
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
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import * as v from 'valibot';
import { MediaPath, parseJsonWith, parseWith } from '../../../shared/protocol/index.js';
import { RuleList } from '../../../shared/rules.js';
import { StoredSettings } from '../../../shared/settings.js';
import { errorMessage } from '../errors.js';
import { MIGRATION_COUNT } from '../journal/journal.js';
import type { DataDir } from '../store/data-dir.js';
import { parseOverlayFile } from '../store/overlay-store.js';

const FORMAT = 1;
const Manifest = v.object({
  format: v.literal(FORMAT),
  createdAt: v.string(),
  includesSecrets: v.boolean(),
});

/** Files that hold secrets: in a backup only with --include-secrets. */
const SECRET_FILES = ['admin.key', 'license.json', 'tunnel.json'] as const;
const JSON_MAX = 1024 * 1024;
const MEDIA_MAX = 20 * 1024 * 1024;
const EVENTS_MAX = 4 * 1024 * 1024 * 1024;
const TOTAL_MAX = 6 * 1024 * 1024 * 1024;
const MAX_MEMBERS = 20_000;

export class BackupError extends Error {}

/** The largest a member may be, by its path; undefined: it has no place in a backup. */
function allowedSize(path: string): number | undefined {
  if (path === 'manifest.json' || path === 'rules.json' || path === 'settings.json') return JSON_MAX;
  if (path === 'events.db') return EVENTS_MAX;
  if ((SECRET_FILES as readonly string[]).includes(path)) return JSON_MAX;
  if (/^overlays\/[0-9a-f-]{36}\.json$/.test(path)) return JSON_MAX;
  if (path.startsWith('media/') && parseWith(MediaPath, path.slice('media/'.length)).ok) return MEDIA_MAX;
  return undefined;
}

const DIRECTORIES = new Set(['overlays', 'media']);

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
    if ((await exists(dirs.rulesFile))?.isFile()) await take(dirs.rulesFile, 'rules.json');
    if ((await exists(dirs.settingsFile))?.isFile()) {
      const settings = parseJsonWith(StoredSettings, await readFile(dirs.settingsFile, 'utf8'));
      if (settings.ok) {
        // Without --include-secrets the OBS password is left out (a restore keeps the one in place).
        const { password: _secret, ...obs } = settings.value.obs;
        const kept = options.includeSecrets ? settings.value : { ...settings.value, obs };
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
  let total = 0;
  let problem: string | undefined;
  const source = createReadStream(file);
  const parser = new tar.Parser({
    strict: true,
    onReadEntry: (entry) => {
      entry.resume();
      if (problem) return;
      const path = entry.path.replace(/\/+$/, '');
      const raw = entry.header.path ?? entry.path;
      if (
        raw.startsWith('/') ||
        /^[A-Za-z]:/.test(raw) ||
        raw.split(/[\\/]/).includes('..') ||
        raw.includes('\0')
      )
        problem = `the member "${raw}" points outside the backup`;
      else if (entry.type === 'Directory') {
        if (!DIRECTORIES.has(path) && !(path.startsWith('media/') && parseWith(MediaPath, path.slice(6)).ok))
          problem = `the folder "${path}" has no place in a backup`;
      } else if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile')
        problem = `the member "${path}" is a ${entry.type}, not a file`;
      else {
        const max = allowedSize(path);
        const size = entry.size ?? 0;
        if (max === undefined) problem = `the member "${path}" has no place in a backup`;
        else if (size > max) problem = `the member "${path}" is ${size} bytes, more than the ${max} allowed`;
        else if (members.has(path)) problem = `the member "${path}" is there twice`;
        else {
          members.set(path, size);
          total += size;
          if (total > TOTAL_MAX) problem = `the archive holds more than ${TOTAL_MAX} bytes`;
          else if (members.size > MAX_MEMBERS) problem = `the archive holds more than ${MAX_MEMBERS} files`;
        }
      }
      // Stop reading at the first problem: a hostile archive is not decompressed to its end.
      if (problem) source.destroy(new BackupError(problem));
    },
  });
  try {
    await pipeline(source, parser);
  } catch (err) {
    throw new BackupError(problem ?? `it is not a readable .tar.gz (${errorMessage(err)})`);
  }
  if (problem) throw new BackupError(problem);
  if (!members.has('manifest.json'))
    throw new BackupError('it has no manifest.json: not a backup of overlay-daemon');
  return members;
}

/** Checks the extracted files as the daemon would read them. */
async function validate(
  staging: string,
  members: Map<string, number>,
): Promise<v.InferOutput<typeof Manifest>> {
  const text = (name: string) => readFile(join(staging, name), 'utf8');
  const manifest = parseJsonWith(Manifest, await text('manifest.json'));
  if (!manifest.ok) throw new BackupError(`manifest.json: ${manifest.error}`);
  for (const path of members.keys()) {
    if (path.startsWith('overlays/')) {
      const id = path.slice('overlays/'.length, -'.json'.length);
      const parsed = parseOverlayFile(id, await text(path));
      if (!parsed.ok) throw new BackupError(`${path}: ${parsed.error}`);
    }
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
    } catch (err) {
      throw new BackupError(`events.db: ${errorMessage(err)}`);
    } finally {
      db?.close();
    }
  }
  return manifest.value;
}

/** What a restore replaces, in the data directory. */
const RESTORED = ['overlays', 'media', 'rules.json', 'settings.json', 'events.db', ...SECRET_FILES] as const;

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
        ? DIRECTORIES.has(p) || p.startsWith('media/')
        : members.has(p);
    },
  });
}

export async function restoreBackup(
  dirs: DataDir,
  file: string,
  options: { now?: Date } = {},
): Promise<{ keptIn: string; manifest: v.InferOutput<typeof Manifest> }> {
  const members = await inspect(file);
  const staging = await mkdtemp(join(dirs.root, '.restore-'));
  try {
    await extract(file, staging, members);
    const manifest = await validate(staging, members);
    // The OBS password stays when the backup was made without secrets.
    if (members.has('settings.json') && !manifest.includesSecrets) {
      const current = parseJsonWith(
        StoredSettings,
        await readFile(dirs.settingsFile, 'utf8').catch(() => ''),
      );
      const restored = parseJsonWith(StoredSettings, await readFile(join(staging, 'settings.json'), 'utf8'));
      if (current.ok && restored.ok && current.value.obs.password && !restored.value.obs.password)
        await writeFile(
          join(staging, 'settings.json'),
          `${JSON.stringify({ ...restored.value, obs: { ...restored.value.obs, password: current.value.obs.password } }, null, 2)}\n`,
          { mode: 0o600 },
        );
    }
    // Everything checked: the current state moves aside, then the backup's takes its place.
    const keptIn = join(dirs.backupsDir, (options.now ?? new Date()).toISOString().replace(/[:.]/g, '-'));
    await mkdir(keptIn, { recursive: true, mode: 0o700 });
    // The backup's overlays and media replace the current ones whole (none in it: none after).
    const incoming = (name: string) => name === 'overlays' || name === 'media' || members.has(name);
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
        else if (name === 'overlays' || name === 'media')
          await mkdir(join(dirs.root, name), { recursive: true });
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
