// One request-body limit for every Gatekeeper route that reads a body (hono/body-limit): a declared
// Content-Length over the limit is refused before the body is read, a chunked body as soon as it passes it.
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.js';

/** The Gatekeeper's bodies are small JSON objects (a user id, an auth code): 4 KiB is plenty. */
const MAX_BODY_BYTES = 4 * 1024;

/** 413 `payload_too_large` with the error body of decisions §1. */
export function limitBody(maxSize = MAX_BODY_BYTES) {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError('payload_too_large', `The body must be at most ${maxSize} bytes`);
    },
  });
}
