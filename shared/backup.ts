// The dashboard's import of a backup (GET/DELETE /api/restore): an uploaded backup waits for the
// daemon's next start, and can be seen and cancelled until then.
import * as v from 'valibot';

/** `GET /api/restore`: whether an imported backup waits to be put in place at the next start. */
export const PendingRestore = v.union([
  v.object({ pending: v.literal(false) }),
  v.object({
    pending: v.literal(true),
    /** When the backup was made (ISO 8601). */
    createdAt: v.string(),
    includesSecrets: v.boolean(),
  }),
]);
export type PendingRestore = v.InferOutput<typeof PendingRestore>;

/** A backup's file name: the date and time to the second, so two made the same day do not collide. */
export function backupFileName(now: Date): string {
  return `overlay-daemon-backup-${now.toISOString().slice(0, 19).replace(/:/g, '-')}Z.tar.gz`;
}
