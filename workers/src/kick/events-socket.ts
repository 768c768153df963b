// `GET /kick/events?after=<seq>`: the daemon's feed of its member's Kick events (a WebSocket). The licence
// and `after` are checked before the upgrade; the member's KickChannel then sends every kept event after
// `after` (a `gap` first when some are no longer kept) and the live ones as they come. Without `after`
// only live events are sent. The channel is told the licence's exp and epoch: it closes the socket when
// the exp passes (4401) or the member signs out (4403).
import { Hono } from 'hono';
import * as v from 'valibot';
import { errorBody } from '../../../shared/protocol/index.js';
import { KickEventsAfter } from '../../../shared/protocol/kick.js';
import type { AppEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { requireLicence } from '../middleware/licence.js';
import { feedHeaders, kickChannelOf } from './channel.js';

export const kickEventsRoutes = new Hono<AppEnv>();

kickEventsRoutes.get('/events', requireLicence(), async (c) => {
  const after = c.req.query('after');
  if (after !== undefined && !v.safeParse(KickEventsAfter, after).success) {
    throw new ApiError('bad_request', 'after must be a seq (a whole number)');
  }
  if (c.req.header('Upgrade')?.toLowerCase() !== 'websocket') {
    return Response.json(errorBody('bad_request', 'This route is a WebSocket: send Upgrade: websocket'), {
      status: 426,
      headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
    });
  }
  const url = new URL('https://kick-channel/events');
  if (after !== undefined) url.searchParams.set('after', after);
  const { sub, exp, epoch } = c.var.licence;
  return kickChannelOf(c.env, sub).fetch(
    new Request(url, { headers: { Upgrade: 'websocket', ...feedHeaders({ exp, epoch: epoch ?? 1 }) } }),
  );
});
kickEventsRoutes.all('/events', methodNotAllowed('GET'));
