// --tiktok-sign-key reaches the sign server: tiktok-live-connector sends it with its requests. The sign
// server here is a local stand-in (the library's SIGN_API_URL), set before the library is first loaded.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tiktokConnection } from '../../daemon/src/sources/tiktok/connection.js';
import { waitFor } from '../support/wait.js';

const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
const signServer = createServer((req, res) => {
  seen.push({ url: req.url ?? '', headers: req.headers });
  res.writeHead(500, { 'Content-Type': 'application/json' });
  res.end('{"message":"stand-in"}');
});

beforeAll(async () => {
  await new Promise<void>((resolve) => signServer.listen(0, '127.0.0.1', resolve));
  process.env.SIGN_API_URL = `http://127.0.0.1:${(signServer.address() as AddressInfo).port}`;
});
afterAll(() => {
  delete process.env.SIGN_API_URL;
  signServer.close();
});

describe('the sign server API key', () => {
  it('is sent with the requests to the sign server', async () => {
    const connection = tiktokConnection('some.streamer', { signApiKey: 'key-for-the-test' });
    connection.on('error', () => {});
    const attempt = connection.connect().catch(() => {});
    try {
      await waitFor(() => seen.length > 0, 15_000, 'a request to the sign server');
      const sent = seen.map((r) => `${r.headers['x-api-key'] ?? ''} ${r.url}`).join('\n');
      expect(sent).toContain('key-for-the-test');
    } finally {
      await connection.disconnect();
      await attempt;
    }
  }, 30_000);
});
