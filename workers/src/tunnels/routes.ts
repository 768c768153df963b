// The three tunnel endpoints (interface §4.1, decisions §2): own user id only; Premium to provision and
// read, any valid licence to delete (a lapsed member can always remove their tunnel).
import { Hono } from 'hono';
import { ProvisionRequest, parseJsonWith } from '../../../shared/protocol/index.js';
import type { AppEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';

import { limitBody } from '../middleware/body-limit.js';
import { requireLicence } from '../middleware/licence.js';
import { serialisedProvision } from './member-provision.js';
import { tunnelService } from './service.js';

/** A licence acts only on its own tunnel: the user id asked for must be the JWT's `sub`. */
function assertOwnUser(licenceSub: string, userId: string): void {
  if (userId !== licenceSub)
    throw new ApiError('forbidden', "A licence can only manage its own user's tunnel");
}

export const tunnelRoutes = new Hono<AppEnv>();

tunnelRoutes.post('/provision', requireLicence({ tier: 'premium' }), limitBody(), async (c) => {
  const body = parseJsonWith(ProvisionRequest, await c.req.text());
  if (!body.ok)
    throw new ApiError('bad_request', body.field ? `Invalid ${body.field}: ${body.error}` : body.error);
  assertOwnUser(c.var.licence.sub, body.value.user_id);
  // One provision of a member at a time: a failed one's rollback cannot delete what another handed out.
  const { created, response } = await serialisedProvision(c.env, body.value.user_id);
  return c.json(response, created ? 201 : 200);
});

tunnelRoutes.all('/provision', methodNotAllowed('POST'));

tunnelRoutes.get('/status/:userId', requireLicence({ tier: 'premium' }), async (c) => {
  const userId = c.req.param('userId');
  assertOwnUser(c.var.licence.sub, userId);
  return c.json(await tunnelService(c.env).status(userId));
});

tunnelRoutes.all('/status/:userId', methodNotAllowed('GET'));

tunnelRoutes.delete('/:userId', requireLicence(), async (c) => {
  const userId = c.req.param('userId');
  assertOwnUser(c.var.licence.sub, userId);
  await tunnelService(c.env).remove(userId);
  return c.body(null, 204);
});
tunnelRoutes.all('/:userId', methodNotAllowed('DELETE'));
