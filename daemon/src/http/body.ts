// Reads a JSON request body under a size limit, before any parsing (STYLE: limits first, then parsing).
import type { IncomingMessage } from 'node:http';

const JSON_BODY_MAX_BYTES = 1024 * 1024;

type BodyResult = { ok: true; text: string } | { ok: false; tooLarge: true };

export async function readBody(req: IncomingMessage, maxBytes = JSON_BODY_MAX_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return { ok: false, tooLarge: true };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > maxBytes) return { ok: false, tooLarge: true };
    chunks.push(buffer);
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
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
