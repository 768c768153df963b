// Prints a fresh Ed25519 private JWK with a `kid`, the value of the JWT_PRIVATE_JWK secret (decisions §2).
// Usage: npx tsx scripts/generate-signing-key.ts | npx wrangler secret put JWT_PRIVATE_JWK
import { generateKeyPairSync, randomBytes } from 'node:crypto';

const { privateKey } = generateKeyPairSync('ed25519');
// The date tells operators which key is older during a rotation; the random part keeps kids unique.
const kid = `gk-${new Date().toISOString().slice(0, 10)}-${randomBytes(4).toString('hex')}`;
const jwk = { ...privateKey.export({ format: 'jwk' }), kid };

process.stdout.write(`${JSON.stringify(jwk)}\n`);
const { d: _d, ...publicJwk } = jwk;
process.stderr.write(
  `New signing key ${kid}. Keep its public part: when a newer key replaces it, list this in\n` +
    `JWT_PUBLIC_JWKS ({"keys":[...]}) so licences it signed keep verifying until they expire.\n` +
    `${JSON.stringify(publicJwk)}\n`,
);
