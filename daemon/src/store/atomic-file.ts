// Files written whole or not at all, and the signature that tells one version of a file from another.
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { DaemonError } from '../errors.js';

/**
 * The file system calls a write goes through: a test replaces one to make a write fail as a full disk
 * would (nobody can fill the disk in a test).
 */
export const atomicFs = { open, rename, rm };

/** A write refused for want of space (ENOSPC, EDQUOT): nothing was written and nothing is left behind. */
export class DiskFullError extends DaemonError {
  constructor(
    readonly path: string,
    /** What the system said: ENOSPC or EDQUOT. */
    readonly systemCode: string,
  ) {
    super(
      'disk_full',
      systemCode === 'EDQUOT'
        ? `the disk quota is used up (EDQUOT): ${path} could not be written; free some space and save again`
        : `the disk is full (ENOSPC): ${path} could not be written; free some space and save again`,
    );
  }
}

/** A write that failed for want of space, said in words; other errors as they are. */
export function diskFullOr(path: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' ? new DiskFullError(path, code) : err;
}

/** What tells one version of a file from another without reading it (a rename keeps all three). */
export interface FileSignature {
  ino: number;
  size: number;
  mtimeMs: number;
}

export function sameSignature(a: FileSignature | undefined, b: FileSignature | undefined): boolean {
  return (
    a !== undefined && b !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs
  );
}

/** Reads a file's text and signature from one open handle, so both describe the same version. */
export async function readFileWithSignature(
  path: string,
): Promise<{ text: string; signature: FileSignature }> {
  const handle = await open(path, 'r');
  try {
    const { ino, size, mtimeMs } = await handle.stat();
    return { signature: { ino, size, mtimeMs }, text: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}

/**
 * Writes a file so that a reader sees the old or the new content, never a torn one. Returns the
 * signature of what it wrote, so a later write can tell whether another program wrote since. A failed
 * write leaves the old file and no temporary file; a full disk is thrown as DiskFullError.
 */
export async function writeFileAtomic(path: string, data: string, mode = 0o644): Promise<FileSignature> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await atomicFs.open(tmp, 'w', mode);
    let signature: FileSignature;
    try {
      await handle.writeFile(data);
      await handle.sync();
      const { ino, size, mtimeMs } = await handle.stat();
      signature = { ino, size, mtimeMs };
    } finally {
      await handle.close();
    }
    await atomicFs.rename(tmp, path);
    return signature;
  } catch (err) {
    await atomicFs.rm(tmp, { force: true }).catch(() => {});
    throw diskFullOr(path, err);
  }
}

/** Creates the file with `data` unless it exists; true when it created it. */
export async function createIfMissing(path: string, data: string, mode: number): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'wx', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}
