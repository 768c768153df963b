// The viewer page and media routes inside workerd with a stand-in for the hub's `published()`: the
// suites decide which overlays are published without running a publisher.
import { env } from 'cloudflare:workers';
import { Hono } from 'hono';
import type { AppEnv } from '../../../workers/src/env.js';
import { ApiError, errorResponse } from '../../../workers/src/errors.js';
import { relayMediaRoutes } from '../../../workers/src/relay/media.js';
import { relayPageRoutes } from '../../../workers/src/relay/page.js';
import { deriveSubdomain } from '../../../workers/src/tunnels/subdomain.js';

export const BASE = 'http://gatekeeper.test';

/** Which overlays the stand-in hub calls published, by `<subdomain>/<overlayId>`. */
export const publishedOverlays = new Set<string>();

export function publish(subdomain: string, overlayId: string): void {
  publishedOverlays.add(`${subdomain}/${overlayId}`);
}
export function unpublish(subdomain: string, overlayId: string): void {
  publishedOverlays.delete(`${subdomain}/${overlayId}`);
}

const app = new Hono<AppEnv>();
const published = async (_env: unknown, subdomain: string, overlayId: string) =>
  publishedOverlays.has(`${subdomain}/${overlayId}`);
app.route('/', relayPageRoutes({ published }));
app.route('/', relayMediaRoutes({ published }));
// As the Worker's own app answers errors (workers/src/index.ts).
app.notFound(() => errorResponse(new ApiError('not_found', 'No such route')));
app.onError((err) => {
  if (err instanceof ApiError) return errorResponse(err);
  console.error('unhandled error', err);
  return errorResponse(new ApiError('internal', 'Internal error'));
});

/** A request to the relay routes as the Worker gets it. */
export function relay(path: string, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(app.fetch(new Request(`${BASE}${path}`, init), env));
}

export const subdomainOf = (userId: string) => deriveSubdomain(env.SUBDOMAIN_SECRET, userId);

/** An error response with the common body, this status and this code; returns its message. */
export async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: body.error.code, message: body.error.message };
}
