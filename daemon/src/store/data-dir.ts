// The data directory (decisions §3): every file the daemon keeps there, named in one place, and its first start.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Overlay } from '../../../shared/protocol/index.js';
import { DaemonError } from '../errors.js';
import { createIfMissing, writeFileAtomic } from './atomic-file.js';
import { demoOverlay, demoRules } from './demo.js';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.OVERLAY_DATA_DIR || join(homedir(), '.overlay-daemon');
}

export interface DataDir {
  root: string;
  /** `<uuid>.json`, one per overlay, edited by the dashboard or by hand. */
  overlaysDir: string;
  /**
   * The values widgets keep from stream events (goal progress, counters, top gifters), by overlay and
   * widget (mode 0600; widget-state/live-values-store.ts). Events write here, never the overlay files.
   */
  liveValuesFile: string;
  /** The streamer's media, served under /media/. */
  mediaDir: string;
  /** Widget packages, one folder `<packageId>/` each (widgets/package-store.ts). */
  widgetsDir: string;
  /** The rules in force. */
  rulesFile: string;
  /** The local control key (mode 0600). */
  adminKeyFile: string;
  /** The Gatekeeper's licence JWT and the last verdict (mode 0600). */
  licenseFile: string;
  /** The Gatekeeper's public keys, so a licence verifies offline. */
  jwksFile: string;
  /** The last remote configuration the Gatekeeper served, so limits hold offline. */
  remoteConfigFile: string;
  /** The provisioned tunnel and its connector token (mode 0600). */
  tunnelFile: string;
  /** Where the daemon using this directory listens (store/running-daemon.ts); absent while none runs. */
  daemonFile: string;
  /**
   * Held by the daemon using this directory (store/running-daemon.ts): its pid. A second daemon on the
   * same directory refuses to start; a lock left by a process that is gone is taken over.
   */
  lockFile: string;
  /** OBS, Streamer.bot and speech settings, mode 0600: it holds the OBS password. */
  settingsFile: string;
  /** The event journal: every accepted event, sessions and viewer figures (SQLite). */
  eventsFile: string;
  /** Where `restore` keeps the state it replaced. */
  backupsDir: string;
  /** Speech rendered to WAV, served at /tts/<hash>.wav and kept an hour after its last use. */
  ttsDir: string;
  /** This start made the admin key (a new data directory, or admin.key deleted): the sign-in link is new. */
  newAdminKey?: boolean;
}

export function dataDirPaths(root: string): DataDir {
  return {
    root,
    overlaysDir: join(root, 'overlays'),
    liveValuesFile: join(root, 'live-values.json'),
    mediaDir: join(root, 'media'),
    widgetsDir: join(root, 'widgets'),
    rulesFile: join(root, 'rules.json'),
    adminKeyFile: join(root, 'admin.key'),
    licenseFile: join(root, 'license.json'),
    jwksFile: join(root, 'jwks.json'),
    remoteConfigFile: join(root, 'remote-config.json'),
    tunnelFile: join(root, 'tunnel.json'),
    daemonFile: join(root, 'daemon.json'),
    lockFile: join(root, 'daemon.lock'),
    settingsFile: join(root, 'settings.json'),
    ttsDir: join(root, 'tts'),
    eventsFile: join(root, 'events.db'),
    backupsDir: join(root, 'backups'),
  };
}

/** The data directory cannot be used: `message` says which path and why, in a person's words. */
export class DataDirError extends DaemonError {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super('data_dir', message);
  }
}

/** An error of the file system about `path` (or the data dir it belongs to), worded for a person. */
export function dataDirProblem(err: unknown, root: string): Error {
  const e = err as NodeJS.ErrnoException;
  const path = e.path ?? root;
  switch (e.code) {
    case 'EACCES':
    case 'EPERM':
      return new DataDirError(
        path,
        `cannot write ${path}: permission denied (choose another folder with --data-dir)`,
      );
    case 'EROFS':
      return new DataDirError(
        path,
        `cannot write ${path}: the disk is read-only (choose another folder with --data-dir)`,
      );
    case 'ENOSPC':
      return new DataDirError(path, `cannot write ${path}: the disk is full`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new DataDirError(
        path,
        `the data directory ${root} is a file, not a folder (choose a folder with --data-dir)`,
      );
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Creates the layout on first start: folders, a demo overlay and its rule, the admin key. A path that
 * cannot be used is a DataDirError that names it.
 */
export async function initDataDir(root: string): Promise<DataDir> {
  try {
    return await createLayout(root);
  } catch (err) {
    throw dataDirProblem(err, root);
  }
}

async function createLayout(root: string): Promise<DataDir> {
  const dirs = dataDirPaths(root);
  // Private to the user: the folders hold the admin key, the licence and tokens.
  await mkdir(root, { recursive: true, mode: 0o700 });
  await mkdir(dirs.overlaysDir, { recursive: true, mode: 0o700 });
  await mkdir(dirs.mediaDir, { recursive: true, mode: 0o700 });
  const existing = (await readdir(dirs.overlaysDir)).filter((f) => f.endsWith('.json'));
  // A data directory without any overlay file (first start) gets the demo overlay (decisions §3),
  // and its rule when there is no rules.json yet (an existing one is never touched).
  let demo: Overlay | undefined;
  if (existing.length === 0) {
    demo = demoOverlay();
    await writeFileAtomic(join(dirs.overlaysDir, `${demo.id}.json`), `${JSON.stringify(demo, null, 2)}\n`);
  }
  const rules = demo ? `${JSON.stringify(demoRules(demo.id), null, 2)}\n` : '[]\n';
  await createIfMissing(dirs.rulesFile, rules, 0o644);
  const newAdminKey = await createIfMissing(dirs.adminKeyFile, newAdminKeyText(), 0o600);
  return { ...dirs, newAdminKey };
}

/** 256 random bits, base64url: a fresh admin key as admin.key holds it. */
function newAdminKeyText(): string {
  return `${randomBytes(32).toString('base64url')}\n`;
}

/**
 * Replaces the admin key (`overlay-daemon new-key`): links with the old one stop working, and a running
 * daemon takes the new one within a moment (it watches the file).
 */
export async function rotateAdminKey(dirs: DataDir): Promise<string> {
  await writeFileAtomic(dirs.adminKeyFile, newAdminKeyText(), 0o600);
  return readAdminKey(dirs);
}

/** The local control key (decisions §3: admin.key, mode 0600). */
export async function readAdminKey(dirs: DataDir): Promise<string> {
  const key = (await readFile(dirs.adminKeyFile, 'utf8')).trim();
  if (key.length < 16)
    throw new Error(`${dirs.adminKeyFile} holds no usable key; delete it to have a new one made`);
  return key;
}
