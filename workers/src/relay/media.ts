// Media of public overlays in R2 (binding RELAY_MEDIA), content-addressed by SHA-256. The daemon uploads
// each file a public overlay references once (`HEAD`, then `PUT /relay/media/<sha256>.<ext>` with its
// Premium licence); viewers fetch it at `/v/<subdomain>/<overlayId>/assets/<sha256>.<ext>` while the
// overlay is published. R2 key: `<subdomain>/<sha256>.<ext>`.
import { Hono } from 'hono';
import { lookup } from 'mrmime';
import { RELAY_LIMITS, RELAY_MEDIA_NAME } from '../../../shared/protocol/relay.js';
import type { AppEnv, GatekeeperEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { limitBody } from '../middleware/body-limit.js';
import { requireLicence } from '../middleware/licence.js';
import { deriveSubdomain } from '../tunnels/subdomain.js';
import { reserveMemberMedia } from './media-quota.js';
import { hubPublished, type PublishedCheck, requirePublished } from './page.js';

const MIB = 1024 * 1024;
/** Viewers keep a file for a year: its name is its hash, so it never changes. */
const MEDIA_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** A media file opened by itself (an SVG, say) runs nothing in the Gatekeeper's origin. */
const MEDIA_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/** The content type of a media name, from its extension. */
export function mediaContentType(name: string): string {
  return lookup(name.slice(name.lastIndexOf('.') + 1)) ?? 'application/octet-stream';
}

function checkedName(name: string): string {
  if (!RELAY_MEDIA_NAME.test(name)) {
    throw new ApiError('bad_request', 'name: must be <sha256 of the file, lowercase hex>.<extension>');
  }
  return name;
}

async function sha256Hex(bytes: ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The member's R2 key of a media name. */
async function mediaKey(env: GatekeeperEnv, userId: string, name: string): Promise<string> {
  return `${await deriveSubdomain(env.SUBDOMAIN_SECRET, userId)}/${name}`;
}

/**
 * `PUT /relay/media/<name>` once the licence and the body limit passed: 200 when the member already has
 * the file (the body is not needed), else the body's SHA-256 must be the name, the member's quota must
 * hold it, and it is stored: 201.
 */
async function uploadMedia(
  env: GatekeeperEnv,
  userId: string,
  name: string,
  request: Request,
): Promise<Response> {
  const key = await mediaKey(env, userId, name);
  if (await env.RELAY_MEDIA.head(key)) {
    await request.body?.cancel().catch(() => {});
    return new Response(null, { status: 200 });
  }
  const body = await request.arrayBuffer();
  // A body announced small but longer never gets here (the runtime holds it to its Content-Length).
  if (body.byteLength > RELAY_LIMITS.mediaFileBytes) {
    throw new ApiError(
      'payload_too_large',
      `A media file must be at most ${RELAY_LIMITS.mediaFileBytes / MIB} MiB`,
    );
  }
  const hash = await sha256Hex(body);
  if (`${hash}.${name.slice(65)}` !== name) {
    throw new ApiError('bad_request', `body: its SHA-256 is ${hash}, not the name's ${name.slice(0, 64)}`);
  }
  const reserved = await reserveMemberMedia(
    env,
    userId,
    name,
    body.byteLength,
    RELAY_LIMITS.mediaMemberBytes,
  );
  if (!reserved.ok) {
    throw new ApiError(
      'payload_too_large',
      `Public overlays' media may take at most ${RELAY_LIMITS.mediaMemberBytes / MIB} MiB per member; ` +
        `${(reserved.used / MIB).toFixed(1)} MiB are used`,
    );
  }
  // The name is the body's hash, so whatever is under the key is this body: a stored file is never
  // replaced (R2 checks the hash on its side too).
  const stored = await env.RELAY_MEDIA.put(key, body, {
    sha256: hash,
    httpMetadata: { contentType: mediaContentType(name), cacheControl: MEDIA_CACHE_CONTROL },
    onlyIf: { etagDoesNotMatch: '*' },
  });
  return new Response(null, { status: stored ? 201 : 200 });
}

/** `GET /v/<subdomain>/<overlayId>/assets/<name>` once the overlay is published: the file, 304 or a range. */
async function serveMedia(
  env: GatekeeperEnv,
  subdomain: string,
  name: string,
  request: Request,
): Promise<Response> {
  const object = await env.RELAY_MEDIA.get(`${subdomain}/${name}`, {
    onlyIf: request.headers,
    range: request.headers,
  });
  if (!object) throw new ApiError('not_found', 'No such file');
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  headers.set('ETag', object.httpEtag);
  headers.set('Cache-Control', MEDIA_CACHE_CONTROL);
  headers.set('Content-Security-Policy', MEDIA_CSP);
  headers.set('X-Content-Type-Options', 'nosniff');
  headers.set('Accept-Ranges', 'bytes');
  if (!('body' in object)) return new Response(null, { status: 304, headers });
  const range = request.headers.has('range') ? object.range : undefined;
  if (range && 'offset' in range && range.offset !== undefined) {
    const length = range.length ?? object.size - range.offset;
    headers.set('Content-Range', `bytes ${range.offset}-${range.offset + length - 1}/${object.size}`);
    headers.set('Content-Length', String(length));
    return new Response(object.body, { status: 206, headers });
  }
  headers.set('Content-Length', String(object.size));
  return new Response(object.body, { headers });
}

/** The media routes. `published` is the hub's answer; tests may stand in for it. */
export function relayMediaRoutes(options: { published?: PublishedCheck } = {}): Hono<AppEnv> {
  const published = options.published ?? hubPublished;
  const routes = new Hono<AppEnv>();
  const premium = requireLicence({ tier: 'premium' });

  // Hono answers HEAD with the GET route (without its body): GET itself is not an upload method.
  const notAnUpload = methodNotAllowed('HEAD, PUT');
  routes.get(
    '/relay/media/:name',
    async (c, next) => (c.req.method === 'HEAD' ? next() : notAnUpload()),
    premium,
    async (c) => {
      const key = await mediaKey(c.env, c.var.licence.sub, checkedName(c.req.param('name')));
      return new Response(null, { status: (await c.env.RELAY_MEDIA.head(key)) ? 200 : 404 });
    },
  );
  routes.put(
    '/relay/media/:name',
    premium,
    async (c, next) => {
      checkedName(c.req.param('name'));
      await next();
    },
    limitBody(RELAY_LIMITS.mediaFileBytes),
    (c) => uploadMedia(c.env, c.var.licence.sub, c.req.param('name'), c.req.raw),
  );
  routes.all('/relay/media/:name', notAnUpload);

  routes.get('/v/:subdomain/:overlayId/assets/:name', async (c) => {
    const { subdomain, overlayId, name } = c.req.param();
    if (!RELAY_MEDIA_NAME.test(name)) throw new ApiError('not_found', 'No such file');
    await requirePublished(c.env, published, subdomain, overlayId);
    return serveMedia(c.env, subdomain, name, c.req.raw);
  });
  routes.all('/v/:subdomain/:overlayId/assets/:name', methodNotAllowed('GET'));
  return routes;
}
