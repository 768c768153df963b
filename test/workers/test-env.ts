// Secrets and variables of the Worker under test: fresh keys each run, fakes on loopback.
import { generateKeyPairSync, randomBytes } from 'node:crypto';

export function testBindings(urls: {
  patreonBase: string;
  cloudflareBase: string;
  kickBase: string;
}): Record<string, string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: `test-${randomBytes(4).toString('hex')}` };
  return {
    PUBLIC_BASE_URL: 'http://gatekeeper.test',
    MEMBERSHIP_CLIENT_ID: 'test-client-id',
    MEMBERSHIP_CLIENT_SECRET: 'test-client-secret',
    MEMBERSHIP_AUTHORIZE_URL: `${urls.patreonBase}/oauth2/authorize`,
    MEMBERSHIP_API_BASE: urls.patreonBase,
    MEMBERSHIP_CAMPAIGN_ID: '1000',
    APP_DEEP_LINK: 'overlay-daemon://auth',
    JWT_PRIVATE_JWK: JSON.stringify(jwk),
    CLOUDFLARE_API_TOKEN: 'test-cloudflare-token',
    CLOUDFLARE_ACCOUNT_ID: '023e105f4ecef8ad9ca31a8372d0c353',
    CLOUDFLARE_ZONE_ID: '023e105f4ecef8ad9ca31a8372d0c354',
    CLOUDFLARE_API_BASE: `${urls.cloudflareBase}/client/v4`,
    TUNNEL_DOMAIN: 'overlays.test',
    TUNNEL_ORIGIN_SERVICE: 'http://localhost:7890',
    SUBDOMAIN_SECRET: randomBytes(32).toString('base64'),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // A small relay (3 shards of 4 viewers), so the suites can fill one: 503 past 12 viewers.
    RELAY_SHARDS: '3',
    RELAY_SHARD_SIZE: '4',
    // One stand-in plays Kick's OAuth server and its API (test/support/fakes/kick-api.ts).
    KICK_CLIENT_ID: 'test-kick-client-id',
    KICK_CLIENT_SECRET: 'test-kick-client-secret',
    KICK_API_URL: urls.kickBase,
    KICK_AUTH_URL: urls.kickBase,
  };
}
