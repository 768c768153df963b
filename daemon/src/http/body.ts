// Reads a JSON request body under a size limit, before any parsing (STYLE: limits first, then parsing),
// and validates it with its schema.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { sendError } from './responses.js';

const JSON_BODY_MAX_BYTES = 1024 * 1024;

type BodyResult = { ok: true; text: string } | { ok: false; tooLarge: true };

export function readBody(req: IncomingMessage, maxBytes = JSON_BODY_MAX_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ ok: false, tooLarge: true });
  // Listeners rather than an async iterator: a small body is one chunk, and the iterator's machinery
  // cost more than the rest of reading it.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer | string) => {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buffer.length;
      if (size > maxBytes) {
        done();
        // The rest is not read: the answer says the body is too large and the connection closes.
        req.pause();
        resolve({ ok: false, tooLarge: true });
        return;
      }
      chunks.push(buffer);
    };
    const onEnd = () => {
      done();
      resolve({
        ok: true,
        text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'),
      });
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onClose = () => {
      done();
      reject(new Error('the request was aborted before its body arrived'));
    };
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Decisions-2 §5: deeper JSON is refused before it is parsed (and before a validator recurses into it). */
export const JSON_MAX_DEPTH = 64;

/**
 * Whether `text` nests arrays and objects deeper than `maxDepth`: one pass over the characters,
 * skipping strings, so a body 200,000 levels deep costs a scan, never a stack overflow.
 */
export function jsonTooDeep(text: string, maxDepth = JSON_MAX_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Reads and validates a JSON body; answers 413/400 itself and returns undefined then. */
export async function readJson<S extends v.GenericSchema>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: S,
): Promise<v.InferOutput<S> | undefined> {
  const body = await readBody(req);
  if (!body.ok) {
    sendError(res, 'payload_too_large', 'JSON bodies are limited to 1 MiB', { Connection: 'close' });
    return undefined;
  }
  if (jsonTooDeep(body.text)) {
    sendError(res, 'bad_request', `body: JSON nested deeper than ${JSON_MAX_DEPTH} levels`);
    return undefined;
  }
  const parsed = parseJsonWith(schema, body.text);
  if (!parsed.ok) {
    sendError(res, 'bad_request', parsed.error);
    return undefined;
  }
  return parsed.value;
}
