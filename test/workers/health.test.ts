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

  it('answers an unknown route with the common error body', async () => {
    const res = await exports.default.fetch('http://gatekeeper.test/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });
});
