// The Twitch sign-in of the Sources view: GET its state, POST to start the device code
// flow (a code and a link to open), DELETE to revoke and forget it. Control API: admin key, local only.
import type { Polka } from 'polka';
import { errorMessage } from '../errors.js';
import { NoTwitchClientId, type TwitchSignInService } from '../sources/twitch/sign-in.js';
import { sendError, sendJson, sendNoContent } from './responses.js';

export function mountSourceRoutes(app: Polka, signIn: TwitchSignInService): void {
  app.get('/api/sources/twitch/sign-in', async (_req, res) => sendJson(res, 200, await signIn.state()));
  // Where the Twitch client id and the YouTube key in force come from (settings, the Gatekeeper's config,
  // or none yet because the config is on its way or out of reach): the Sources view says it in words.
  app.get('/api/sources/credentials', (_req, res) => {
    const report = signIn.credentials();
    if (report) sendJson(res, 200, report);
    else sendError(res, 'not_found', 'this daemon does not report its credentials');
  });
  app.post('/api/sources/twitch/sign-in', async (_req, res) => {
    try {
      sendJson(res, 202, await signIn.begin());
    } catch (err) {
      if (err instanceof NoTwitchClientId) sendError(res, 'unavailable', err.message);
      else sendError(res, 'upstream_error', `Twitch did not start the sign-in: ${errorMessage(err)}`);
    }
  });
  app.delete('/api/sources/twitch/sign-in', async (_req, res) => {
    await signIn.signOut();
    sendNoContent(res);
  });
}
