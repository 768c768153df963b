// The data directory (decisions §3): overlays/<uuid>.json, rules.json, media/, admin.key, license.json.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Overlay } from '../../../shared/protocol/index.js';
import type { RuleList } from '../../../shared/rules.js';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.OVERLAY_DATA_DIR || join(homedir(), '.overlay-daemon');
}

/** What tells one version of a file from another without reading it (a rename keeps all three). */
export interface FileSignature {
  ino: number;
  size: number;
  mtimeMs: number;
}

export function sameSignature(a: FileSignature | undefined, b: FileSignature | undefined): boolean {
  return (
    a !== undefined && b !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs
  );
}

/** Reads a file's text and signature from one open handle, so both describe the same version. */
export async function readFileWithSignature(
  path: string,
): Promise<{ text: string; signature: FileSignature }> {
  const handle = await open(path, 'r');
  try {
    const { ino, size, mtimeMs } = await handle.stat();
    return { signature: { ino, size, mtimeMs }, text: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}

/**
 * Writes a file so that a reader sees the old or the new content, never a torn one. Returns the
 * signature of what it wrote, so a later write can tell whether another program wrote since.
 */
export async function writeFileAtomic(path: string, data: string, mode = 0o644): Promise<FileSignature> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'w', mode);
  let signature: FileSignature;
  try {
    await handle.writeFile(data);
    await handle.sync();
    const { ino, size, mtimeMs } = await handle.stat();
    signature = { ino, size, mtimeMs };
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return signature;
}

/** The first start's overlay: one widget of each live kind, so a streamer sees the system at work at once. */
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
      {
        // No `events`: it shows what the demo rule sends, so a gift is announced once.
        id: 'alerts',
        type: 'alert',
        x: 460,
        y: 380,
        width: 1000,
        height: 200,
        duration: 5000,
        color: '#ffffff',
        fontSize: 56,
      },
      {
        id: 'like-goal',
        type: 'goal',
        x: 80,
        y: 940,
        width: 720,
        title: 'Like goal',
        source: 'likes',
        target: 1000,
        current: 0,
        color: '#ff3b6b',
      },
      {
        id: 'chat',
        type: 'chat',
        x: 1420,
        y: 560,
        width: 440,
        maxMessages: 8,
        color: '#ffffff',
        fontSize: 26,
      },
      {
        id: 'top-gifters',
        type: 'top-gifters',
        x: 1420,
        y: 80,
        width: 440,
        maxEntries: 5,
        entries: [],
        color: '#ffd166',
      },
    ],
  };
}

/** The rules that go with the demo overlay: every gift becomes an alert on it. */
export function demoRules(overlayId: string): RuleList {
  return [
    {
      id: 'demo-gift-alert',
      name: 'Thank every gift',
      enabled: true,
      trigger: 'gift',
      conditions: {},
      cooldownMs: 0,
      actions: [
        {
          overlayId,
          widgetId: 'alerts',
          command: 'show-alert',
          payload: { text: '{user.nickname} sent {data.repeatCount} × {data.giftName}', duration: 5000 },
        },
      ],
    },
  ];
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

/** Creates the layout on first start: folders, a demo overlay and its rule, the admin key. */
export async function initDataDir(root: string): Promise<DataDir> {
  const dirs = dataDirPaths(root);
  // Private to the user (decisions-2 §5): the folders hold the admin key, the licence and tokens.
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
