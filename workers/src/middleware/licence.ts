// Requires a valid licence JWT (and optionally a tier, which the member's stored verdict must not
// contradict); puts its claims in `c.var.licence`.
import { createMiddleware } from 'hono/factory';
import type { Tier } from '../../../shared/protocol/index.js';
import type { AppEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { bearerToken, verifyCurrentLicenceOf } from '../licence.js';

export function requireLicence(options: { tier?: Tier } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { claims, member } = await verifyCurrentLicenceOf(
      c.env,
      bearerToken(c.req.header('Authorization')),
    );
    // A Premium licence outlives the membership by up to its 7 days: once the stored verdict says
    // Free (a re-check found the membership lapsed), the licence's `tier` claim no longer counts.
    if (options.tier === 'premium' && (claims.tier !== 'premium' || member?.tier === 'free')) {
      throw new ApiError('premium_required', 'This needs a Premium membership');
    }
    c.set('licence', claims);
    await next();
  });
}
