// The viewer page of a public overlay inside workerd: 404 unless published, the compiled page with its
// globals and headers, and the page's own files from the static assets.
import { env } from 'cloudflare:workers';
import { Hono } from 'hono';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppEnv } from '../../workers/src/env.js';
import { ApiError, errorResponse } from '../../workers/src/errors.js';
import { relayPageRoutes } from '../../workers/src/relay/page.js';
import { gatekeeper, WARM_UP_TIMEOUT_MS, warmUpOneTimeStore } from './helpers/gatekeeper.js';
import { BASE, errorOf, publish, relay, subdomainOf, unpublish } from './helpers/relay-app.js';
import { hubStub, member, publisher, snapshot } from './helpers/relay-sockets.js';

const newOverlayId = () => crypto.randomUUID();

async function publishedOverlay(label: string): Promise<{ subdomain: string; overlayId: string }> {
  const subdomain = await subdomainOf(`${label}-${crypto.randomUUID()}`);
  const overlayId = newOverlayId();
  publish(subdomain, overlayId);
  return { subdomain, overlayId };
}

async function sha256Base64(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...digest));
}

/** The page's own files, as its HTML names them. */
function pageFiles(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/overlay-assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
}

describe('GET /v/<subdomain>/<overlayId>: not found', () => {
  it('answers 404 not_found while the overlay is not published', async () => {
    const { subdomain, overlayId } = await publishedOverlay('unpublished');
    unpublish(subdomain, overlayId);
    const res = await relay(`/v/${subdomain}/${overlayId}`);
    expect(await errorOf(res)).toMatchObject({ status: 404, code: 'not_found' });
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
  });

  it('answers 404 when the hub holds nothing for the overlay (no stand-in)', async () => {
    const routes = new Hono<AppEnv>().route('/', relayPageRoutes());
    routes.onError((err) =>
      err instanceof ApiError ? errorResponse(err) : new Response(String(err), { status: 500 }),
    );
    const subdomain = await subdomainOf(`never-${crypto.randomUUID()}`);
    const res = await routes.fetch(new Request(`${BASE}/v/${subdomain}/${newOverlayId()}`), env);
    expect(await errorOf(res)).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('answers 404 for an overlay id that is not a lowercase UUID, even one of a published overlay', async () => {
    const { subdomain, overlayId } = await publishedOverlay('bad-id');
    const upper = overlayId.toUpperCase();
    publish(subdomain, upper);
    for (const id of [upper, 'not-a-uuid', `${overlayId}0`, overlayId.replace(/-/g, '')]) {
      const res = await relay(`/v/${subdomain}/${id}`);
      expect(await errorOf(res), id).toMatchObject({ status: 404, code: 'not_found' });
    }
  });

  it('answers 404 for a malformed subdomain', async () => {
    const overlayId = newOverlayId();
    for (const subdomain of [
      'o-ABCDEFGHIJKLMNOP',
      'o-abc',
      'x-abcdefghijklmnop',
      'o-abcdefghijklmnop1',
      'o-abcdefghijklmno0',
    ]) {
      publish(subdomain, overlayId);
      const res = await relay(`/v/${subdomain}/${overlayId}`);
      expect(await errorOf(res), subdomain).toMatchObject({ status: 404, code: 'not_found' });
    }
  });

  it('answers other methods with 405 and Allow: GET', async () => {
    const { subdomain, overlayId } = await publishedOverlay('method');
    const res = await relay(`/v/${subdomain}/${overlayId}`, { method: 'POST' });
    expect(await errorOf(res)).toMatchObject({ status: 405, code: 'method_not_allowed' });
    expect(res.headers.get('Allow')).toBe('GET');
  });
});

describe('GET /v/<subdomain>/<overlayId>: the viewer page', () => {
  it('is the compiled overlay page with the overlay id and relay socket injected first in <head>, and no token', async () => {
    const { subdomain, overlayId } = await publishedOverlay('page');
    const res = await relay(`/v/${subdomain}/${overlayId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    const globals = `window.__APP_OVERLAY_ID__="${overlayId}";window.__APP_RELAY__="/v/${subdomain}/${overlayId}/ws";`;
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toMatch(
      new RegExp(`<head>\\s*<script>${globals.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}</script>`),
    );
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).not.toContain('__APP_TOKEN__');
    expect(html).not.toContain('__APP_PORT__');
    // The same page the daemon serves: its module script and style sheet under /overlay-assets/.
    expect(pageFiles(html).some((f) => f.endsWith('.js'))).toBe(true);
    expect(pageFiles(html).some((f) => f.endsWith('.css'))).toBe(true);
    expect(html).toContain('<div id="stage"');
  });

  it('is never cached, runs only its own scripts and the injected globals (by hash), and is not sniffed', async () => {
    const { subdomain, overlayId } = await publishedOverlay('headers');
    const res = await relay(`/v/${subdomain}/${overlayId}`);
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    const html = await res.text();
    const inline = /<script>(.*?)<\/script>/.exec(html)?.[1] ?? '';
    const csp = res.headers.get('Content-Security-Policy') ?? '';
    const directives = new Map(csp.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'", `'sha256-${await sha256Base64(inline)}'`]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('media-src')).toContain("'self'");
    expect(directives.get('img-src')).toContain("'self'");
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
  });

  it('escapes nothing it did not have to: the globals parse back to the ids', async () => {
    const { subdomain, overlayId } = await publishedOverlay('parse');
    const html = await (await relay(`/v/${subdomain}/${overlayId}`)).text();
    const found = /__APP_OVERLAY_ID__=("[^"]*");window\.__APP_RELAY__=("[^"]*");/.exec(html);
    expect(JSON.parse(found?.[1] ?? 'null')).toBe(overlayId);
    expect(JSON.parse(found?.[2] ?? 'null')).toBe(`/v/${subdomain}/${overlayId}/ws`);
  });
});

describe('GET /overlay-assets/*: the page files', () => {
  it('serves every file the page names from the static assets, kept for a year', async () => {
    const { subdomain, overlayId } = await publishedOverlay('files');
    const files = pageFiles(await (await relay(`/v/${subdomain}/${overlayId}`)).text());
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const res = await relay(file);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('Content-Type'), file).toMatch(
        file.endsWith('.js') ? /javascript/ : /text\/css/,
      );
      expect(res.headers.get('Cache-Control'), file).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('X-Content-Type-Options'), file).toBe('nosniff');
      const direct = await env.ASSETS.fetch(`${BASE}${file}`);
      expect(await res.text(), file).toBe(await direct.text());
    }
  });

  it('answers 404 not_found for a file that is not there, and for the bare page', async () => {
    for (const path of [
      '/overlay-assets/assets/missing-00000000.js',
      '/overlay-assets/index.html',
      '/overlay-assets/',
    ]) {
      const res = await relay(path);
      expect(await errorOf(res), path).toMatchObject({ status: 404, code: 'not_found' });
    }
  });

  it('answers other methods with 405', async () => {
    const res = await relay('/overlay-assets/assets/x.js', { method: 'PUT', body: 'x' });
    expect(await errorOf(res)).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });
});

describe('through the Worker and the overlay hub', () => {
  beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);

  it('serves the page while the daemon publishes the overlay, and 404 once it unpublishes', async () => {
    const { token, subdomain } = await member('page-hub');
    const overlayId = newOverlayId();
    const path = `/v/${subdomain}/${overlayId}`;
    expect(await errorOf(await gatekeeper(path))).toMatchObject({ status: 404, code: 'not_found' });

    const { socket } = await publisher(token, overlayId);
    socket.send(snapshot('Live'));
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(true);
    const page = await gatekeeper(path);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`window.__APP_RELAY__="/v/${subdomain}/${overlayId}/ws"`);
    const file = pageFiles(await (await gatekeeper(path)).text())[0] ?? '';
    expect((await gatekeeper(file)).status).toBe(200);

    socket.send({ type: 'unpublish' });
    await expect.poll(() => hubStub(subdomain, overlayId).published()).toBe(false);
    expect(await errorOf(await gatekeeper(path))).toMatchObject({ status: 404, code: 'not_found' });
    socket.close();
  });
});
