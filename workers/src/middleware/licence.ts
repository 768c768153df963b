// Requires a valid licence JWT (and optionally a tier); puts its claims in `c.var.licence`.
import { createMiddleware } from 'hono/factory';
import type { Tier } from '../../../shared/protocol/index.js';
import type { AppEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { bearerToken, verifyCurrentLicence } from '../licence.js';

export function requireLicence(options: { tier?: Tier } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const claims = await verifyCurrentLicence(c.env, bearerToken(c.req.header('Authorization')));
    if (options.tier === 'premium' && claims.tier !== 'premium') {
      throw new ApiError('premium_required', 'This needs a Premium membership');
    }
    c.set('licence', claims);
    await next();
  });
}
