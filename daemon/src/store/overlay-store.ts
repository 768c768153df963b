// The overlays in force, kept in step with overlays/<uuid>.json both ways (decisions §3).
import { randomUUID } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import {
  type Overlay,
  type OverlayInput,
  Overlay as OverlaySchema,
  parseJsonWith,
} from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import {
  type DataDir,
  type FileSignature,
  readFileWithSignature,
  sameSignature,
  writeFileAtomic,
} from './data-dir.js';
import { OverlayRegistry } from './overlay-registry.js';

const OVERLAY_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i;

export type OverlayListener = { type: 'changed'; overlay: Overlay } | { type: 'removed'; overlayId: string };

export type UpdateResult =
  | { ok: true; overlay: Overlay }
  | { ok: false; reason: 'not_found' | 'unreadable'; message: string };

export interface OverlayStoreOptions {
  log?: (line: string) => void;
  /** How long a file must be quiet before it is read (chokidar awaitWriteFinish). */
  settleMs?: number;
}

export function serialiseOverlay(overlay: Overlay): string {
  return `${JSON.stringify(overlay, null, 2)}\n`;
}

interface WriteQueue {
  running: Promise<void> | undefined;
  queued: Promise<void> | undefined;
}

export class OverlayStore {
  readonly registry = new OverlayRegistry();
  /** Last text read from or written to each file, to recognise our own writes when the watcher reports them. */
  readonly #knownText = new Map<string, string>();
  /** Files that could not be read, by overlay id: never written over (decisions §3). */
  readonly #unreadable = new Map<string, string>();
  readonly #writes = new Map<string, WriteQueue>();
  /** Persist calls per overlay id, so a read can tell that a write of ours happened while it ran. */
  readonly #writesStarted = new Map<string, number>();
  /** The file as we last wrote or read it: anything else on disk was written by another program. */
  readonly #signatures = new Map<string, FileSignature>();
  /** Files whose change was not read because a write of ours was under way: read once the writes are done. */
  readonly #dirty = new Set<string>();
  readonly #listeners = new Set<(change: OverlayListener) => void>();
  readonly #log: (line: string) => void;
  readonly #settleMs: number;
  #watcher: FSWatcher | undefined;

  constructor(
    readonly dirs: DataDir,
    options: OverlayStoreOptions = {},
  ) {
    this.#log = options.log ?? ((line) => console.error(line));
    this.#settleMs = options.settleMs ?? 150;
  }

  fileOf(id: string): string {
    return join(this.dirs.overlaysDir, `${id}.json`);
  }

  /** Reads every overlay file; a file that does not parse is reported and left alone. */
  async load(): Promise<void> {
    const names = (await readdir(this.dirs.overlaysDir)).filter((name) => OVERLAY_FILE.test(name)).sort();
    for (const name of names) await this.#readFile(join(this.dirs.overlaysDir, name), false);
  }

  list(): Overlay[] {
    return this.registry.list();
  }

  get(id: string): Overlay | undefined {
    return this.registry.get(id);
  }

