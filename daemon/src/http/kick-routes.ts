// Linking Kick from the dashboard's Sources view: POST starts it (a URL to open on Kick), GET says whether
// Kick is linked and how the events feed stands, DELETE unlinks. Control API: admin key, local only.
import type { Polka } from 'polka';
import type { KickConnectStart, KickLinkState } from '../../../shared/protocol/control-api.js';
import type { KickEdgeFeed, KickLinkFailure } from '../sources/kick/edge-events.js';
import { sendError, sendJson, sendNoContent } from './responses.js';

export const KICK_SIGN_IN_NEEDED =
  'Connecting Kick needs a sign-in: run "overlay-daemon login" (or sign in from the dashboard), then connect Kick';

/** The Gatekeeper's refusal or silence, in words. */
function failed(res: Parameters<typeof sendError>[0], what: string, failure: KickLinkFailure): void {
  if (failure.kind === 'http' && (failure.status === 401 || failure.status === 403))
    sendError(res, 'forbidden', `the Gatekeeper refused the licence to ${what}: ${failure.message}`);
  else sendError(res, 'upstream_error', `the Gatekeeper could not ${what}: ${failure.message}`);
}

export function mountKickRoutes(app: Polka, feed: KickEdgeFeed | undefined): void {
  const path = '/api/sources/kick/connect';
  app.get(path, async (_req, res) => {
    const token = feed?.token();
    if (!feed || !token)
      return sendJson(res, 200, {
        connected: false,
        eventsConnected: false,
        events: feed?.describe() ?? 'events: this daemon runs without the Gatekeeper',
      } satisfies KickLinkState);
    const answer = await feed.link.status(token);
    if (!answer.ok) return failed(res, 'say whether Kick is connected', answer);
    // Linked meanwhile (the page on Kick was just allowed): the feed opens now rather than at its next look.
    if (answer.value.connected) feed.recheck();
    sendJson(res, 200, {
      connected: answer.value.connected,
      ...(answer.value.channel !== undefined ? { channel: answer.value.channel } : {}),
      eventsConnected: feed.status().state === 'connected',
      events: feed.describe(),
    } satisfies KickLinkState);
  });
  app.post(path, async (_req, res) => {
    if (!feed) return sendError(res, 'unavailable', 'this daemon runs without the Gatekeeper');
    const token = feed.token();
    if (!token) return sendError(res, 'forbidden', KICK_SIGN_IN_NEEDED);
    const answer = await feed.link.connect(token);
    if (!answer.ok) return failed(res, 'start connecting Kick', answer);
    sendJson(res, 200, { url: answer.value.url } satisfies KickConnectStart);
  });
  app.delete(path, async (_req, res) => {
    if (!feed) return sendError(res, 'unavailable', 'this daemon runs without the Gatekeeper');
    const token = feed.token();
    if (!token) return sendError(res, 'forbidden', KICK_SIGN_IN_NEEDED);
    const answer = await feed.link.disconnect(token);
    if (!answer.ok) return failed(res, 'disconnect Kick', answer);
    feed.unlinked();
    sendNoContent(res);
  });
}
