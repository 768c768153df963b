import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG, RemoteConfig } from '../../shared/config.js';
import { parseWith } from '../../shared/protocol/index.js';
import { gatekeeper } from './helpers/gatekeeper.js';

afterEach(async () => {
  await env.GATEKEEPER_KV.delete('config');
  vi.restoreAllMocks();
});

describe('GET /config', () => {
  it('serves the bundled default, cacheable for a minute, with a strong ETag', async () => {
    const res = await gatekeeper('/config');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual(DEFAULT_CONFIG);
    expect(parseWith(RemoteConfig, body).ok).toBe(true);
    expect(res.headers.get('Cache-Control')).toBe('public, max-age=60');
    expect(res.headers.get('ETag')).toMatch(/^"[0-9a-f]{64}"$/);
  });

  it('answers a matching If-None-Match with 304 and no body', async () => {
    const etag = (await gatekeeper('/config')).headers.get('ETag') ?? '';
    for (const ifNoneMatch of [etag, `"other", ${etag}`, `W/${etag}`]) {
      const res = await gatekeeper('/config', { headers: { 'If-None-Match': ifNoneMatch } });
      expect(res.status).toBe(304);
      expect(await res.text()).toBe('');
      expect(res.headers.get('ETag')).toBe(etag);
      expect(res.headers.get('Cache-Control')).toBe('public, max-age=60');
    }
    const stale = await gatekeeper('/config', { headers: { 'If-None-Match': '"stale"' } });
    expect(stale.status).toBe(200);
  });

  it('serves the operator config from KV, with a different ETag', async () => {
    const defaultTag = (await gatekeeper('/config')).headers.get('ETag');
    const custom = {
      ...DEFAULT_CONFIG,
      version: 2,
      grace: { hours: 24 },
      membership: { tiers: { '123': 'premium' } },
      newFeature: { enabled: true },
    };
    await env.GATEKEEPER_KV.put('config', JSON.stringify(custom));
    const res = await gatekeeper('/config');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(custom);
    expect(res.headers.get('ETag')).not.toBe(defaultTag);
    const revalidated = await gatekeeper('/config', { headers: { 'If-None-Match': defaultTag ?? '' } });
    expect(revalidated.status).toBe(200);
  });

  it("serves the operator's platform credentials for daemons without their own", async () => {
    const custom = {
      ...DEFAULT_CONFIG,
      version: 3,
      platforms: { twitch: { client_id: 'abc123clientid' }, youtube: { api_key: 'AIzaSyExampleKey_1' } },
    };
    await env.GATEKEEPER_KV.put('config', JSON.stringify(custom));
    const body = await (await gatekeeper('/config')).json();
    expect(body).toEqual(custom);
    const parsed = parseWith(RemoteConfig, body);
    expect(parsed.ok && parsed.value.platforms?.twitch?.client_id).toBe('abc123clientid');
  });

  it('names the premium page "See Premium" opens: upgrade.pageUrl, else a url that is a page, never a home page', async () => {
    // The bundled default names only the membership platform's home page: no page is served.
    const byDefault = (await (await gatekeeper('/config')).json()) as RemoteConfig;
    expect(byDefault.upgrade.pageUrl).toBeUndefined();

    const page = 'https://www.patreon.com/c/overlay-daemon/membership';
    await env.GATEKEEPER_KV.put(
      'config',
      JSON.stringify({ ...DEFAULT_CONFIG, upgrade: { ...DEFAULT_CONFIG.upgrade, pageUrl: page } }),
    );
    expect(((await (await gatekeeper('/config')).json()) as RemoteConfig).upgrade).toEqual({
      ...DEFAULT_CONFIG.upgrade,
      pageUrl: page,
    });

    // An operator config written before the field: its url names the page, so it is the page.
    const older = 'https://www.patreon.com/my-creator';
    await env.GATEKEEPER_KV.put(
      'config',
      JSON.stringify({ ...DEFAULT_CONFIG, upgrade: { ...DEFAULT_CONFIG.upgrade, url: older } }),
    );
    const served = (await (await gatekeeper('/config')).json()) as RemoteConfig;
    expect(served.upgrade).toMatchObject({ url: older, pageUrl: older });
    expect(parseWith(RemoteConfig, served).ok).toBe(true);
  });

  it('serves the default for a premium page that is not an http(s) URL', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    await env.GATEKEEPER_KV.put(
      'config',
      JSON.stringify({
        ...DEFAULT_CONFIG,
        upgrade: { ...DEFAULT_CONFIG.upgrade, pageUrl: 'javascript:alert(1)' },
      }),
    );
    expect(await (await gatekeeper('/config')).json()).toEqual(DEFAULT_CONFIG);
    expect(logged).toHaveBeenCalledWith(expect.stringContaining('not a valid remote configuration'));
  });

  it.each([
    [
      'a Twitch client id that is empty',
      JSON.stringify({ ...DEFAULT_CONFIG, platforms: { twitch: { client_id: '' } } }),
    ],
    ['not JSON', '{version: 2'],
    ['missing tiers', JSON.stringify({ ...DEFAULT_CONFIG, tiers: undefined })],
    ['an unknown tier value', JSON.stringify({ ...DEFAULT_CONFIG, membership: { tiers: { '1': 'gold' } } })],
  ])('logs a KV config that is %s and serves the default', async (_label, text) => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    await env.GATEKEEPER_KV.put('config', text);
    const res = await gatekeeper('/config');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(DEFAULT_CONFIG);
    expect(logged).toHaveBeenCalledWith(expect.stringContaining('not a valid remote configuration'));
  });
});