  /** Files that could not be read: path and reason. */
  problems(): { path: string; error: string }[] {
    return [...this.#unreadable].map(([id, error]) => ({ path: this.fileOf(id), error }));
  }

  subscribe(listener: (change: OverlayListener) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async create(input: OverlayInput): Promise<Overlay> {
    const overlay: Overlay = { id: randomUUID(), ...input };
    this.registry.set(overlay);
    await this.#persist(overlay.id);
    return overlay;
  }

  /**
   * Replaces an overlay: in force at once, broadcast as `overlay-update`, persisted atomically.
   * Writes of one overlay are serialised and coalesced, so a burst of updates costs few writes;
   * the promise settles once a write holding this state is on disk.
   */
  async update(overlay: Overlay): Promise<UpdateResult> {
    const unreadable = this.#unreadable.get(overlay.id);
    if (unreadable !== undefined) {
      return {
        ok: false,
        reason: 'unreadable',
        message: `${this.fileOf(overlay.id)} could not be read (${unreadable}); fix or remove the file first`,
      };
    }
    if (!this.registry.get(overlay.id))
      return { ok: false, reason: 'not_found', message: 'No overlay has that id' };
    this.registry.set(overlay);
    this.#emit({ type: 'changed', overlay });
    await this.#persist(overlay.id);
    return { ok: true, overlay };
  }

  async remove(id: string): Promise<boolean> {
    if (!this.registry.delete(id)) return false;
    await this.#writes.get(id)?.queued;
    await this.#writes.get(id)?.running;
    this.#knownText.delete(id);
    this.#writesStarted.delete(id);
    this.#signatures.delete(id);
    this.#dirty.delete(id);
    await rm(this.fileOf(id), { force: true });
    this.#emit({ type: 'removed', overlayId: id });
    return true;
  }

  /** Starts watching overlays/ for edits made by other programs; resolves once the watcher is ready. */
  async watch(): Promise<void> {
    const watcher = watch(this.dirs.overlaysDir, {
      ignoreInitial: true,
      depth: 0,
      // Editors write in several steps; read once the file has been quiet for a moment (decisions §3: within a second).
      awaitWriteFinish: { stabilityThreshold: this.#settleMs, pollInterval: 25 },
      ignored: (path, stats) => stats?.isFile() === true && !OVERLAY_FILE.test(basename(path)),
    });
    watcher.on('add', (path) => void this.#readFile(path, true));
    watcher.on('change', (path) => void this.#readFile(path, true));
    watcher.on('unlink', (path) => this.#onUnlink(path));
    watcher.on('error', (err) =>
      this.#log(`[store] watching ${this.dirs.overlaysDir} failed: ${String(err)}`),
    );
    this.#watcher = watcher;
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  /** Stops watching and waits for every pending write. */
  async close(): Promise<void> {
    await this.#watcher?.close();
    this.#watcher = undefined;
    await this.flush();
  }

  async flush(): Promise<void> {
    for (const queue of this.#writes.values()) {
      await queue.queued;
      await queue.running;
    }
  }

  #emit(change: OverlayListener): void {
    for (const listener of this.#listeners) listener(change);
  }

  #persist(id: string): Promise<void> {
    this.#writesStarted.set(id, (this.#writesStarted.get(id) ?? 0) + 1);
    let queue = this.#writes.get(id);
    if (!queue) {
      queue = { running: undefined, queued: undefined };
      this.#writes.set(id, queue);
    }
    // A write that has not started yet will pick up the newest state: join it.
    if (queue.queued) return queue.queued;
    const q = queue;
    const previous = q.running ?? Promise.resolve();
    const next = previous.then(async () => {
      q.queued = undefined;
      const running = this.#writeNow(id);
      q.running = running;
      try {
        await running;
      } finally {
        if (q.running === running) q.running = undefined;
        if (!q.running && !q.queued) {
          this.#writes.delete(id);
          // An edit reported while we were writing was skipped: read the file now that it holds still.
          if (this.#dirty.delete(id)) void this.#readFile(this.fileOf(id), true);
        }
      }
    });
    q.queued = next;
    return next;
  }

  async #writeNow(id: string): Promise<void> {
    // Another program wrote the file since we last wrote or read it (its watcher event may not have
    // come yet, or came while we were busy): its edit is read and wins over our state not yet on disk,
    // instead of being overwritten (decisions §3; docs/daemon.md, "Edits made by another program").
    const known = this.#signatures.get(id);
    if (known) {
      const onDisk = await stat(this.fileOf(id)).catch(() => undefined);
      if (onDisk && !sameSignature(known, onDisk)) {
        await this.#readFile(this.fileOf(id), true, true);
        // A file that does not parse is never written over.
        if (this.#unreadable.has(id)) return;
      }
    }
    const overlay = this.registry.get(id);
    if (!overlay) return;
    const text = serialiseOverlay(overlay);
    if (this.#knownText.get(id) === text) return;
    this.#knownText.set(id, text);
    try {
      this.#signatures.set(id, await writeFileAtomic(this.fileOf(id), text));
    } catch (err) {
      this.#knownText.delete(id);
      this.#log(`[store] could not write ${this.fileOf(id)}: ${errorMessage(err)}`);
      throw err;
    }
  }

  /** `fromWriteQueue`: called by the write queue itself, which knows no write of ours is under way. */
  async #readFile(path: string, announce: boolean, fromWriteQueue = false): Promise<void> {
    const match = OVERLAY_FILE.exec(basename(path));
    if (!match?.[1]) return;
    const id = match[1];
    // Overlay ids are lowercase UUIDs (decisions-2 §5): `uuidgen` on macOS prints uppercase, and such a
    // file would be listed but unreachable, counted against the tier, and written under another name.
    if (id !== id.toLowerCase()) {
      this.#report(id, path, 'its name is not a lowercase UUID (overlay ids are lowercase)');
      return;
    }
    const busy = !fromWriteQueue && this.#writes.has(id);
    const started = this.#writesStarted.get(id);
    let text: string;
    let signature: FileSignature;
    try {
      ({ text, signature } = await readFileWithSignature(path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.#report(id, path, errorMessage(err));
      return;
    }
    const writing =
      !fromWriteQueue && (busy || this.#writes.has(id) || this.#writesStarted.get(id) !== started);
    // Our own write coming back through the watcher, or an edit that changed nothing.
    if (this.#knownText.get(id) === text && !this.#unreadable.has(id)) {
      if (!writing) this.#signatures.set(id, signature);
      return;
    }
    // While a write of ours is queued or running (or was, during the read) the text may be an older
    // one of ours; taking it for an edit would roll the overlay back. Our rename brings its own event,
    // and the file is read again once our writes are done, so an edit made meanwhile is not lost.
    if (announce && writing) {
      this.#dirty.add(id);
      return;
    }
    const parsed = parseJsonWith(OverlaySchema, text);
    if (!parsed.ok) {
      this.#report(id, path, parsed.error);
      return;
    }
    if (parsed.value.id !== id) {
      this.#report(
        id,
        path,
        parsed.value.id.toLowerCase() === id
          ? `its id ${parsed.value.id} is not lowercase (overlay ids are lowercase UUIDs)`
          : `its id ${parsed.value.id} does not match the file name`,
      );
      return;
    }
    const wasUnreadable = this.#unreadable.delete(id);
    if (wasUnreadable) this.#log(`[store] ${path} reads again; it is in force`);
    this.#knownText.set(id, text);
    this.#signatures.set(id, signature);
    this.registry.set(parsed.value);
    if (announce) this.#emit({ type: 'changed', overlay: parsed.value });
  }

  #report(id: string, path: string, reason: string): void {
    this.#unreadable.set(id, reason);
    const inForce = this.registry.get(id)
      ? 'the last good state stays in force'
      : 'the overlay is not loaded';
    this.#log(`[store] cannot read ${path}: ${reason}; ${inForce} and the file is left as it is`);
  }

  #onUnlink(path: string): void {
    const match = OVERLAY_FILE.exec(basename(path));
    if (!match?.[1]) return;
    const id = match[1];
    // A write of ours may be in flight (rename replaces the file): that is not a deletion.
    if (this.#writes.has(id)) return;
    this.#unreadable.delete(id);
    this.#knownText.delete(id);
    if (this.registry.delete(id)) {
      this.#log(`[store] ${path} was deleted; overlay ${id} removed`);
      this.#emit({ type: 'removed', overlayId: id });
    }
  }
}
