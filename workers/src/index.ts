// The Gatekeeper Worker: health, remote configuration, membership login, licences and tunnels.
import { Hono } from 'hono';
import type { Health } from '../../shared/protocol/index.js';
import { authRoutes } from './auth/routes.js';
import { configRoutes } from './config/routes.js';
import type { AppEnv, GatekeeperEnv } from './env.js';
import { ApiError, errorResponse, methodNotAllowed } from './errors.js';
import { kickRoutes } from './kick/routes.js';
import { KICK_CRON_SCHEDULE, resubscribeKickChannels } from './kick/subscriptions.js';
import { rateLimit } from './middleware/rate-limit.js';
import { relayRoutes } from './relay/routes.js';
import { sweepLapsedTunnels } from './tunnels/lapse.js';
import { tunnelRoutes } from './tunnels/routes.js';
import { VERSION } from './version.js';

export { KickChannel } from './kick/channel.js';
export { MembershipRecheck } from './member.js';
export { OneTimeStore } from './one-time-store.js';
export { OverlayRelay } from './relay/hub.js';
export { RelayShard } from './relay/shard.js';

export const app = new Hono<AppEnv>();

app.get('/health', (c) => c.json({ status: 'ok', version: VERSION } satisfies Health));
app.all('/health', methodNotAllowed('GET'));
// Each feature folder's routes: the remote configuration; licences (login, renewal, logout, their keys).
app.route('/', configRoutes);
app.route('/', authRoutes);
// Decisions §2: the tunnel endpoints are rate limited per IP too; this must precede their routes.
app.use('/tunnels/*', rateLimit('tunnels'));
app.route('/tunnels', tunnelRoutes);
// The overlay relay: the daemon's publisher sockets and the viewers' (docs/relay.md). Viewer routes are
// public, so they are limited per IP (on a limiter of their own: a page loads its media through them).
app.use('/v/*', rateLimit('viewers', 'VIEWER_RATE_LIMITER'));
app.route('/', relayRoutes);
// Kick: the member's account link, chat sending, Kick's webhooks and the daemon's events socket (docs/kick.md).
app.route('/kick', kickRoutes);

app.notFound(() => errorResponse(new ApiError('not_found', 'No such route')));
app.onError((err) => {
  if (err instanceof ApiError) return errorResponse(err);
  console.error('unhandled error', err);
  return errorResponse(new ApiError('internal', 'Internal error'));
});

export default {
  fetch: app.fetch,
  /**
   * The cron triggers (wrangler.toml `triggers.crons`): every 10 minutes the next linked Kick channels get
   * back the event subscriptions Kick dropped (a pass over every link a day, subscriptions.ts); the
   * daily one sweeps lapsed members' tunnels. Each has an invocation, and so a subrequest budget, of its own.
   */
  async scheduled(controller, env, ctx) {
    if (controller.cron === KICK_CRON_SCHEDULE) {
      ctx.waitUntil(
        resubscribeKickChannels(env).then(
          (r) => {
            if (r.idle) return;
            console.log(
              `kick: ${r.links} linked channel(s) checked, ${r.recreated} subscription(s) re-created, ${r.unlinked} unlinked, ${r.failed} failed${r.truncated ? ' (more left for the next run)' : ' (every link checked for today)'}`,
            );
          },
          (err) => console.error('kick: the subscription check failed', err),
        ),
      );
      return;
    }
    ctx.waitUntil(
      sweepLapsedTunnels(env).then((removed) => console.log(`sweep: ${removed} lapsed tunnel(s) removed`)),
    );
  },
} satisfies ExportedHandler<GatekeeperEnv>;
