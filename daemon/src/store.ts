// The data directory (decisions §3): overlays/<uuid>.json, rules.json, media/, admin.key, license.json.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Overlay } from '../../shared/protocol.js';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.OVERLAY_DATA_DIR || join(homedir(), '.overlay-daemon');
}

/** Writes a file so that a reader sees the old or the new content, never a torn one. */
export async function writeFileAtomic(path: string, data: string, mode = 0o644): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'w', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export function demoOverlay(): Overlay {
  return {
    id: randomUUID(),
    name: 'Demo overlay',
    width: 1920,
    height: 1080,
    widgets: [
      {
        id: 'welcome',
        type: 'text',
        x: 80,
        y: 80,
        content: 'Welcome to the stream!',
        fontFamily: 'system-ui, sans-serif',
        fontSize: 64,
        color: '#ffffff',
      },
    ],
  };
}

export interface DataDir {
  root: string;
  overlaysDir: string;
  mediaDir: string;
  rulesFile: string;
  adminKeyFile: string;
  licenseFile: string;
}

export function dataDirPaths(root: string): DataDir {
  return {
    root,
    overlaysDir: join(root, 'overlays'),
    mediaDir: join(root, 'media'),
    rulesFile: join(root, 'rules.json'),
    adminKeyFile: join(root, 'admin.key'),
    licenseFile: join(root, 'license.json'),
  };
}

/** Creates the layout on first start: folders, a demo overlay, an empty rule list, the admin key. */
export async function initDataDir(root: string): Promise<DataDir> {
  const dirs = dataDirPaths(root);
  await mkdir(dirs.overlaysDir, { recursive: true });
  await mkdir(dirs.mediaDir, { recursive: true });
  const existing = (await readdir(dirs.overlaysDir)).filter((f) => f.endsWith('.json'));
  // A data directory without any overlay file (first start) gets the demo overlay (decisions §3).
  if (existing.length === 0) {
    const demo = demoOverlay();
    await writeFileAtomic(join(dirs.overlaysDir, `${demo.id}.json`), `${JSON.stringify(demo, null, 2)}\n`);
  }
  await createIfMissing(dirs.rulesFile, '[]\n', 0o644);
  await createIfMissing(dirs.adminKeyFile, `${randomBytes(32).toString('base64url')}\n`, 0o600);
  return dirs;
}

async function createIfMissing(path: string, data: string, mode: number): Promise<void> {
  try {
    const handle = await open(path, 'wx', mode);
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** The local control key (decisions §3: admin.key, mode 0600). */
export async function readAdminKey(dirs: DataDir): Promise<string> {
  const key = (await readFile(dirs.adminKeyFile, 'utf8')).trim();
  if (key.length < 16)
    throw new Error(`${dirs.adminKeyFile} holds no usable key; delete it to have a new one made`);
  return key;
}
