import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json';
import { Health, parseWith } from '../../shared/protocol/index.js';

describe('GET /health inside workerd', () => {
  it('reports ok and the package version', async () => {
    const res = await exports.default.fetch('http://gatekeeper.test/health');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(parseWith(Health, body).ok).toBe(true);
    expect(body).toEqual({ status: 'ok', version: pkg.version });
  });

  it('answers other methods with 405 method_not_allowed and Allow: GET', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await exports.default.fetch('http://gatekeeper.test/health', { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('Allow')).toBe('GET');
      expect(await res.json()).toEqual({
        error: { code: 'method_not_allowed', message: expect.any(String) },
      });
    }
  });

  it('answers an unknown route with the common error body', async () => {
    const res = await exports.default.fetch('http://gatekeeper.test/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });
});
