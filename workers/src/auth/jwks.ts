// GET /.well-known/jwks.json: the public keys that verify licences (decisions §2), for the daemon and tools.
import { Hono } from 'hono';
import type { AppEnv } from '../env.js';
import { methodNotAllowed } from '../errors.js';
import { publicJwks } from '../licence.js';

export const jwksRoutes = new Hono<AppEnv>();

jwksRoutes.get('/.well-known/jwks.json', async (c) => {
  // Five minutes: verifiers that cache the set pick up a rotated key soon after a deploy.
  c.header('Cache-Control', 'public, max-age=300');
  return c.json(await publicJwks(c.env));
});
jwksRoutes.all('/.well-known/jwks.json', methodNotAllowed('GET'));
