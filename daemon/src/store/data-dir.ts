// The data directory (decisions §3): every file the daemon keeps there, named in one place, and its first start.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Overlay } from '../../../shared/protocol/index.js';
import { createIfMissing, writeFileAtomic } from './atomic-file.js';
import { demoOverlay, demoRules } from './demo.js';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.OVERLAY_DATA_DIR || join(homedir(), '.overlay-daemon');
}

export interface DataDir {
  root: string;
  /** `<uuid>.json`, one per overlay, edited by the dashboard or by hand. */
  overlaysDir: string;
  /** The streamer's media, served under /media/. */
  mediaDir: string;
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
}

export function dataDirPaths(root: string): DataDir {
  return {
    root,
    overlaysDir: join(root, 'overlays'),
    mediaDir: join(root, 'media'),
    rulesFile: join(root, 'rules.json'),
    adminKeyFile: join(root, 'admin.key'),
    licenseFile: join(root, 'license.json'),
    jwksFile: join(root, 'jwks.json'),
    remoteConfigFile: join(root, 'remote-config.json'),
    tunnelFile: join(root, 'tunnel.json'),
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

/** The local control key (decisions §3: admin.key, mode 0600). */
export async function readAdminKey(dirs: DataDir): Promise<string> {
  const key = (await readFile(dirs.adminKeyFile, 'utf8')).trim();
  if (key.length < 16)
    throw new Error(`${dirs.adminKeyFile} holds no usable key; delete it to have a new one made`);
  return key;
}
