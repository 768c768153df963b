// The journal part: events.db open, old events pruned at start and every six hours.
import { errorMessage } from '../errors.js';
import { Journal } from '../journal/journal.js';
import type { DataDir } from '../store/data-dir.js';
import type { SettingsStore } from '../store/settings-store.js';

export interface JournalPart {
  journal: Journal;
  close(): void;
}

export function startJournal(
  dataDir: DataDir,
  settings: SettingsStore,
  log: (line: string) => void,
): JournalPart {
  // Every accepted event, written before it is answered; its seq numbers every message of the hub.
  const journal = Journal.open({ path: dataDir.eventsFile, log, points: () => settings.current().points });
  // Retention: events older than the settings say go, at start and every six hours.
  const prune = () => {
    try {
      const removed = journal.prune(settings.current().journal.retentionDays);
      if (removed > 0)
        log(
          `[journal] removed ${removed} events older than ${settings.current().journal.retentionDays} days`,
        );
    } catch (err) {
      log(`[journal] could not remove old events: ${errorMessage(err)}`);
    }
  };
  prune();
  const pruneTimer = setInterval(prune, 6 * 60 * 60 * 1000).unref();
  return {
    journal,
    close() {
      clearInterval(pruneTimer);
      journal.close();
    },
  };
}
