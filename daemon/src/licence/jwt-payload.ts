// Reads a licence JWT's claims without verifying it: the Gatekeeper verifies; the daemon only needs `sub`, `exp` and `epoch`.
import * as v from 'valibot';
import { parseJsonWith } from '../../../shared/protocol/index.js';

const Claims = v.object({
  sub: v.pipe(v.string(), v.minLength(1)),
  exp: v.optional(v.pipe(v.number(), v.finite())),
  tier: v.optional(v.string()),
  /** Raised by a logout: a licence of a higher epoch comes from a sign-in since. */
  epoch: v.optional(v.pipe(v.number(), v.safeInteger())),
});
type UnverifiedClaims = v.InferOutput<typeof Claims>;

export function decodeJwtPayload(token: string): UnverifiedClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  const parsed = parseJsonWith(Claims, Buffer.from(parts[1], 'base64url').toString('utf8'));
  return parsed.ok ? parsed.value : undefined;
}
