// `<data-dir>/license.json` (decisions §3): the Gatekeeper JWT and the last verdict, written atomically with mode 0600.
import { rm } from 'node:fs/promises';
import * as v from 'valibot';
import { Tier } from '../../../shared/protocol/index.js';
import { type PrivateJsonRead, readPrivateJson, writePrivateJson } from '../store/private-json-file.js';

const Timestamp = v.pipe(v.string(), v.isoTimestamp());

export const LicenceRecord = v.object({
  token: v.pipe(v.string(), v.minLength(1)),
  /** The tier of the last verdict the Gatekeeper gave (a lapsed membership is `free`). */
  tier: Tier,
  /** When the Gatekeeper last answered for this token: the start of the grace period. */
  validated_at: Timestamp,
  /** The JWT's own expiry, as the Gatekeeper reported it. */
  expires_at: v.optional(Timestamp),
  /** The membership user id (the JWT `sub`): the tunnel routes are addressed by it. */
  user_id: v.pipe(v.string(), v.minLength(1)),
  /** Why the last verdict is `free`, when the Gatekeeper said so: `membership_inactive` or `invalid_token`. */
  verdict: v.optional(v.picklist(['ok', 'membership_inactive', 'invalid_token']), 'ok'),
});
export type LicenceRecord = v.InferOutput<typeof LicenceRecord>;

type LicenceRead = PrivateJsonRead<LicenceRecord>;

/** `record: undefined` when nobody has signed in; a file that does not parse is reported, never overwritten silently. */
export function readLicence(path: string): Promise<LicenceRead> {
  return readPrivateJson(path, LicenceRecord);
}

/** The token is a credential: mode 0600. */
export function writeLicence(path: string, record: LicenceRecord): Promise<void> {
  return writePrivateJson(path, record);
}

/** `logout`: true when there was a licence to remove. */
export async function removeLicence(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
