// Linking Kick from the dashboard's Sources view: POST starts it (a URL to open on Kick), GET says whether
// Kick is linked and how the events feed stands, DELETE unlinks. Control API: admin key, local only. GET
// answers from the feed's own state, which looks at the Gatekeeper at most every 10 s however often the
// box asks (the Gatekeeper takes 30 requests a minute).
import type { Polka } from 'polka';
import type { KickConnectStart, KickLinkState } from '../../../shared/protocol/control-api.js';
import type { KickEdgeFeed } from '../sources/kick/edge-events.js';
import type { KickLinkFailure } from '../sources/kick/kick-link.js';
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
    // Linked meanwhile (the page on Kick was just allowed, or `connect kick` in a terminal): the feed looks
    // again now, or once 10 s have passed since the last such look, rather than at its next minute.
    await feed.lookAgain();
    const status = feed.status();
    sendJson(res, 200, {
      connected: status.linked,
      ...(status.channel !== undefined ? { channel: status.channel } : {}),
      eventsConnected: status.state === 'connected',
      events: feed.describe(),
    } satisfies KickLinkState);
  });
  app.post(path, async (_req, res) => {
    if (!feed) return sendError(res, 'unavailable', 'this daemon runs without the Gatekeeper');
    const token = feed.token();
    if (!token) return sendError(res, 'forbidden', KICK_SIGN_IN_NEEDED);
    const answer = await feed.link.connect(token);
    if (!answer.ok) return failed(res, 'start connecting Kick', answer);
    // A link under way: the box's next question may look at the Gatekeeper at once.
    feed.linkChanging();
    sendJson(res, 200, { url: answer.value.url } satisfies KickConnectStart);
  });
  app.delete(path, async (_req, res) => {
    if (!feed) return sendError(res, 'unavailable', 'this daemon runs without the Gatekeeper');
    const token = feed.token();
    if (!token) return sendError(res, 'forbidden', KICK_SIGN_IN_NEEDED);
    const answer = await feed.link.disconnect(token);
    if (!answer.ok) return failed(res, 'disconnect Kick', answer);
    feed.linkChanging();
    feed.unlinked();
    sendNoContent(res);
  });
}
