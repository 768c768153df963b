// Kick's webhook signatures: RSA PKCS#1 v1.5 with SHA-256 over `<message id>.<timestamp>.<raw body>`,
// base64 in `Kick-Event-Signature`, checked with Kick's public key from `${KICK_API_URL}/public/v1/public-key`.
// The key is kept in the isolate; when a signature does not verify, the key is fetched once more (Kick may
// have rotated it) and the signature checked again. Concurrent failures share one fetch, and a forger cannot
// make the Gatekeeper ask Kick on every delivery: the key is fetched at most once a minute per isolate, and
// only for a signature as long as an RSA signature of Kick's key (or of another usual RSA size) can be.
import * as v from 'valibot';
import { KICK_WEBHOOK_LIMITS } from '../../../shared/protocol/kick.js';

const DEFAULT_KICK_API_URL = 'https://api.kick.com';

/** `{"data":{"public_key":"-----BEGIN PUBLIC KEY-----…"},"message":"OK"}` */
const PublicKeyAnswer = v.object({
  data: v.object({ public_key: v.pipe(v.string(), v.minLength(1), v.maxLength(16_384)) }),
});

interface CachedKey {
  url: string;
  pem: string;
  key: CryptoKey;
  /** The length in bytes of the signatures this key makes (its modulus). */
  signatureBytes: number;
}

/** The key is fetched again at most this often (per isolate), whatever the deliveries that fail. */
export const KICK_KEY_REFETCH_INTERVAL_MS = 60 * 1000;
/** RSA-2048, 3072 and 4096 signatures: a key Kick rotates to may have another of these sizes. */
const RSA_SIGNATURE_BYTES = [256, 384, 512];

let cached: CachedKey | undefined;
let inFlight: { url: string; promise: Promise<CachedKey> } | undefined;
/** When the key at `url` was last asked for (whether or not Kick answered). */
let lastFetch: { url: string; at: number } | undefined;

export const kickApiUrl = (env: { KICK_API_URL?: string }) =>
  (env.KICK_API_URL || DEFAULT_KICK_API_URL).replace(/\/+$/, '');

function pemToDer(pem: string): Uint8Array<ArrayBuffer> {
  const b64 = pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, '').replace(/\s+/g, '');
  const raw = atob(b64);
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

async function fetchKey(url: string): Promise<CachedKey> {
  const res = await fetch(`${url}/public/v1/public-key`, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw new Error(`Kick's public key: HTTP ${res.status}`);
  const parsed = v.safeParse(PublicKeyAnswer, await res.json());
  if (!parsed.success) throw new Error(`Kick's public key: unexpected answer (${parsed.issues[0].message})`);
  const pem = parsed.output.data.public_key;
  const key = await crypto.subtle.importKey(
    'spki',
    pemToDer(pem),
    { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  const { modulusLength } = key.algorithm as CryptoKeyRsaKeyAlgorithm;
  return { url, pem, key, signatureBytes: Math.ceil(modulusLength / 8) };
}

/** The key at `url`, fetched now (one fetch at a time per isolate); it replaces the cached one. */
function refetch(url: string): Promise<CachedKey> {
  if (inFlight?.url === url) return inFlight.promise;
  lastFetch = { url, at: Date.now() };
  const promise = fetchKey(url).then((fresh) => {
    cached = fresh;
    return fresh;
  });
  inFlight = { url, promise };
  const clear = () => {
    if (inFlight?.promise === promise) inFlight = undefined;
  };
  promise.then(clear, clear);
  return promise;
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  const clean = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(clean) || clean.length % 4 !== 0) return undefined;
  try {
    const raw = atob(clean);
    const bytes = new Uint8Array(new ArrayBuffer(raw.length));
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Whether a delivery is Kick's: its signature verifies with Kick's key (re-fetched when the cached one does
 * not verify it, at most once a minute, and only for a signature of a plausible length). A key that cannot
 * be fetched is thrown: the delivery is neither accepted nor called forged (Kick retries it).
 */
export async function verifyKickSignature(
  env: { KICK_API_URL?: string },
  delivery: { messageId: string; timestamp: string; signature: string; body: Uint8Array<ArrayBuffer> },
): Promise<SignatureCheck> {
  const signature = decodeBase64(delivery.signature);
  if (!signature) return { ok: false, reason: 'the signature is not base64' };
  const prefix = new TextEncoder().encode(`${delivery.messageId}.${delivery.timestamp}.`);
  const signed = new Uint8Array(new ArrayBuffer(prefix.byteLength + delivery.body.byteLength));
  signed.set(prefix, 0);
  signed.set(delivery.body, prefix.byteLength);
  const url = kickApiUrl(env);
  const verify = (k: CachedKey) => crypto.subtle.verify('RSASSA-PKCS1-v1_5', k.key, signature, signed);
  const current = cached?.url === url ? cached : undefined;
  if (current && (await verify(current))) return { ok: true };
  const fetchedRecently =
    inFlight?.url !== url &&
    lastFetch?.url === url &&
    Date.now() - lastFetch.at < KICK_KEY_REFETCH_INTERVAL_MS;
  if (current) {
    // No RSA key Kick may have rotated to makes a signature of this length: forged, no need to ask Kick.
    const length = signature.byteLength;
    if (length !== current.signatureBytes && !RSA_SIGNATURE_BYTES.includes(length)) {
      return { ok: false, reason: 'the signature does not verify' };
    }
    if (fetchedRecently) return { ok: false, reason: 'the signature does not verify' };
  } else if (fetchedRecently) {
    // Kick did not give its key a moment ago: the delivery is neither accepted nor called forged.
    throw new Error('Kick’s public key: not fetched again within a minute of a failed fetch');
  }
  // Not cached yet, or Kick may have a new key: fetch it (once) and try again.
  const fresh = await refetch(url);
  if (current && fresh.pem === current.pem) return { ok: false, reason: 'the signature does not verify' };
  return (await verify(fresh)) ? { ok: true } : { ok: false, reason: 'the signature does not verify' };
}

/** Whether `timestamp` (RFC 3339) is within 5 minutes of `now`. */
export function timestampIsFresh(timestamp: string, now = Date.now()): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(timestamp)) return false;
  const at = Date.parse(timestamp);
  return Number.isFinite(at) && Math.abs(now - at) <= KICK_WEBHOOK_LIMITS.timestampToleranceMs;
}
