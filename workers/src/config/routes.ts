// GET /config: the remote configuration, cacheable for a minute and revalidated by ETag (decisions §2).
import { Hono } from 'hono';
import { etag } from 'hono/etag';
import { premiumPageUrl } from '../../../shared/config.js';
import type { AppEnv } from '../env.js';
import { methodNotAllowed } from '../errors.js';
import { loadRemoteConfig } from './remote-config.js';

export const configRoutes = new Hono<AppEnv>();

// A strong ETag: the SHA-256 of the exact body bytes, so equal bodies (and only those) share a tag.
configRoutes.use('/config', etag({ generateDigest: (body) => crypto.subtle.digest('SHA-256', body) }));

configRoutes.get('/config', async (c) => {
  c.header('Cache-Control', 'public, max-age=60');
  const config = await loadRemoteConfig(c.env);
  // The premium page is served resolved, so every client links where the operator meant (or nowhere).
  const pageUrl = premiumPageUrl(config);
  const { pageUrl: _, ...upgrade } = config.upgrade;
  return c.json({ ...config, upgrade: pageUrl ? { ...upgrade, pageUrl } : upgrade });
});
configRoutes.all('/config', methodNotAllowed('GET'));
