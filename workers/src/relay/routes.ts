// The overlay relay's routes on the Worker: the daemon's publisher socket and the viewers' socket. Both are
// checked here (licence, Origin, ids) before anything is upgraded, then handed to the overlay's hub.
import { Hono } from 'hono';
import { errorBody } from '../../../shared/protocol/index.js';
import type { AppEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { requireLicence } from '../middleware/licence.js';
import { deriveSubdomain } from '../tunnels/subdomain.js';
import { relayMediaRoutes } from './media.js';
import { hubOf, OVERLAY_ID, RELAY_HEADER, SUBDOMAIN } from './names.js';
import { relayPageRoutes } from './page.js';

export const relayRoutes = new Hono<AppEnv>();

/** The headers of a request, without any internal relay header a client may have put there. */
function forwardedHeaders(incoming: Headers): Headers {
  const headers = new Headers(incoming);
  for (const name of Object.values(RELAY_HEADER)) headers.delete(name);
  return headers;
}

/** 426 for a plain request on a socket route (RFC 9110 §15.5.22: with the protocol to upgrade to). */
function upgradeRequired(): Response {
  return Response.json(errorBody('bad_request', 'This route is a WebSocket: send Upgrade: websocket'), {
    status: 426,
    headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
  });
}

const isUpgrade = (request: Request) => request.headers.get('Upgrade')?.toLowerCase() === 'websocket';

function overlayIdOf(param: string): string {
  if (!OVERLAY_ID.test(param)) throw new ApiError('not_found', 'No such overlay (ids are lowercase UUIDs)');
  return param;
}

// The daemon's socket for one public overlay: a Premium licence, checked before the upgrade.
relayRoutes.get('/relay/publish/:overlayId', requireLicence({ tier: 'premium' }), async (c) => {
  const overlayId = overlayIdOf(c.req.param('overlayId'));
  if (!isUpgrade(c.req.raw)) return upgradeRequired();
  const claims = c.var.licence;
  // The hub closes the socket at `exp` without tolerance: one already past it is not let in.
  if (claims.exp * 1000 <= Date.now()) throw new ApiError('invalid_token', 'The licence expired');
  const subdomain = await deriveSubdomain(c.env.SUBDOMAIN_SECRET, claims.sub);
  const headers = forwardedHeaders(c.req.raw.headers);
  headers.set(RELAY_HEADER.member, claims.sub);
  headers.set(RELAY_HEADER.subdomain, subdomain);
  headers.set(RELAY_HEADER.licenceExp, String(claims.exp));
  headers.set(RELAY_HEADER.licenceEpoch, String(claims.epoch ?? 1));
  // The publisher it replaces is told where this one connects from (the 4409's reason).
  headers.set(RELAY_HEADER.ip, c.req.header('CF-Connecting-IP') ?? 'unknown');
  return hubOf(c.env, subdomain, overlayId).fetch(new Request(c.req.url, { headers }));
});
relayRoutes.all('/relay/publish/:overlayId', methodNotAllowed('GET'));

// A viewer's socket: from the Gatekeeper's own pages only, to a published overlay.
relayRoutes.get('/v/:subdomain/:overlayId/ws', async (c) => {
  const origin = c.req.header('Origin');
  if (!origin || origin !== new URL(c.env.PUBLIC_BASE_URL).origin) {
    throw new ApiError('forbidden', 'Viewer sockets are opened by the Gatekeeper’s own viewer page');
  }
  const subdomain = c.req.param('subdomain');
  const overlayId = overlayIdOf(c.req.param('overlayId'));
  if (!SUBDOMAIN.test(subdomain)) throw new ApiError('not_found', 'This overlay is not published');
  if (!isUpgrade(c.req.raw)) return upgradeRequired();
  const headers = forwardedHeaders(c.req.raw.headers);
  headers.set(RELAY_HEADER.ip, c.req.header('CF-Connecting-IP') ?? 'unknown');
  return hubOf(c.env, subdomain, overlayId).fetch(new Request(c.req.url, { headers }));
});
relayRoutes.all('/v/:subdomain/:overlayId/ws', methodNotAllowed('GET'));

// The viewer page with its files, and the media of public overlays (page.ts, media.ts).
relayRoutes.route('/', relayPageRoutes());
relayRoutes.route('/', relayMediaRoutes());
