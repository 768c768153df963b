// One request-body limit for every Gatekeeper route that reads a body: a declared Content-Length over
// the limit is refused before the body is read, a chunked body as soon as it passes it.
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env.js';
import { ApiError } from '../errors.js';

/** The Gatekeeper's bodies are small JSON objects (a user id, an auth code): 4 KiB is plenty. */
const MAX_BODY_BYTES = 4 * 1024;

/**
 * 413 `payload_too_large` with the common error body. A body refused part way is cancelled, not left
 * unread: an unread request body holds the connection, and the client's next request on it stalls.
 * What was read (at most `maxSize` bytes) becomes the request's body for the handler.
 */
export function limitBody(maxSize = MAX_BODY_BYTES) {
  const tooLarge = () => new ApiError('payload_too_large', `The body must be at most ${maxSize} bytes`);
  return createMiddleware<AppEnv>(async (c, next) => {
    const body = c.req.raw.body;
    if (!body) return next();
    const declared = c.req.raw.headers.get('content-length');
    if (declared !== null && !c.req.raw.headers.has('transfer-encoding')) {
      if (Number.parseInt(declared, 10) > maxSize) {
        await body.cancel().catch(() => {});
        throw tooLarge();
      }
      return next();
    }
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxSize) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
    const buffer = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      buffer.set(chunk, offset);
      offset += chunk.byteLength;
    }
    c.req.raw = new Request(c.req.raw, { body: buffer });
    await next();
  });
}
