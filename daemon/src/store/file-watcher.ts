// The daemon's one way to notice that another program changed a file of the data directory (a hand edit,
// `overlay-daemon login`, `connect twitch`, `tunnel up`, `new-key`): each folder is watched once, each file
// is looked at once per change, and every listener of that file is told.
//
// A folder is watched rather than each file (fs.watch of the folder, its reports filtered by name before
// anything is read), so that:
// - a file that does not exist yet is noticed when it is created, and a deleted one when it comes back;
// - a file replaced by a rename (every atomic write) is followed to its new inode;
// - nothing is listed or read for the other files of the folder: the data directory also holds events.db,
//   written on every event (chokidar lists a folder on each change in it, for a file that does not exist).
// A file is looked at `settleMs` after the last report for it (editors and atomic writes take several
// steps); its listeners are told only when its signature (inode, size, mtime) differs from the last one
// seen, so a report that changed nothing (our own second look, a touch of another name) costs one stat.
import { type FSWatcher, readdirSync, type Stats, statSync, watch as watchFolder } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage } from '../errors.js';
import { type FileSignature, sameSignature } from './atomic-file.js';

/** `changed`: the file is there and differs from the last time (created, written, replaced). */
export type FileChange = 'changed' | 'deleted';
export type FileListener = (change: FileChange, path: string) => void;

interface FileWatcherOptions {
  /** How long a file must be quiet before it is looked at (ms; 150 by default). */
  settleMs?: number;
  log?: (line: string) => void;
}

