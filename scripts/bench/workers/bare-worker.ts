// The Gatekeeper baseline: bare Hono routes answering the same paths with fixed JSON, no auth, no storage, no crypto.
import { Hono } from 'hono';

const app = new Hono();

app.get('/health', (c) => c.json({ status: 'ok', version: '0.0.0' }));
app.post('/validate', (c) =>
  c.json({ token: 'header.payload.signature', tier: 'premium', expires_at: '2030-01-01T00:00:00.000Z' }),
);
app.get('/tunnels/status/:userId', (c) =>
  c.json({
    tunnel_id: '00000000-0000-4000-8000-000000000000',
    subdomain: 'o-bench',
    public_url: 'https://o-bench.overlays.test',
    active: false,
    state: 'provisioned',
    connections: 0,
    created_at: '2030-01-01T00:00:00.000Z',
  }),
);

export default app;
