// Licence JWTs signed the way the Gatekeeper signs them (EdDSA, kid, iss, aud), for the fake Gatekeeper
// and for tests that write license.json themselves, with the key set the daemon caches as jwks.json.
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dataDirPaths } from '../../daemon/src/store/data-dir.js';
import { LICENCE_JWT, type Tier } from '../../shared/protocol/index.js';

interface LicenceSigner {
  kid: string;
  jwks: { keys: Record<string, unknown>[] };
  sign(claims: {
    sub: string;
    tier: Tier;
    iss: string;
    ttlSeconds?: number;
    epoch?: number;
    aud?: string;
    /** The signer's clock (ms since the epoch), `iat`; default the real one. */
    now?: number;
  }): string;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function licenceSigner(kid = `test-${randomUUID().slice(0, 8)}`): LicenceSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    kid,
    jwks: { keys: [{ ...jwk, kid, alg: 'EdDSA', use: 'sig' }] },
    sign({
      sub,
      tier,
      iss,
      ttlSeconds = 7 * 86_400,
      epoch = 1,
      aud = LICENCE_JWT.audience,
      now = Date.now(),
    }) {
      const iat = Math.floor(now / 1000);
      const header = b64url({ alg: 'EdDSA', typ: 'JWT', kid });
      const payload = b64url({ sub, tier, epoch, iss, aud, iat, exp: iat + ttlSeconds, jti: randomUUID() });
      const signature = sign(null, Buffer.from(`${header}.${payload}`), privateKey).toString('base64url');
      return `${header}.${payload}.${signature}`;
    },
  };
}

/** Makes the daemon of `dataDir` trust this signer offline, as if it had fetched the Gatekeeper's keys. */
export async function trustSigner(dataDir: string, signer: LicenceSigner): Promise<void> {
  await writeFile(dataDirPaths(dataDir).jwksFile, JSON.stringify(signer.jwks));
}
