// The overlays in force, kept in step with overlays/<uuid>.json both ways (decisions §3): one synced file
// per overlay, and the registry that answers lookups. The files hold the layouts; the values widgets keep
// from stream events live apart (widget-state/live-values-store.ts) and are merged into what is in force.
import { randomUUID } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { keepLiveValues } from '../../../shared/live-values.js';
import {
  type Overlay,
  type OverlayInput,
  Overlay as OverlaySchema,
  type ParseResult,
  parseJsonWith,
} from '../../../shared/protocol/index.js';
import type { DataDir } from './data-dir.js';
import type { FileWatcher } from './file-watcher.js';
import { OverlayRegistry } from './overlay-registry.js';
import { SyncedJsonFile, WriteFailed } from './synced-json-file.js';

const OVERLAY_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i;

type OverlayListener = { type: 'changed'; overlay: Overlay } | { type: 'removed'; overlayId: string };

type UpdateResult =
  | { ok: true; overlay: Overlay }
  | { ok: false; reason: 'not_found' | 'unreadable' | 'unavailable'; message: string };

/**
 * What owns the values widgets keep from stream events (widget-state/live-values-store.ts): every layout
 * taking force goes through `adopt`, which returns it with those values.
 */
export interface LiveValuesLayer {
  /** `overlay` with the live values; `before`: the file's previous layout, when another program edited it. */
  adopt(overlay: Overlay, before?: Overlay): Overlay;
  /** The overlay is gone: its values go too. */
  forget(overlayId: string): void;
}

interface OverlayStoreOptions {
  /** The live widget values merged into every layout in force; without it a layout is in force as written. */
  live?: LiveValuesLayer;
  log?: (line: string) => void;
}

/** An overlay file's text, for the overlay named by the file (`id`). */
export function parseOverlayFile(id: string, text: string): ParseResult<Overlay> {
  // Overlay ids are lowercase UUIDs: `uuidgen` on macOS prints uppercase, and such a
  // file would be listed but unreachable, counted against the tier, and written under another name.
  if (id !== id.toLowerCase())
    return { ok: false, error: 'its name is not a lowercase UUID (overlay ids are lowercase)' };
  const parsed = parseJsonWith(OverlaySchema, text);
  if (!parsed.ok || parsed.value.id === id) return parsed;
  return {
    ok: false,
    error:
      parsed.value.id.toLowerCase() === id
        ? `its id ${parsed.value.id} is not lowercase (overlay ids are lowercase UUIDs)`
        : `its id ${parsed.value.id} does not match the file name`,
  };
}

export class OverlayStore {
  readonly registry = new OverlayRegistry();
  readonly #files = new Map<string, SyncedJsonFile<Overlay>>();
  readonly #listeners = new Set<(change: OverlayListener) => void>();
  readonly #log: (line: string) => void;
  readonly #live: LiveValuesLayer | undefined;
  /** Each overlay's layout as its file last held it, to tell a hand edit of a live value. */
  readonly #onDisk = new Map<string, Overlay>();
  #unwatch: (() => void) | undefined;

  constructor(
    readonly dirs: DataDir,
    options: OverlayStoreOptions = {},
  ) {
    this.#log = options.log ?? ((line) => console.error(line));
    this.#live = options.live;
  }

  /** Reads every overlay file; a file that does not parse is reported and left alone. */
  async load(): Promise<void> {
    const names = (await readdir(this.dirs.overlaysDir)).filter((name) => OVERLAY_FILE.test(name)).sort();
    for (const name of names) await this.#read(join(this.dirs.overlaysDir, name), false);
  }

  list(): Overlay[] {
    return this.registry.list();
  }

  get(id: string): Overlay | undefined {
    return this.registry.get(id);
  }

