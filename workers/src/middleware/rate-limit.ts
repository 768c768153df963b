// Per-client-IP rate limit on a group of routes (decisions §1: 429 `rate_limited` with Retry-After).
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env.js';
import { ApiError } from '../errors.js';

/** Must match `simple.period` of the `RATE_LIMITER` and `VIEWER_RATE_LIMITER` bindings in wrangler.toml. */
const RATE_LIMIT_PERIOD_SECONDS = 60;

/**
 * Counts requests per `CF-Connecting-IP` (set by Cloudflare's edge on every request; the Worker is
 * never reached without it in production) under a `scope`, so login attempts do not use up the
 * allowance for validations or tunnels. The binding's window is at most one period long, so
 * `Retry-After` is that period.
 */
export function rateLimit(scope: string, limiter: 'RATE_LIMITER' | 'VIEWER_RATE_LIMITER' = 'RATE_LIMITER') {
  if (!/^[a-z-]+$/.test(scope)) throw new Error(`rate limit scope must be a lowercase word: ${scope}`);
  return createMiddleware<AppEnv>(async (c, next) => {
    const ip = c.req.header('CF-Connecting-IP')?.trim() || 'unknown';
    let allowed = true;
    try {
      ({ success: allowed } = await c.env[limiter].limit({ key: `${scope}:${ip}` }));
    } catch (err) {
      // A limiter outage must not take the service down with it: let the request through.
      console.error('rate limiter failed', err);
    }
    if (!allowed) {
      throw new ApiError('rate_limited', 'Too many requests; try again later', {
        'Retry-After': String(RATE_LIMIT_PERIOD_SECONDS),
      });
    }
    await next();
  });
}
