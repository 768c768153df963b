// Reads a JSON request body under a size limit, before any parsing (STYLE: limits first, then parsing).
import type { IncomingMessage } from 'node:http';

export const JSON_BODY_MAX_BYTES = 1024 * 1024;

export type BodyResult = { ok: true; text: string } | { ok: false; tooLarge: true };

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
