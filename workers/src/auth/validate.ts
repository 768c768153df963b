// POST /validate: a fresh licence while the membership holds; 403 `membership_inactive` once it lapsed (decisions §2).
import { Hono } from 'hono';
import { errorBody, type ValidateResponse } from '../../../shared/protocol/index.js';
import type { AppEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { licenceBearer, signLicence, verifyCurrentLicenceOf } from '../licence.js';
import { freshVerdict } from '../membership/check.js';
import { serialisedTier } from '../membership/member-object.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { keepsNoTunnel, removeTunnelOfLapsedMember } from '../tunnels/lapse.js';

export const validateRoutes = new Hono<AppEnv>();

validateRoutes.use('/validate', rateLimit('validate'));

validateRoutes.post('/validate', async (c) => {
  // One read of the member record per request: its epoch refuses a signed-out licence, its verdict
  // answers while it is younger than an hour. An older verdict is re-checked in the member's Durable
  // Object, one re-check at a time; a fresh one needs no trip there (it would answer the same record).
  const { claims, member } = await verifyCurrentLicenceOf(
    c.env,
    licenceBearer(c.req.header('Authorization')),
  );
  const now = Date.now();
  const tier = freshVerdict(member, now) ?? (await serialisedTier(c.env, claims.sub, now));
  if (tier === null)
    throw new ApiError('invalid_token', 'No membership is on record for this licence; sign in again');

  // Free, or lapsed past grace: the tunnel goes now, not when the licence expires.
  if (keepsNoTunnel(tier)) await removeTunnelOfLapsedMember(c.env, claims.sub);

  const { token, expiresAt } = await signLicence(c.env, { sub: claims.sub, tier, epoch: claims.epoch ?? 1 });
  const licence: ValidateResponse = { token, tier, expires_at: expiresAt.toISOString() };
  c.header('Cache-Control', 'no-store');
  // A Premium licence whose membership lapsed: refused, but the body carries a Free licence so the
  // app carries on within the Free limits without a new login.
  if (claims.tier === 'premium' && tier === 'free') {
    return c.json(
      { ...errorBody('membership_inactive', 'The membership is no longer active'), ...licence },
      403,
    );
  }
  return c.json(licence);
});
validateRoutes.all('/validate', methodNotAllowed('POST'));