interface WatchedFile {
  listeners: Set<FileListener>;
  /** The file as last seen; undefined while it does not exist. */
  signature: FileSignature | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** Every file of the folder whose name `accept` takes (overlays/<uuid>.json). */
interface FolderListener {
  accept(name: string): boolean;
  listener: FileListener;
}

interface WatchedFolder {
  watcher: FSWatcher;
  files: Map<string, WatchedFile>;
  folderListeners: Set<FolderListener>;
}

function signatureOf(stats: Stats): FileSignature {
  return { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
}

function signatureNow(path: string): FileSignature | undefined {
  try {
    return signatureOf(statSync(path));
  } catch {
    return undefined;
  }
}

/** A listener of the whole folder follows this file. */
function takenByFolder(folder: WatchedFolder, name: string): boolean {
  for (const entry of folder.folderListeners) if (entry.accept(name)) return true;
  return false;
}

export class FileWatcher {
  readonly #folders = new Map<string, WatchedFolder>();
  readonly #settleMs: number;
  readonly #log: (line: string) => void;
  #closed = false;

  constructor(options: FileWatcherOptions = {}) {
    this.#settleMs = options.settleMs ?? 150;
    this.#log = options.log ?? ((line) => console.error(line));
  }

  /** How many folders are watched now (one OS watch each, however many files and listeners). */
  get watches(): number {
    return this.#folders.size;
  }

  /** Tells `listener` of every change of `path` from now on, whether it exists yet or not. Returns the unwatch. */
  watch(path: string, listener: FileListener): () => void {
    const full = resolve(path);
    const folder = this.#folder(dirname(full));
    if (!folder) return () => {};
    const file = this.#file(folder, dirname(full), basename(full));
    file.listeners.add(listener);
    return () => {
      file.listeners.delete(listener);
      this.#release(dirname(full));
    };
  }

  /** Tells `listener` of every change of the files in `folder` whose name `accept` takes. Returns the unwatch. */
  watchFolder(folderPath: string, accept: (name: string) => boolean, listener: FileListener): () => void {
    const full = resolve(folderPath);
    const folder = this.#folder(full);
    if (!folder) return () => {};
    const entry = { accept, listener };
    folder.folderListeners.add(entry);
    // The files there now are known, so that a later deletion of one is told.
    for (const name of this.#names(full)) if (accept(name)) this.#file(folder, full, name);
    return () => {
      folder.folderListeners.delete(entry);
      this.#release(full);
    };
  }

  /** Stops every watch: no listener is told anything afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const [path, folder] of this.#folders) this.#stop(path, folder);
  }

  #folder(path: string): WatchedFolder | undefined {
    if (this.#closed) return undefined;
    const known = this.#folders.get(path);
    if (known) return known;
    // persistent: false: a watch alone does not keep the process running.
    const watcher = watchFolder(path, { persistent: false }, (_event, name) => this.#reported(path, name));
    watcher.on('error', (err) => this.#log(`[files] watching ${path} failed: ${errorMessage(err)}`));
    const folder: WatchedFolder = { watcher, files: new Map(), folderListeners: new Set() };
    this.#folders.set(path, folder);
    return folder;
  }

  #file(folder: WatchedFolder, folderPath: string, name: string): WatchedFile {
    let file = folder.files.get(name);
    if (!file) {
      file = { listeners: new Set(), signature: signatureNow(join(folderPath, name)), timer: undefined };
      folder.files.set(name, file);
    }
    return file;
  }

  #names(folderPath: string): string[] {
    try {
      return readdirSync(folderPath);
    } catch (err) {
      this.#log(`[files] listing ${folderPath} failed: ${errorMessage(err)}`);
      return [];
    }
  }

  /** The folder reported a change of `name` (or of something unnamed: then every file is looked at). */
  #reported(folderPath: string, name: string | Buffer | null): void {
    const folder = this.#folders.get(folderPath);
    if (!folder || this.#closed) return;
    if (name === null) {
      const names = new Set(folder.files.keys());
      if (folder.folderListeners.size > 0) for (const each of this.#names(folderPath)) names.add(each);
      for (const each of names) this.#reported(folderPath, each);
      return;
    }
    const fileName = String(name);
    let file = folder.files.get(fileName);
    if (!file) {
      if (!takenByFolder(folder, fileName)) return;
      // A file of the folder first seen now: it did not exist before.
      file = { listeners: new Set(), signature: undefined, timer: undefined };
      folder.files.set(fileName, file);
    }
    const watched = file;
    clearTimeout(watched.timer);
    watched.timer = setTimeout(() => this.#settled(folderPath, fileName, watched), this.#settleMs);
  }

  #settled(folderPath: string, name: string, file: WatchedFile): void {
    file.timer = undefined;
    const path = join(folderPath, name);
    stat(path).then(
      (stats) => this.#tell(folderPath, name, file, signatureOf(stats)),
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') this.#tell(folderPath, name, file, undefined);
        else this.#log(`[files] looking at ${path} failed: ${errorMessage(err)}`);
      },
    );
  }

  #tell(folderPath: string, name: string, file: WatchedFile, now: FileSignature | undefined): void {
    const folder = this.#folders.get(folderPath);
    if (this.#closed || folder?.files.get(name) !== file) return;
    const before = file.signature;
    file.signature = now;
    if (now === undefined ? before === undefined : sameSignature(before, now)) return;
    const change: FileChange = now === undefined ? 'deleted' : 'changed';
    const path = join(folderPath, name);
    const listeners = [...file.listeners];
    for (const entry of folder.folderListeners) if (entry.accept(name)) listeners.push(entry.listener);
    for (const listener of listeners) {
      try {
        listener(change, path);
      } catch (err) {
        this.#log(`[files] following ${path} failed: ${errorMessage(err)}`);
      }
    }
  }

  /** Forgets the files nobody listens to any more, and the folder's watch once none is left. */
  #release(folderPath: string): void {
    const folder = this.#folders.get(folderPath);
    if (!folder) return;
    for (const [name, file] of folder.files) {
      if (file.listeners.size > 0 || takenByFolder(folder, name)) continue;
      clearTimeout(file.timer);
      folder.files.delete(name);
    }
    if (folder.files.size === 0 && folder.folderListeners.size === 0) this.#stop(folderPath, folder);
  }

  #stop(folderPath: string, folder: WatchedFolder): void {
    for (const file of folder.files.values()) clearTimeout(file.timer);
    folder.files.clear();
    folder.watcher.close();
    this.#folders.delete(folderPath);
  }
}
