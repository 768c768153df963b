// Tunnel subdomains (decisions §2): `o-` + 16 lowercase base32 characters of HMAC-SHA256(secret, user id).
//
// Keyed, so nobody can guess a streamer's subdomain from their public membership id; stable,
// so a re-provisioned tunnel keeps the URL that OBS scenes already use. 16 base32 characters
// are exactly the first 10 bytes (80 bits) of the MAC.

const BASE32_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'; // RFC 4648 §6, lowercased
const SUBDOMAIN_CHARS = 16;

/** RFC 4648 base32 without padding, lowercase. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >>> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    // The secret's UTF-8 bytes are the key, whatever encoding the operator generated it in.
    key = crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    keys.set(secret, key);
  }
  return key;
}

export async function deriveSubdomain(secret: string, userId: string): Promise<string> {
  if (!secret) throw new Error('SUBDOMAIN_SECRET is not set');
  const mac = await crypto.subtle.sign('HMAC', await hmacKey(secret), new TextEncoder().encode(userId));
  return `o-${base32(new Uint8Array(mac).subarray(0, (SUBDOMAIN_CHARS * 5) / 8))}`;
}
