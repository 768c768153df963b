// Kick through the Gatekeeper: the member's account link (OAuth 2.1 with PKCE), chat sending, and the
// webhook and events routes. Mounted at `/kick` in index.ts.
import { Hono } from 'hono';
import type { AppEnv } from '../env.js';

export const kickRoutes = new Hono<AppEnv>();
