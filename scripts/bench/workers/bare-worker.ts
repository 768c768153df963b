// The Gatekeeper baseline: bare Hono routes answering the same paths with fixed JSON (and, on the socket
// routes, a WebSocket that sends one fixed frame), no auth, no storage, no crypto.
import { Hono } from 'hono';

const app = new Hono();

// workerd's socket pair, declared here: this file is type-checked with the scripts, which do not load the
// Workers types.
interface WorkerSocket {
  accept(): void;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(
    type: 'message' | 'close',
    listener: (event: { code: number }) => void,
    options?: { once: boolean },
  ): void;
}
declare const WebSocketPair: new () => { 0: WorkerSocket; 1: WorkerSocket };

/** A socket accepted here that sends `frame` at once (or on the client's first message) and closes when told. */
function socket(frame: string, on: 'open' | 'message'): Response {
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  if (on === 'open') server.send(frame);
  else server.addEventListener('message', () => server.send(frame), { once: true });
  server.addEventListener('close', (event) => {
    try {
      server.close(event.code, 'bye');
    } catch {
      // closed already
    }
  });
  return new Response(null, { status: 101, webSocket: client } as ResponseInit);
}

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
app.get('/relay/publish/:overlayId', () =>
  socket(
    JSON.stringify({ type: 'hello', lastSeq: null, viewerUrl: 'https://gatekeeper.bench/v/o-bench/x' }),
    'open',
  ),
);
app.get('/v/:subdomain/:overlayId/ws', () =>
  socket(
    JSON.stringify({ type: 'init', overlay: { name: 'bench', width: 1920, height: 1080 }, widgets: [] }),
    'message',
  ),
);
app.post('/kick/webhook', async (c) => {
  await c.req.arrayBuffer();
  return c.json({ status: 'stored', seq: 1 });
});

export default app;
