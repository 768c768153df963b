// User media under the data directory's media/: safe path resolution, /assets/* serving, and the files behind /api/media.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { lookup } from 'mrmime';
import { MediaPath, parseWith } from '../../../shared/protocol/index.js';
import { DaemonError } from '../errors.js';

export const MEDIA_MAX_BYTES = 20 * 1024 * 1024;
/** interface §4.2: assets are cached for 5 minutes. */
const ASSET_CACHE_CONTROL = 'public, max-age=300';

type MediaResolution =
  | { ok: true; name: string; path: string }
  | { ok: false; status: 403 | 404; reason: string /** resolved outside media/ */; outside?: true };

/** A media file found inside media/: its decoded name, real path and stat. */
type MediaFile = { ok: true; name: string; path: string; info: Stats };

/**
 * Checks the raw request path first (interface §5.3): `..`, backslashes, NUL and any encoded
 * dot, backslash, NUL or percent (so double encoding never survives) are refused outright.
 */
function rawPathIsSuspicious(rawPath: string): boolean {
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
 * `mediaRoot` is media/'s own real path (MediaFiles resolves it once, not per request).
 */
async function resolveMediaPath(
  mediaDir: string,
  rawName: string,
  mediaRoot: () => Promise<string> = () => realpath(mediaDir),
): Promise<MediaFile | Extract<MediaResolution, { ok: false }>> {
  if (rawPathIsSuspicious(rawName)) return { ok: false, status: 403, reason: 'path is not allowed' };
  let name: string;
  try {
    name = decodeURIComponent(rawName);
  } catch {
    return { ok: false, status: 403, reason: 'path is not allowed' };
  }
  const checked = checkMediaName(mediaDir, name);
  if (!checked.ok) return checked;
  return realMediaFile(name, checked.path, mediaRoot);
}

/**
 * The real file behind a media name that passed checkMediaName: realpath first, so a symlink (of the
 * file or of a folder on its way) that leads outside media/ is refused. Every read and delete goes
 * through here (nothing outside media/ is ever touched).
 */
export async function realMediaFile(
  name: string,
  lexicalPath: string,
  mediaRoot: () => Promise<string>,
): Promise<MediaFile | Extract<MediaResolution, { ok: false }>> {
  let real: string;
  let root: string;
  try {
    real = await realpath(lexicalPath);
    root = await mediaRoot();
  } catch {
    return { ok: false, status: 404, reason: 'no such file' };
  }
  if (!real.startsWith(root + sep))
    return { ok: false, status: 403, reason: 'path is not allowed', outside: true };
  const info = await stat(real).catch(() => undefined);
  if (!info?.isFile()) return { ok: false, status: 404, reason: 'no such file' };
  return { ok: true, name, path: real, info };
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

/** Files up to this size are kept in memory once served (overlays show the same images and sounds over and over). */
const CACHED_FILE_MAX_BYTES = 1024 * 1024;
/** The in-memory copies together stay under this; the least recently served go first. */
const CACHE_MAX_BYTES = 32 * 1024 * 1024;

/** Files whose headers are remembered (with or without their bytes). */
const CACHE_MAX_ENTRIES = 4096;

/** Media is shown inside the overlay, never as a document of this origin (an uploaded SVG runs no script). */
const ASSET_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

interface CachedFile {
  ino: number;
  size: number;
  mtimeMs: number;
  headers: OutgoingHttpHeaders;
  body?: Buffer;
  /** The one read under way, shared by concurrent requests (so the bytes are read, and counted, once). */
  loading?: Promise<Buffer | undefined>;
}

/** One byte range of a file, both ends included. */
type ByteRange = { start: number; end: number };

/**
 * Parses a single `bytes=` range (RFC 9110 §14.1.2): `a-b`, `a-` or the suffix `-n`. Returns undefined
 * when the header is malformed or asks for several ranges (the whole file is sent then), `unsatisfiable`
 * when it starts past the end.
 */
function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return undefined;
  return { start, end };
}

/**
 * Serves GET/HEAD /assets/* after resolveMediaPath's checks, with the headers sirv used to send
 * (type by extension, Content-Length, Last-Modified, a weak ETag from size and mtime, ranges) plus
 * the 5-minute Cache-Control and the sandbox CSP. media/'s real path is resolved once (again only
 * when a file seems to lie outside it, in case media/ itself was moved), and small files are kept in
 * memory, checked against the stat every request makes anyway (inode, size, mtime).
 */
export class MediaFiles {
  readonly #mediaDir: string;
  #root: Promise<string> | undefined;
  readonly #cache = new Map<string, CachedFile>();
  #cachedBytes = 0;

  constructor(mediaDir: string) {
    this.#mediaDir = mediaDir;
  }

  /** Bytes of file bodies held in memory now (read-only, for the cache's accounting in tests). */
  get cachedBytes(): number {
    return this.#cachedBytes;
  }

  /** Resolves the percent-encoded name and answers the request (403/404 through `refuse`). */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    rawName: string,
    refuse: (status: 403 | 404, reason: string) => void,
  ): Promise<void> {
    let found = await resolveMediaPath(this.#mediaDir, rawName, () => this.#mediaRoot());
    if (!found.ok && found.outside && this.#root !== undefined) {
      // media/ may have been replaced since its real path was taken: check once more against a fresh one.
      this.#root = undefined;
      found = await resolveMediaPath(this.#mediaDir, rawName, () => this.#mediaRoot());
    }
    if (!found.ok) return refuse(found.status, found.reason);
    const entry = this.#entry(found.path, found.name, found.info);
    if (req.headers['if-none-match'] === entry.headers.ETag) {
      res.writeHead(304, { ETag: entry.headers.ETag, 'Cache-Control': ASSET_CACHE_CONTROL });
      res.end();
      return;
    }
    // Small files come from memory; read before the headers go out, so a failed read is still a clean 404.
    let body: Buffer | undefined;
    if (req.method !== 'HEAD') {
      try {
        body = entry.body ?? (await this.#load(found.path, entry));
      } catch {
        return refuse(404, 'no such file');
      }
    }
    const rangeHeader = req.headers.range;
    const range = rangeHeader === undefined ? undefined : parseRange(rangeHeader, entry.size);
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'Content-Range': `bytes */${entry.size}` });
      res.end();
      return;
    }
    if (range) {
      res.writeHead(206, {
        ...entry.headers,
        'Content-Range': `bytes ${range.start}-${range.end}/${entry.size}`,
        'Content-Length': range.end - range.start + 1,
      });
    } else res.writeHead(200, entry.headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (body) {
      res.end(range ? body.subarray(range.start, range.end + 1) : body);
      return;
    }
    const stream = createReadStream(found.path, range ?? {});
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  }

  #mediaRoot(): Promise<string> {
    this.#root ??= realpath(this.#mediaDir).catch((err: unknown) => {
      this.#root = undefined;
      throw err;
    });
    return this.#root;
  }

  /** The cached headers (and body, once read) of a file, or fresh ones when it changed. */
  #entry(path: string, name: string, info: Stats): CachedFile {
    const cached = this.#cache.get(path);
    if (cached && cached.ino === info.ino && cached.size === info.size && cached.mtimeMs === info.mtimeMs) {
      // Least recently served first: move it to the end.
      this.#cache.delete(path);
      this.#cache.set(path, cached);
      return cached;
    }
    if (cached) this.#forget(path, cached);
    const entry: CachedFile = {
      ino: info.ino,
      size: info.size,
      mtimeMs: info.mtimeMs,
      headers: {
        'Content-Type': lookup(name) ?? 'application/octet-stream',
        'Content-Length': info.size,
        'Last-Modified': info.mtime.toUTCString(),
        ETag: `W/"${info.size}-${Math.trunc(info.mtimeMs)}"`,
        'Accept-Ranges': 'bytes',
        'Cache-Control': ASSET_CACHE_CONTROL,
        'Content-Security-Policy': ASSET_CSP,
      },
    };
    this.#cache.set(path, entry);
    if (this.#cache.size > CACHE_MAX_ENTRIES) {
      const oldest = this.#cache.entries().next();
      if (!oldest.done) this.#forget(oldest.value[0], oldest.value[1]);
    }
    return entry;
  }

  /** Reads a small file into its entry; undefined for a large one (streamed instead). */
  #load(path: string, entry: CachedFile): Promise<Buffer | undefined> {
    if (entry.size > CACHED_FILE_MAX_BYTES) return Promise.resolve(undefined);
    entry.loading ??= this.#read(path, entry).finally(() => {
      entry.loading = undefined;
    });
    return entry.loading;
  }

  async #read(path: string, entry: CachedFile): Promise<Buffer> {
    const body = await readFile(path);
    // Changed between the stat and the read: the headers promise `size` bytes, so this request fails.
    if (body.length !== entry.size) throw new Error('media file changed while being read');
    // Counted only when it becomes the entry's body: a body already there was counted when it was set.
    if (this.#cache.get(path) !== entry || entry.body) return entry.body ?? body;
    entry.body = body;
    this.#cachedBytes += body.length;
    for (const [key, old] of this.#cache) {
      if (this.#cachedBytes <= CACHE_MAX_BYTES) break;
      this.#forget(key, old);
    }
    return body;
  }

  #forget(path: string, entry: CachedFile): void {
    this.#cache.delete(path);
    if (entry.body) this.#cachedBytes -= entry.body.length;
  }
}