  subscribe(listener: (change: OverlayListener) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Creates an overlay; throws WriteFailed (and nothing is created) when it cannot be written. */
  async create(input: OverlayInput): Promise<Overlay> {
    const overlay = this.#adopt({ id: randomUUID(), ...input });
    this.registry.set(overlay);
    const file = this.#file(overlay.id);
    try {
      await file.save(overlay);
    } catch (err) {
      this.registry.delete(overlay.id);
      if (this.#files.get(overlay.id) === file) this.#files.delete(overlay.id);
      throw err;
    }
    if (file.value === overlay) this.#onDisk.set(overlay.id, overlay);
    // Followers learn of it (a public one is published at once).
    this.#emit({ type: 'changed', overlay });
    return overlay;
  }

  /**
   * Replaces an overlay: in force at once, broadcast as `overlay-update`, persisted atomically (a burst
   * of updates costs few writes); the promise settles once a write holding this state is on disk.
   */
  async update(layout: Overlay): Promise<UpdateResult> {
    const unreadable = this.#files.get(layout.id)?.unreadable;
    if (unreadable !== undefined) {
      return {
        ok: false,
        reason: 'unreadable',
        message: `${this.#pathOf(layout.id)} could not be read (${unreadable}); fix or remove the file first`,
      };
    }
    if (!this.registry.get(layout.id))
      return { ok: false, reason: 'not_found', message: 'No overlay has that id' };
    const previous = this.registry.get(layout.id);
    // The file is written with the live values of this moment; events never write it again.
    const overlay = this.#adopt(layout);
    this.registry.set(overlay);
    this.#emit({ type: 'changed', overlay });
    const file = this.#file(overlay.id);
    try {
      await file.save(overlay);
    } catch (err) {
      if (!(err instanceof WriteFailed)) throw err;
      // Not written: what is on disk (or was in force before) is in force again, and pages follow.
      const onDisk = file.value;
      const back = onDisk ? this.#adopt(onDisk) : previous;
      if (back && this.registry.get(overlay.id) === overlay) {
        this.registry.set(back);
        this.#emit({ type: 'changed', overlay: back });
      }
      return { ok: false, reason: 'unavailable', message: `${err.message}; the overlay was not changed` };
    }
    if (file.value === overlay) this.#onDisk.set(overlay.id, overlay);
    return { ok: true, overlay };
  }

  /**
   * New live widget values of an overlay in force (widget-state/live-values-store.ts): in force at once and
   * broadcast as `overlay-update`, its file left as it is.
   */
  showLiveValues(overlay: Overlay): void {
    if (!this.registry.get(overlay.id)) return;
    this.registry.set(overlay);
    this.#emit({ type: 'changed', overlay });
  }

  /**
   * A layout saved from the dashboard or the API: like `update`, but the live widget values (goal
   * progress, counters, top gifters) stay those in force at this moment. Stream events own them; the
   * saved copy holds whatever its editor last saw, and writing it back would roll the stream back.
   */
  async saveLayout(overlay: Overlay): Promise<UpdateResult> {
    const inForce = this.registry.get(overlay.id);
    // With the live values' owner, every layout in force keeps them (update adopts it).
    if (!inForce || this.#live) return this.update(overlay);
    return this.update({ ...overlay, widgets: keepLiveValues(overlay.widgets, inForce.widgets) });
  }

  async remove(id: string): Promise<boolean> {
    if (!this.registry.delete(id)) return false;
    await this.#files.get(id)?.discard();
    this.#files.delete(id);
    this.#onDisk.delete(id);
    this.#live?.forget(id);
    await rm(this.#pathOf(id), { force: true });
    this.#emit({ type: 'removed', overlayId: id });
    return true;
  }

  /** Starts watching overlays/ for edits made by other programs, through the daemon's file watcher. */
  watch(files: FileWatcher): void {
    this.#unwatch = files.watchFolder(
      this.dirs.overlaysDir,
      (name) => OVERLAY_FILE.test(name),
      (change, path) => {
        if (change === 'changed') void this.#read(path, true);
        else this.#onDeleted(path);
      },
    );
  }

  /** Stops watching and waits for every pending write. */
  async close(): Promise<void> {
    this.#unwatch?.();
    this.#unwatch = undefined;
    await this.flush();
  }

  async flush(): Promise<void> {
    await Promise.all([...this.#files.values()].map((file) => file.flush()));
  }

  #pathOf(id: string): string {
    return join(this.dirs.overlaysDir, `${id}.json`);
  }

  #file(id: string): SyncedJsonFile<Overlay> {
    let file = this.#files.get(id);
    if (!file) {
      file = new SyncedJsonFile({
        path: this.#pathOf(id),
        parse: (text) => parseOverlayFile(id, text),
        onEdited: (layout) => {
          const before = this.#onDisk.get(id);
          this.#onDisk.set(id, layout);
          const overlay = this.#adopt(layout, before);
          this.registry.set(overlay);
          this.#emit({ type: 'changed', overlay });
        },
        log: this.#log,
        label: '[store]',
      });
      this.#files.set(id, file);
    }
    return file;
  }

  #adopt(layout: Overlay, before?: Overlay): Overlay {
    return this.#live ? this.#live.adopt(layout, before) : layout;
  }

  #emit(change: OverlayListener): void {
    for (const listener of this.#listeners) listener(change);
  }

  async #read(path: string, announce: boolean): Promise<void> {
    const id = OVERLAY_FILE.exec(basename(path))?.[1];
    if (!id) return;
    const file = this.#file(id);
    await file.read(announce);
    if (file.value !== undefined) {
      if (!announce) {
        this.#onDisk.set(id, file.value);
        this.registry.set(this.#adopt(file.value));
      }
    } else if (file.unreadable === undefined && !file.writing && this.#files.get(id) === file) {
      // Nothing there (deleted before we read it): keep no entry for it.
      this.#files.delete(id);
    }
  }

  #onDeleted(path: string): void {
    const id = OVERLAY_FILE.exec(basename(path))?.[1];
    const file = id ? this.#files.get(id) : undefined;
    // A write of ours may be in flight (rename replaces the file): that is not a deletion.
    if (!id || !file?.deleted()) return;
    this.#files.delete(id);
    this.#onDisk.delete(id);
    this.#live?.forget(id);
    if (this.registry.delete(id)) {
      this.#log(`[store] ${path} was deleted; overlay ${id} removed`);
      this.#emit({ type: 'removed', overlayId: id });
    }
  }
}
