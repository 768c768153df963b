// User media under the data directory's media/: safe path resolution, /assets/* serving, and the files behind /api/media.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { lookup } from 'mrmime';
import { MediaPath, parseWith } from '../../shared/protocol.js';

export const MEDIA_MAX_BYTES = 20 * 1024 * 1024;
/** interface §4.2: assets are cached for 5 minutes. */
export const ASSET_CACHE_CONTROL = 'public, max-age=300';

export type MediaResolution =
  | { ok: true; name: string; path: string }
  | { ok: false; status: 403 | 404; reason: string };

/**
 * Checks the raw request path first (interface §5.3): `..`, backslashes, NUL and any encoded
 * dot, backslash, NUL or percent (so double encoding never survives) are refused outright.
 */
export function rawPathIsSuspicious(rawPath: string): boolean {
  return (
    rawPath.includes('..') ||
    rawPath.includes('\\') ||
    rawPath.includes('\0') ||
    /%(2e|5c|00|25)/i.test(rawPath)
  );
}

/**
 * Maps the part of the URL after `/assets/` (still percent-encoded) to a file inside media/.
 * Layers: raw check, one decode, the MediaPath allow-list, the resolved path inside media/,
 * and finally realpath so that a symlink pointing outside media/ is refused too.
 */
export async function resolveMediaPath(mediaDir: string, rawName: string): Promise<MediaResolution> {
  if (rawPathIsSuspicious(rawName)) return { ok: false, status: 403, reason: 'path is not allowed' };
  let name: string;
  try {
    name = decodeURIComponent(rawName);
  } catch {
    return { ok: false, status: 403, reason: 'path is not allowed' };
  }
  const checked = checkMediaName(mediaDir, name);
  if (!checked.ok) return checked;
  let real: string;
  try {
    real = await realpath(checked.path);
  } catch {
    return { ok: false, status: 404, reason: 'no such file' };
  }
  const root = await realpath(mediaDir);
  if (!real.startsWith(root + sep)) return { ok: false, status: 403, reason: 'path is not allowed' };
  const info = await stat(real);
  if (!info.isFile()) return { ok: false, status: 404, reason: 'no such file' };
  return { ok: true, name, path: real };
}

/** Validates a decoded media name (MediaPath) and resolves it inside media/, without touching the disk. */
export function checkMediaName(mediaDir: string, name: string): MediaResolution {
  if (
    !parseWith(MediaPath, name).ok ||
    name.split('/').some((part) => part === '.' || part === '' || part.startsWith('.'))
  ) {
    return { ok: false, status: 403, reason: 'path is not allowed' };
  }
  const root = resolve(mediaDir);
  const path = resolve(root, name);
  if (!path.startsWith(root + sep)) return { ok: false, status: 403, reason: 'path is not allowed' };
  return { ok: true, name, path };
}

/** The MIME type of an upload, from its extension; only images, audio and video are media. */
export function mediaType(name: string): string | undefined {
  const type = lookup(name);
  return type && /^(image|audio|video)\//.test(type) ? type : undefined;
}

export interface MediaEntry {
  name: string;
  size: number;
  type: string;
  modified: string;
}

/** Every media file, with names as served under /assets/ (symlinks and dotfiles left out). */
export async function listMedia(mediaDir: string): Promise<MediaEntry[]> {
  const entries: MediaEntry[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 8) return;
    for (const dirent of await readdir(dir, { withFileTypes: true })) {
      if (dirent.name.startsWith('.')) continue;
      const path = join(dir, dirent.name);
      if (dirent.isDirectory()) await walk(path, depth + 1);
      else if (dirent.isFile()) {
        const name = relative(mediaDir, path).split(sep).join('/');
        if (!parseWith(MediaPath, name).ok) continue;
        const info = await lstat(path);
        entries.push({
          name,
          size: info.size,
          type: lookup(name) ?? 'application/octet-stream',
          modified: info.mtime.toISOString(),
        });
      }
    }
  };
  await walk(mediaDir, 0);
  return entries.sort((a, b) => a.name.localeCompare(b.name));
}

export class PayloadTooLarge extends Error {}

/**
 * Streams a request body into media/ atomically (temporary file, fsync, rename), refusing it
 * past `maxBytes`. Returns whether the file existed before.
 */
export async function writeMedia(
  path: string,
  body: IncomingMessage,
  maxBytes = MEDIA_MAX_BYTES,
): Promise<{ replaced: boolean; size: number }> {
  // A dotfile: neither listed nor served while the upload is under way.
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.upload`);
  await mkdir(dirname(path), { recursive: true });
  let size = 0;
  const out = createWriteStream(tmp, { mode: 0o644 });
  try {
    await pipeline(
      body,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          size += chunk.length;
          if (size > maxBytes) throw new PayloadTooLarge(`media files are limited to ${maxBytes} bytes`);
          yield chunk;
        }
      },
      out,
    );
    const handle = await open(tmp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    const replaced = await stat(path).then(
      () => true,
      () => false,
    );
    await rename(tmp, path);
    return { replaced, size };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
