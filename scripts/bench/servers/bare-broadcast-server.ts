// Bench child, the fan-out baseline: a bare `ws` server and a bare node:http POST endpoint that broadcasts the body.
//
// It answers the same client flow as the daemon, with nothing else: GET /overlay/<id> returns a tiny
// page with a token, the WebSocket `init` gets an `init` reply, POST /api/events sends
// `{"type":"stream-event","event":<body>}` to every client, POST /api/commands sends
// `{"type":"overlay-command",...<body>}`. No validation, no limits, no routing library.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { serveCommands } from '../ipc.js';

/** The page the event-to-screen baseline loads: append the alert on a gift, clear it on `reset`. */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>bare</title>
<script>window.__APP_TOKEN__="bare";</script></head><body><div id="stage"></div><script>
const stage = document.getElementById('stage');
const ws = new WebSocket('ws://' + location.host);
ws.onopen = () => ws.send(JSON.stringify({ action: 'init', overlayId: 'bare', token: 'bare' }));
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  if (m.type === 'init') document.body.dataset.connection = 'open';
  else if (m.type === 'stream-event' && m.event.type === 'gift') {
    const d = document.createElement('div');
    d.dataset.alert = '';
    d.textContent = m.event.user.nickname + ' sent ' + m.event.data.repeatCount + ' × ' + m.event.data.giftName;
    stage.replaceChildren(d);
  } else if (m.type === 'overlay-command' && m.command === 'reset') stage.replaceChildren();
};
</script></body></html>`;

const INIT_REPLY = JSON.stringify({
  type: 'init',
  overlay: { name: 'bare', width: 1920, height: 1080 },
  widgets: [],
});

const subscribed = new Set<WebSocket>();

function broadcast(text: string): void {
  for (const ws of subscribed) ws.send(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const server = createServer(async (req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/overlay/')) {
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': Buffer.byteLength(PAGE),
    });
    res.end(PAGE);
    return;
  }
  if (req.method === 'POST' && req.url === '/api/events') {
    const body = await readBody(req);
    broadcast(`{"type":"stream-event","event":${body}}`);
    res.writeHead(202, { 'Content-Type': 'application/json' });
    res.end('{"accepted":true}');
    return;
  }
  if (req.method === 'POST' && req.url === '/api/commands') {
    const body = await readBody(req);
    broadcast(`{"type":"overlay-command",${body.slice(1)}`);
    res.writeHead(202, { 'Content-Type': 'application/json' });
    res.end('{"delivered":1}');
    return;
  }
  res.writeHead(404);
  res.end();
});

const wss = new WebSocketServer({ server });
wss.on('connection', (ws) => {
  ws.once('message', () => {
    subscribed.add(ws);
    ws.send(INIT_REPLY);
  });
  ws.on('close', () => subscribed.delete(ws));
  ws.on('error', () => {});
});

server.listen(0, '127.0.0.1', () => {
  serveCommands(
    () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
