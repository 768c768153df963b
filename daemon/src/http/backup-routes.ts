// The dashboard's Export and Import: a backup of the running daemon downloaded as one
// .tar.gz, and an upload checked at once like `overlay-daemon restore` checks it, then put in place at
// the daemon's next start (the journal and the stores are not swapped under a running server). Until
// then `GET /api/restore` says it waits and `DELETE /api/restore` cancels it.
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Polka } from 'polka';
import { backupFileName, type PendingRestore } from '../../../shared/backup.js';
import {
  BackupError,
  BackupTooLarge,
  createBackup,
  readBackupManifest,
  verifyBackup,
} from '../backup/backup.js';
import { DaemonError, errorMessage } from '../errors.js';
import type { DataDir } from '../store/data-dir.js';
import { sendError, sendJson, sendNoContent } from './responses.js';

/** The largest import taken over HTTP (the journal of a long career of streams fits). */
const IMPORT_MAX_BYTES = 2 * 1024 * 1024 * 1024;

/** Where an import waits for the next start. */
export const pendingRestoreFile = (dirs: DataDir) => join(dirs.root, 'restore-pending.tar.gz');

class TooLarge extends DaemonError {
  constructor() {
    super('payload_too_large', 'the archive is larger than allowed');
  }
}

/** Writes the request body to `file`, refusing more than `max` bytes (declared or streamed). */
async function saveBody(req: IncomingMessage, file: string, max: number): Promise<void> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) throw new TooLarge();
  let size = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      done(size > max ? new TooLarge() : null, chunk);
    },
  });
  await pipeline(req, cap, createWriteStream(file, { mode: 0o600 }));
}

export function mountBackupRoutes(app: Polka, dirs: DataDir, log: (line: string) => void): void {
  app.get('/api/backup', async (_req, res: ServerResponse) => {
    const work = await mkdtemp(join(dirs.root, '.export-'));
    const file = join(work, 'backup.tar.gz');
    try {
      await createBackup(dirs, file, { includeSecrets: false });
      const { size } = await stat(file);
      const name = backupFileName(new Date());
      res.writeHead(200, {
        'Content-Type': 'application/gzip',
        'Content-Length': size,
        'Content-Disposition': `attachment; filename="${name}"`,
        'Cache-Control': 'no-store',
      });
      await pipeline(createReadStream(file), res);
    } catch (err) {
      if (!res.headersSent) sendError(res, 'internal', `the backup could not be made: ${errorMessage(err)}`);
      else res.destroy();
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  app.post('/api/restore', async (req, res) => {
    const work = await mkdtemp(join(dirs.root, '.import-'));
    const file = join(work, 'import.tar.gz');
    try {
      await saveBody(req, file, IMPORT_MAX_BYTES);
      const manifest = await verifyBackup(dirs, file);
      await rename(file, pendingRestoreFile(dirs));
      log(`[backup] a backup of ${manifest.createdAt} was imported: it is put in place at the next start`);
      sendJson(res, 202, { createdAt: manifest.createdAt, restartNeeded: true });
    } catch (err) {
      if (err instanceof TooLarge)
        return sendError(res, 'payload_too_large', `a backup may be at most ${IMPORT_MAX_BYTES} bytes`, {
          Connection: 'close',
        });
      if (err instanceof BackupTooLarge) return sendError(res, 'payload_too_large', `backup: ${err.message}`);
      if (err instanceof BackupError) return sendError(res, 'bad_request', `backup: ${err.message}`);
      sendError(res, 'internal', `the backup could not be read: ${errorMessage(err)}`);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  // An import waiting for the next start: shown in the dashboard, and cancelled there.
  app.get('/api/restore', async (_req, res) => {
    let body: PendingRestore = { pending: false };
    const file = pendingRestoreFile(dirs);
    if (existsSync(file)) {
      try {
        const manifest = await readBackupManifest(file);
        body = { pending: true, createdAt: manifest.createdAt, includesSecrets: manifest.includesSecrets };
      } catch (err) {
        log(`[backup] the imported backup cannot be read: ${errorMessage(err)}`);
      }
    }
    sendJson(res, 200, body, { 'Cache-Control': 'no-store' });
  });

  app.delete('/api/restore', async (_req, res) => {
    const file = pendingRestoreFile(dirs);
    if (!existsSync(file)) return sendError(res, 'not_found', 'No imported backup waits for the next start');
    await rm(file, { force: true });
    log('[backup] the imported backup was cancelled: it will not be put in place');
    sendNoContent(res);
  });
}
