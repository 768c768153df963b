// Maps what went wrong at Cloudflare to the common error body (decisions §1): 409 or 502.
import { CloudflareApiError } from '../cloudflare-api.js';
import { ApiError } from '../errors.js';

/** A DNS record at the tunnel's hostname that this service did not create. */
export class HostnameTakenError extends Error {}

export function toHttpError(err: unknown): unknown {
  if (err instanceof HostnameTakenError) return new ApiError('conflict', err.message);
  if (err instanceof CloudflareApiError) {
    // The step and the API's codes help an operator; nothing secret is in them.
    return new ApiError('upstream_error', `The Cloudflare API failed (${err.message})`);
  }
  return err;
}