/** The MIME type of an upload, from its extension; only images, audio and video are media. */
export function mediaType(name: string): string | undefined {
  const type = lookup(name);
  return type && /^(image|audio|video)\//.test(type) ? type : undefined;
}

import type { MediaEntry } from '../../../shared/protocol/index.js';

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

export class PayloadTooLarge extends DaemonError {
  constructor(message: string) {
    super('payload_too_large', message);
  }
}

/** The upload's folder resolves (through a symlink) outside media/. */
export class MediaOutside extends DaemonError {
  constructor(message: string) {
    super('outside_folder', message);
  }
}

/** Whether `folder` (and every folder above it that exists) really lies inside media/, symlinks followed. */
async function folderStaysInside(mediaRoot: string, folder: string): Promise<boolean> {
  let existing = folder;
  for (;;) {
    try {
      const real = await realpath(existing);
      return real === mediaRoot || real.startsWith(mediaRoot + sep);
    } catch (err) {
      const parent = dirname(existing);
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === existing) throw err;
      existing = parent;
    }
  }
}

/**
 * Streams a request body into media/ atomically (temporary file, fsync, rename), refusing it
 * past `maxBytes`. Returns whether the file existed before. `path` has passed checkMediaName, a
 * lexical check: a symlinked folder already inside media/ could still lead elsewhere, so the folder's
 * real path is checked before any folder is made, and again just before the rename (MediaOutside).
 */
export async function writeMedia(
  mediaDir: string,
  path: string,
  body: IncomingMessage,
  maxBytes = MEDIA_MAX_BYTES,
): Promise<{ replaced: boolean; size: number }> {
  const mediaRoot = await realpath(mediaDir);
  const folder = dirname(path);
  if (!(await folderStaysInside(mediaRoot, folder))) throw new MediaOutside('the folder lies outside media/');
  // A dotfile: neither listed nor served while the upload is under way.
  const tmp = join(folder, `.${basename(path)}.${randomBytes(6).toString('hex')}.upload`);
  await mkdir(folder, { recursive: true });
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
    // The folder may have been swapped for a symlink while the body arrived.
    if (!(await folderStaysInside(mediaRoot, folder)))
      throw new MediaOutside('the folder lies outside media/');
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
