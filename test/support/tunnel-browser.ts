// A phone's browser on the tunnel's public side, for the Chromium suites: every request the page makes to
// https://<tunnel host>/ is handed to the daemon the way the edge and cloudflared hand it over (from
// loopback, with the tunnel's Host and the phone in CF-Connecting-IP), cookies and all.
import { request } from 'node:http';
import type { BrowserContext } from 'playwright-core';
import { PHONE_IP } from './tunnel-phone.js';

/** Headers the edge sets itself, never the browser's. */
const EDGE_HEADERS = new Set(['host', 'cf-connecting-ip', 'connection', 'content-length']);

/** Routes https://`host`/… of `context` to the daemon on `port`; returns the tunnel's origin. */
export async function routeTunnel(context: BrowserContext, port: number, host: string): Promise<string> {
  const origin = `https://${host}`;
  await context.route(`${origin}/**`, async (route) => {
    const sent = route.request();
    const url = new URL(sent.url());
    const headers: Record<string, string> = { Host: host, 'CF-Connecting-IP': PHONE_IP };
    for (const [name, value] of Object.entries(await sent.allHeaders()))
      if (!EDGE_HEADERS.has(name.toLowerCase()) && !name.startsWith(':')) headers[name] = value;
    const body = sent.postDataBuffer() ?? undefined;
    const answer = await new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>(
      (resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: sent.method(),
            path: url.pathname + url.search,
            headers,
            agent: false,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              const out: Record<string, string> = {};
              for (const [name, value] of Object.entries(res.headers))
                if (value !== undefined) out[name] = Array.isArray(value) ? value.join('\n') : value;
              resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks) });
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );
    await route.fulfill(answer);
  });
  return origin;
}
