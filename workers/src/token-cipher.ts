// AES-GCM encryption at rest of platform refresh tokens (decisions §2, TOKEN_ENCRYPTION_KEY).
import { base64ToBytes, bytesToBase64Url } from './base64url.js';
import type { GatekeeperEnv } from './env.js';

const VERSION = 'v1';
let cached: { source: string; key: Promise<CryptoKey> } | undefined;

function encryptionKey(env: GatekeeperEnv): Promise<CryptoKey> {
  const source = env.TOKEN_ENCRYPTION_KEY;
  if (cached?.source !== source) {
    const raw = source ? base64ToBytes(source) : new Uint8Array();
    if (raw.length !== 32) throw new Error('TOKEN_ENCRYPTION_KEY must be 32 random bytes, base64');
    cached = { source, key: crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']) };
  }
  return cached.key;
}

/**
 * `v1.<iv>.<ciphertext>` in base64url. The user id is bound as additional data, so a sealed token
 * copied onto another user's record does not open.
 */
export async function sealToken(env: GatekeeperEnv, userId: string, token: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(userId) },
    await encryptionKey(env),
    new TextEncoder().encode(token),
  );
  return `${VERSION}.${bytesToBase64Url(iv)}.${bytesToBase64Url(new Uint8Array(sealed))}`;
}

/**
 * The token, or null when the value was not sealed by this key for this user (tampered, copied from
 * another record). A missing or malformed TOKEN_ENCRYPTION_KEY is not such a case: it throws, and the
 * request fails as a logged 500 `internal`, because reading every token as null would lapse every
 * member at once.
 */
export async function openToken(env: GatekeeperEnv, userId: string, sealed: string): Promise<string | null> {
  const key = await encryptionKey(env);
  const [version, iv, data] = sealed.split('.');
  if (version !== VERSION || !iv || !data) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: base64ToBytes(iv), additionalData: new TextEncoder().encode(userId) },
      key,
      base64ToBytes(data),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}
