// `<data-dir>/tunnel.json` (mode 0600): the provisioned tunnel and its connector token, so the daemon can reconnect it.
import { rm } from 'node:fs/promises';
import * as v from 'valibot';
import { ProvisionResponse } from '../../../shared/protocol/index.js';
import { type PrivateJsonRead, readPrivateJson, writePrivateJson } from '../store/private-json-file.js';

export const TunnelRecord = v.object({
  ...ProvisionResponse.entries,
  /** The membership user the tunnel belongs to (the licence's `sub`). */
  user_id: v.pipe(v.string(), v.minLength(1)),
});
export type TunnelRecord = v.InferOutput<typeof TunnelRecord>;

export function readTunnelFile(path: string): Promise<PrivateJsonRead<TunnelRecord>> {
  return readPrivateJson(path, TunnelRecord);
}

export function writeTunnelFile(path: string, record: TunnelRecord): Promise<void> {
  // The connector token lets anyone run this tunnel: private to the user, like license.json.
  return writePrivateJson(path, record);
}

export async function removeTunnelFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** The hostname the daemon must accept as Host and Origin for requests through the tunnel. */
export function tunnelHostOf(record: Pick<TunnelRecord, 'public_url'>): string {
  return new URL(record.public_url).host;
}
