// A stand-in for Kick's webhook sender, for Node: an RSA key pair of its own (node:crypto), deliveries
// signed as Kick signs them, and sample bodies of each event type (kick-webhook-signer.ts, which also runs
// inside workerd, has the signing and the samples).
import { generateKeyPairSync } from 'node:crypto';
import { type KickWebhookSender, kickWebhookSenderFromKeys } from './kick-webhook-signer.js';

export * from './kick-webhook-signer.js';

/** A new RSA-2048 key pair as PEM (SPKI public, PKCS#8 private). */
export function generateKickKeyPair(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyPem: publicKey, privateKeyPem: privateKey };
}

/** A webhook sender with a key pair of its own (or the one given); its `publicKeyPem` is what Kick's API serves. */
export function createKickWebhookSender(
  keys: { publicKeyPem: string; privateKeyPem: string } = generateKickKeyPair(),
): KickWebhookSender {
  return kickWebhookSenderFromKeys(keys);
}
