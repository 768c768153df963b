// A private JSON file in the data directory (license.json, tunnel.json): validated on read, written atomically with mode 0600.
import { chmod, readFile } from 'node:fs/promises';
import type * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import { writeFileAtomic } from './atomic-file.js';

export type PrivateJsonRead<T> = { ok: true; record: T | undefined } | { ok: false; error: string };

/** `record: undefined` when the file does not exist; a file that does not parse is reported, never overwritten silently. */
export async function readPrivateJson<S extends v.GenericSchema>(
  path: string,
  schema: S,
): Promise<PrivateJsonRead<v.InferOutput<S>>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, record: undefined };
    return { ok: false, error: errorMessage(err) };
  }
  const parsed = parseJsonWith(schema, text);
  return parsed.ok ? { ok: true, record: parsed.value } : { ok: false, error: `${path}: ${parsed.error}` };
}

/** The files hold credentials (the licence JWT, the connector token): private to the user. */
export async function writePrivateJson(path: string, record: unknown): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`, 0o600);
  // open(…, mode) is filtered by the umask; make 0600 exact.
  await chmod(path, 0o600);
}
