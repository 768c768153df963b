// Placeholder: a local fake that speaks the real API's HTTP shapes (filled in by its feature).
import { type FakeServer, listenLoopback, sendJson } from './listen.js';

export function startFakeCloudflare(port = 0): Promise<FakeServer> {
  return listenLoopback((_req, res) => sendJson(res, 404, { error: 'not implemented' }), port);
}
