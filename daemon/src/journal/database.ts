// Opening events.db: made private (0600) before SQLite opens it, WAL with checkpoints left to the journal's
// timer, checked, and brought up to this version's schema; a newer schema is not opened.
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import { MIGRATIONS } from './migrations.js';

/** The mode of events.db and its -wal and -shm: they hold every viewer's name and message. */
export const JOURNAL_FILE_MODE = 0o600;

/** Opens (or creates) the database at `path`; throws when SQLite cannot read it or its schema is newer. */
export function openJournalDatabase(path: string, log: (line: string) => void): Database.Database {
  // Created 0600 before SQLite opens it (SQLite gives -wal and -shm the mode of the database), and
  // made 0600 if an older version left it readable by others: it holds every viewer's messages.
  closeSync(openSync(path, 'a', JOURNAL_FILE_MODE));
  const makePrivate = (file: string) => {
    if (!existsSync(file)) return;
    try {
      chmodSync(file, JOURNAL_FILE_MODE);
    } catch (err) {
      // Another user's file this daemon may still read and write: said, and not a reason to set it aside.
      log(`[journal] ${file} could not be made private (mode 0600): ${errorMessage(err)}`);
    }
  };
  makePrivate(path);
  const db = new Database(path);
  try {
    for (const suffix of ['-wal', '-shm']) makePrivate(path + suffix);
    db.pragma('journal_mode = WAL');
    // In WAL mode a commit is in the file when it returns; a process killed after it loses nothing.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 2000');
    // Checkpoints run from a timer (journal.ts), not inside the commit of an event.
    db.pragma('wal_autocheckpoint = 0');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check: ${String(check)}`);
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version > MIGRATIONS.length)
      throw new Error(
        `it was written by a newer version (schema ${version}, this one knows ${MIGRATIONS.length})`,
      );
    for (let v = version; v < MIGRATIONS.length; v++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[v] as string);
        db.pragma(`user_version = ${v + 1}`);
      })();
    }
    // The first write makes -wal and -shm; they take the database's mode, checked here all the same.
    for (const suffix of ['-wal', '-shm']) makePrivate(path + suffix);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
