// The Gatekeeper Worker: health, remote configuration, membership login, licences and tunnels.
import { Hono } from 'hono';
import type { Health } from '../../shared/protocol.js';
import type { AppEnv } from './env.js';
import { ApiError, errorResponse } from './errors.js';
import { VERSION } from './version.js';

export const app = new Hono<AppEnv>();

app.get('/health', (c) => c.json({ status: 'ok', version: VERSION } satisfies Health));

app.notFound(() => errorResponse(new ApiError('not_found', 'No such route')));
app.onError((err) => {
  if (err instanceof ApiError) return errorResponse(err);
  console.error('unhandled error', err);
  return errorResponse(new ApiError('internal', 'Internal error'));
});

export default app;
