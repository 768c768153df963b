// The stores part: a pending restore put in place, then the admin key, the live values, overlays, rules
// and settings read and followed on disk (an edit by hand, `overlay-daemon new-key`).
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { watch as watchFile } from 'chokidar';
import { restoreBackup } from '../backup/backup.js';
import { errorMessage } from '../errors.js';
import { pendingRestoreFile } from '../http/backup-routes.js';
import { type DataDir, readAdminKey } from '../store/data-dir.js';
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
    const settle = options.watchSettleMs ? { settleMs: options.watchSettleMs } : {};
    // The values widgets keep from events live apart from the layouts and are merged into them.
    const liveValues = new LiveValuesStore({ path: dataDir.liveValuesFile, log });
    await liveValues.load();
    stack.push(() => liveValues.close(), 'the live values');
    const overlays = new OverlayStore(dataDir, { live: liveValues, log, ...settle });
    stack.push(() => overlays.close(), 'the overlay store');
    await overlays.load();
    await liveValues.settle(overlays.list().map((overlay) => overlay.id));
    const rules = new RulesStore(dataDir, { log, ...settle });
    stack.push(() => rules.close(), 'the rules store');
    await rules.load();
    const settings = new SettingsStore(dataDir.settingsFile, log, settle);
    stack.push(() => settings.close(), 'the settings store');
    await settings.load();
    await overlays.watch();
    await rules.watch();
    await settings.watch();

    // `overlay-daemon new-key` writes a new admin.key: take it at once, so old sign-in links stop working.
    const keyWatcher = watchFile(dataDir.adminKeyFile, {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: 50 },
    });
    stack.push(() => keyWatcher.close(), 'the admin key watcher');
    keyWatcher.on('all', () => {
      readAdminKey(dataDir).then(
        (key) => {
          if (key === keys.current) return;
          keys.current = key;
          log('[daemon] the admin key changed: sign-in links with the old one no longer work');
        },
        (err: unknown) => log(`[daemon] keeping the admin key in force: ${errorMessage(err)}`),
      );
    });
    return { keys, overlays, liveValues, rules, settings };
  });
}
