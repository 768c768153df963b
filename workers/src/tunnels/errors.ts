// Maps what went wrong at Cloudflare to the common error body (decisions §1): 409 or 502.

import { ApiError } from '../errors.js';
import { CloudflareApiError } from './cloudflare-api.js';

/** A DNS record at the tunnel's hostname that this service did not create. */
export class HostnameTakenError extends Error {}

/** Each Cloudflare call (cloudflare-api.ts step names) in the words a user reads in the 502. */
const STEP_WORDS: Record<string, string> = {
  'create tunnel': 'creating the tunnel',
  'list tunnels': 'looking up the tunnel',
  'get tunnel': 'reading the tunnel',
  'delete tunnel': 'deleting the tunnel',
  'get tunnel configuration': "reading the tunnel's routing",
  'set tunnel configuration': "setting the tunnel's routing",
  'get tunnel token': "fetching the tunnel's connector token",
  'list tunnel connections': "counting the tunnel's connections",
  'clear tunnel connections': "closing the tunnel's connections",
  'list DNS records': 'looking up the DNS record',
  'create DNS record': 'creating the DNS record',
  'delete DNS record': 'deleting the DNS record',
};

/**
 * What the failed request leaves behind, for the user: `provision` rolled back everything it
 * created (or could not: see service.ts), `status` changed nothing, `remove` resumes on a retry.
 */
type Aftermath = 'rolled-back' | 'left-behind' | 'unchanged' | 'resumable';

const AFTERMATH_WORDS: Record<Aftermath, string> = {
  'rolled-back': 'nothing was left behind. Try again.',
  'left-behind': 'part of the tunnel may be left behind; trying again cleans it up.',
  unchanged: 'nothing was changed. Try again.',
  resumable: 'trying again resumes the removal where it stopped.',
};

export function toHttpError(err: unknown, aftermath: Aftermath): unknown {
  if (err instanceof HostnameTakenError) return new ApiError('conflict', err.message);
  if (err instanceof CloudflareApiError) {
    // Cloudflare's codes, messages, connection errors and schema errors are for the operator's log,
    // not the client: they describe our account and infrastructure.
    console.error(`Cloudflare API failure (${err.kind}): ${err.message}`);
    const step = STEP_WORDS[err.step] ?? 'calling its API';
    return new ApiError('upstream_error', `Cloudflare failed while ${step}; ${AFTERMATH_WORDS[aftermath]}`);
  }
  return err;
}
