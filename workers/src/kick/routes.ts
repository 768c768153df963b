// Kick through the Gatekeeper: the member's account link (OAuth 2.1 with PKCE), chat sending, and the
// webhook and events routes. Mounted at `/kick` in index.ts.
import { Hono } from 'hono';
import { KickChatRequest, type KickStatus, parseJsonWith } from '../../../shared/protocol/index.js';
import type { AppEnv, GatekeeperEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { limitBody } from '../middleware/body-limit.js';
import { requireLicence } from '../middleware/licence.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { exchangeCode, KickApiError, ownChannel } from './api.js';
import { sendKickChat } from './chat.js';
import { kickEventsRoutes } from './events-socket.js';
import { kickRedirectUri, startKickLink, takeKickState } from './oauth.js';
import { ensureKickSubscriptions, unlinkKick } from './subscriptions.js';
import { readKickLink, saveKickLink, withKickToken } from './tokens.js';
import { kickWebhookRoutes } from './webhook.js';

export const kickRoutes = new Hono<AppEnv>();

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);

/** The page the member's browser lands on after Kick: plain words, nothing to run, not kept by caches. */
function page(status: number, title: string, text: string): Response {
  const body = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><body style="font-family:system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em">
<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  return new Response(body, {
    status,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      'Referrer-Policy': 'no-referrer',
    },
  });
}

// The account routes are limited per client address like the other groups. The webhook is not (Kick sends
// every channel's deliveries from a few addresses), nor chat, which Kick limits itself and the daemon paces.
kickRoutes.use('/connect', rateLimit('kick'));
kickRoutes.use('/callback', rateLimit('kick'));
kickRoutes.use('/status', rateLimit('kick'));

// Any tier may link Kick: → {"url"} of Kick's consent page, with PKCE S256 and a state bound to the member.
kickRoutes.post('/connect', requireLicence(), async (c) => {
  const url = await startKickLink(c.env, c.var.licence.sub);
  c.header('Cache-Control', 'no-store');
  return c.json({ url });
});

kickRoutes.get('/callback', async (c) => {
  const state = c.req.query('state');
  const taken = state ? await takeKickState(c.env, state) : null;
  if (!taken) {
    return page(
      400,
      'Kick was not connected',
      'This link is unknown, used or expired. Start again from the app.',
    );
  }
  if (c.req.query('error') !== undefined) {
    return page(
      400,
      'Kick was not connected',
      'Kick says access was not allowed. Start again from the app to connect.',
    );
  }
  const code = c.req.query('code');
  if (!code) return page(400, 'Kick was not connected', 'Kick sent no code. Start again from the app.');
  return finishLink(c.env, taken.member, code, taken.verifier);
});

async function finishLink(
  env: GatekeeperEnv,
  member: string,
  code: string,
  verifier: string,
): Promise<Response> {
  let link: Awaited<ReturnType<typeof saveKickLink>>;
  try {
    const tokens = await exchangeCode(env, code, verifier, kickRedirectUri(env));
    const channel = await ownChannel(env, tokens.accessToken);
    link = await saveKickLink(env, member, channel, tokens);
  } catch (err) {
    if (!(err instanceof KickApiError)) throw err;
    console.error(`kick: linking member ${member} failed: ${err.message}`);
    return err.grantRefused
      ? page(400, 'Kick was not connected', 'Kick did not accept this sign-in. Start again from the app.')
      : page(502, 'Kick was not connected', 'Kick did not answer as expected. Try again in a moment.');
  }
  try {
    await withKickToken(
      env,
      member,
      (token) => ensureKickSubscriptions(env, token, link.broadcaster_user_id),
      link,
    );
  } catch (err) {
    if (!(err instanceof KickApiError) && !(err instanceof ApiError)) throw err;
    console.error(`kick: subscribing channel ${link.slug} of member ${member} failed: ${err.message}`);
    return page(
      502,
      'Kick is connected, its events are not yet',
      `Your Kick channel ${link.slug} is linked, but Kick did not accept the event subscriptions. They are tried again every day; connecting again tries now.`,
    );
  }
  return page(
    200,
    'Kick is connected',
    `Your Kick channel ${link.slug} is connected. You can close this page.`,
  );
}

kickRoutes.get('/status', requireLicence(), async (c) => {
  const link = await readKickLink(c.env, c.var.licence.sub);
  const status: KickStatus =
    link && link.refresh_token !== null
      ? { connected: true, channel: link.slug, since: new Date(link.connected_at).toISOString() }
      : { connected: false };
  c.header('Cache-Control', 'no-store');
  return c.json(status);
});

/**
 * Unlinks: the channel's subscriptions removed and both tokens revoked at Kick, then the link forgotten.
 * What Kick fails to do is logged; the link is forgotten all the same (the member asked for it).
 */
kickRoutes.delete('/connect', requireLicence(), async (c) => {
  const member = c.var.licence.sub;
  const link = await readKickLink(c.env, member);
  if (link) await unlinkKick(c.env, member, link);
  return c.body(null, 204);
});

// Chat as the member to their own channel (docs/kick.md): → {"sent": true, "messageId"?}.
kickRoutes.post('/chat', limitBody(), requireLicence(), async (c) => {
  const body = parseJsonWith(KickChatRequest, await c.req.text());
  if (!body.ok) {
    throw new ApiError(
      'bad_request',
      body.field ? body.error : `${body.error}; expected {"content": "<text>"}`,
    );
  }
  const answer = await sendKickChat(c.env, c.var.licence.sub, body.value.content);
  c.header('Cache-Control', 'no-store');
  return c.json(answer);
});

kickRoutes.all('/connect', methodNotAllowed('POST, DELETE'));
kickRoutes.all('/callback', methodNotAllowed('GET'));
kickRoutes.all('/status', methodNotAllowed('GET'));
kickRoutes.all('/chat', methodNotAllowed('POST'));

// Kick's signed webhooks, and the daemon's feed of the events they carried (webhook.ts, events-socket.ts).
kickRoutes.route('/', kickWebhookRoutes);
kickRoutes.route('/', kickEventsRoutes);
