// What a browser whose device cookie matches no paired device (revoked, or replaced by a new pairing) gets
// when it opens /dashboard through the tunnel: the dashboard's own "Signed out" words as a page, not the
// JSON of an error. Self-contained, without script, and it tells nothing about the streamer's daemon.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const STYLE = `*{box-sizing:border-box}
body{font:17px/1.5 system-ui,sans-serif;margin:0;padding:1.25rem;color:#1d232a;background:#f6f7f9;max-width:30rem;margin-inline:auto}
h1{font-size:1.4rem;margin:.5rem 0 1rem}
p{padding:.75rem;border-radius:8px;border:1px solid #c0392b;color:#8e2418;background:#fdf0ee}
a{color:#0b63c5}`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export const SIGNED_OUT_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${sha256(STYLE)}`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Signed out</title><style>${STYLE}</style></head><body>
<h1>Signed out</h1>
<p role="alert">This device was signed out (revoked) by the streamer. To use the dashboard from it again, ask the streamer for a new pairing code and <a href="/pair">pair again</a>.</p>
</body></html>
`;

/** The paths a browser opens the dashboard at (its files stay 404). */
export function isDashboardPage(url: string | undefined): boolean {
  const path = (url ?? '').split('?', 1)[0]!.toLowerCase();
  return path === '/dashboard' || path === '/dashboard/' || path === '/dashboard/index.html';
}

/** 401 with the page (HEAD: without it). */
export function sendSignedOutPage(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(401, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(HTML),
    'Cache-Control': 'no-store',
    'Content-Security-Policy': SIGNED_OUT_PAGE_CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
  res.end(req.method === 'HEAD' ? undefined : HTML);
}
