import { beforeAll, describe, expect, it } from 'vitest';
import {
  gatekeeper,
  postJson,
  uniqueIp,
  WARM_UP_TIMEOUT_MS,
  warmUpOneTimeStore,
} from './helpers/gatekeeper.js';

// wrangler.toml: 30 requests per 60 s per IP and route group. Requests are sent until one is
// refused; the bound allows for the window turning over once during the loop.
const LIMIT = 30;
const MAX_ATTEMPTS = 2 * LIMIT + 1;

async function untilLimited(
  send: () => Promise<Response>,
): Promise<{ refused: Response | null; sent: number }> {
  for (let sent = 1; sent <= MAX_ATTEMPTS; sent++) {
    const res = await send();
    if (res.status === 429) return { refused: res, sent };
    await res.body?.cancel();
  }
  return { refused: null, sent: MAX_ATTEMPTS };
}

beforeAll(warmUpOneTimeStore, WARM_UP_TIMEOUT_MS);

describe('per-IP rate limits', () => {
  it.each([
    ['/auth/exchange', (ip: string) => postJson('/auth/exchange', { code: 'nope' }, ip)],
    ['/auth/membership', (ip: string) => gatekeeper('/auth/membership', { ip })],
    ['/validate', (ip: string) => gatekeeper('/validate', { method: 'POST', ip })],
    ['/tunnels/*', (ip: string) => gatekeeper('/tunnels/status/someone', { ip })],
  ])(
    'answers 429 rate_limited with Retry-After on %s once an IP exceeds its allowance',
    async (_path, send) => {
      const ip = uniqueIp();
      const { refused, sent } = await untilLimited(() => send(ip));
      expect(refused).not.toBeNull();
      expect(sent).toBeGreaterThan(LIMIT);
      expect(refused?.headers.get('Retry-After')).toBe('60');
      expect(await refused?.json()).toEqual({ error: { code: 'rate_limited', message: expect.any(String) } });
      // Another client is unaffected.
      expect((await send(uniqueIp())).status).not.toBe(429);
    },
  );

  it('counts route groups separately: exhausting /auth/* leaves /validate usable', async () => {
    const ip = uniqueIp();
    const { refused } = await untilLimited(() => postJson('/auth/exchange', { code: 'nope' }, ip));
    expect(refused?.status).toBe(429);
    expect((await gatekeeper('/validate', { method: 'POST', ip })).status).toBe(401);
  });

  it('does not limit /health and /config', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < LIMIT + 5; i++) {
      const res = await gatekeeper(i % 2 ? '/health' : '/config', { ip });
      expect(res.status).toBe(200);
      await res.body?.cancel();
    }
  });
});
