// `<data-dir>/tunnel.json` (mode 0600): the provisioned tunnel and its connector token, so the daemon can reconnect it.
import { chmod, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { ProvisionResponse, parseJsonWith } from '../../../shared/protocol.js';
import { writeFileAtomic } from '../store.js';

export const TUNNEL_FILE = 'tunnel.json';

export const TunnelRecord = v.object({
  ...ProvisionResponse.entries,
  /** The membership user the tunnel belongs to (the licence's `sub`). */
  user_id: v.pipe(v.string(), v.minLength(1)),
});
export type TunnelRecord = v.InferOutput<typeof TunnelRecord>;

export const tunnelFilePath = (dataDir: string) => join(dataDir, TUNNEL_FILE);

export async function readTunnelFile(
  path: string,
): Promise<{ ok: true; record: TunnelRecord | undefined } | { ok: false; error: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, record: undefined };
    return { ok: false, error: (err as Error).message };
  }
  const parsed = parseJsonWith(TunnelRecord, text);
  return parsed.ok ? { ok: true, record: parsed.value } : { ok: false, error: `${path}: ${parsed.error}` };
}

export async function writeTunnelFile(path: string, record: TunnelRecord): Promise<void> {
  // The connector token lets anyone run this tunnel: private to the user, like license.json.
  await writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`, 0o600);
  await chmod(path, 0o600);
}

export async function removeTunnelFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** The hostname the daemon must accept as Host and Origin for requests through the tunnel. */
export function tunnelHostOf(record: Pick<TunnelRecord, 'public_url'>): string {
  return new URL(record.public_url).host;
}
