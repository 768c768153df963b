// The stores part: a pending restore put in place, then the admin key, the live values, overlays, rules
// and settings read and followed on disk (an edit by hand, `overlay-daemon new-key`), through the one file
// watcher that the other parts follow their files with too.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { restoreBackup } from '../backup/backup.js';
import { errorMessage } from '../errors.js';
import { pendingRestoreFile } from '../http/backup-routes.js';
import { type DataDir, readAdminKey } from '../store/data-dir.js';
import { FileWatcher } from '../store/file-watcher.js';
import { OverlayStore } from '../store/overlay-store.js';
import { RulesStore } from '../store/rules-store.js';
import { SettingsStore } from '../store/settings-store.js';
import { LiveValuesStore } from '../widget-state/live-values-store.js';
import { startPart } from './disposal-stack.js';

export interface StoresOptions {
  /** How long an edited file must be quiet before it is read (ms). */
  watchSettleMs?: number;
}

export interface Stores {
  /** The one watcher of the data directory's files: every part that follows a file listens through it. */
  files: FileWatcher;
  /** The admin key in force, followed on disk. */
  keys: { current: string };
  overlays: OverlayStore;
  /** live-values.json: the values widgets keep from events, merged into the overlays in force. */
  liveValues: LiveValuesStore;
  rules: RulesStore;
  settings: SettingsStore;
  close(): Promise<void>;
}

export function startStores(
  dataDir: DataDir,
  options: StoresOptions,
  log: (line: string) => void,
): Promise<Stores> {
  return startPart(log, async (stack) => {
    // A backup imported through the dashboard is put in place now, before anything reads the files.
    const pending = pendingRestoreFile(dataDir);
    if (existsSync(pending)) {
      try {
        const { keptIn, manifest } = await restoreBackup(dataDir, pending);
        log(`[backup] restored the backup of ${manifest.createdAt}; what was there before is in ${keptIn}`);
      } catch (err) {
        log(`[backup] the imported backup was not restored, nothing changed: ${errorMessage(err)}`);
      }
      await rm(pending, { force: true });
    }
    const keys = { current: await readAdminKey(dataDir) };
    // Closed last of this part: the stores stop listening first.
    const files = new FileWatcher({
      log,
      ...(options.watchSettleMs ? { settleMs: options.watchSettleMs } : {}),
    });
    stack.push(() => files.close(), 'the file watcher');
    // The values widgets keep from events live apart from the layouts and are merged into them.
    const liveValues = new LiveValuesStore({ path: dataDir.liveValuesFile, log });
    await liveValues.load();
    stack.push(() => liveValues.close(), 'the live values');
    const overlays = new OverlayStore(dataDir, { live: liveValues, log });
    stack.push(() => overlays.close(), 'the overlay store');
    await overlays.load();
    await liveValues.settle(overlays.list().map((overlay) => overlay.id));
    const rules = new RulesStore(dataDir, { log });
    stack.push(() => rules.close(), 'the rules store');
    await rules.load();
    const settings = new SettingsStore(dataDir.settingsFile, log);
    stack.push(() => settings.close(), 'the settings store');
    await settings.load();
    overlays.watch(files);
    rules.watch(files);
    settings.watch(files);

    // `overlay-daemon new-key` writes a new admin.key: take it at once, so old sign-in links stop working.
    const unwatchKey = files.watch(dataDir.adminKeyFile, () => {
      readAdminKey(dataDir).then(
        (key) => {
          if (key === keys.current) return;
          keys.current = key;
          log('[daemon] the admin key changed: sign-in links with the old one no longer work');
        },
        (err: unknown) => log(`[daemon] keeping the admin key in force: ${errorMessage(err)}`),
      );
    });
    stack.push(unwatchKey, 'the admin key watch');
    return { files, keys, overlays, liveValues, rules, settings };
  });
}
