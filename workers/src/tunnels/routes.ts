// The three tunnel endpoints (interface §4.1, decisions §2): own user id only; Premium to provision and
// read, any valid licence to delete (decisions-2 §4: a lapsed member can always remove their tunnel).
import { Hono } from 'hono';
import { ProvisionRequest, parseJsonWith } from '../../../shared/protocol/index.js';
import type { AppEnv, GatekeeperEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { limitBody } from '../middleware/body-limit.js';
import { requireLicence } from '../middleware/licence.js';
import { cloudflareApi } from './cloudflare-api.js';
import { DEFAULT_ORIGIN_SERVICE, TunnelService } from './service.js';
import { TunnelStore } from './store.js';

/** `{"user_id": "…"}` is tiny; anything far larger is not a provision request. */

export function tunnelService(env: GatekeeperEnv): TunnelService {
  if (!env.TUNNEL_DOMAIN) throw new Error('TUNNEL_DOMAIN is not set');
  return new TunnelService(cloudflareApi(env), new TunnelStore(env.GATEKEEPER_KV), {
    domain: env.TUNNEL_DOMAIN.toLowerCase(),
    originService: env.TUNNEL_ORIGIN_SERVICE || DEFAULT_ORIGIN_SERVICE,
    subdomainSecret: env.SUBDOMAIN_SECRET,
  });
}

/** A licence acts only on its own tunnel: the user id asked for must be the JWT's `sub`. */
function assertOwnUser(licenceSub: string, userId: string): void {
  if (userId !== licenceSub)
    throw new ApiError('forbidden', "A licence can only manage its own user's tunnel");
}

export const tunnelRoutes = new Hono<AppEnv>();

tunnelRoutes.on(['POST', 'GET'], ['/provision', '/status/*'], requireLicence({ tier: 'premium' }));
tunnelRoutes.delete('/:userId', requireLicence());

tunnelRoutes.post('/provision', limitBody(), async (c) => {
  const body = parseJsonWith(ProvisionRequest, await c.req.text());
  if (!body.ok)
    throw new ApiError('bad_request', body.field ? `Invalid ${body.field}: ${body.error}` : body.error);
  assertOwnUser(c.var.licence.sub, body.value.user_id);
  const { created, response } = await tunnelService(c.env).provision(body.value.user_id);
  return c.json(response, created ? 201 : 200);
});

tunnelRoutes.get('/status/:userId', async (c) => {
  const userId = c.req.param('userId');
  assertOwnUser(c.var.licence.sub, userId);
  return c.json(await tunnelService(c.env).status(userId));
});

tunnelRoutes.delete('/:userId', async (c) => {
  const userId = c.req.param('userId');
  assertOwnUser(c.var.licence.sub, userId);
  await tunnelService(c.env).remove(userId);
  return c.body(null, 204);
});
