// GET / for the streamer on this computer: what the daemon is, where the dashboard is, and the URL of each
// overlay to paste into OBS. Through the tunnel (viewers) it does not exist, as before.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Overlay } from '../../../shared/protocol/index.js';
import { classifyHost, isLocalControlClient } from './policy.js';
import { sendError } from './responses.js';

/** Inline styles only; no script, nothing loaded from anywhere. */
const HOME_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text safe inside HTML elements and quoted attributes. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d232a;background:#f6f7f9}
h1{font-size:1.5rem;margin-bottom:.25rem}h2{font-size:1.1rem;margin-top:2rem}
code,.url{font-family:ui-monospace,monospace;font-size:.9rem}
.url{display:block;padding:.4rem .6rem;background:#fff;border:1px solid #d5d9de;border-radius:6px;user-select:all;word-break:break-all}
li{margin:.75rem 0}.muted{color:#5b6570}a{color:#0b63c5}`;

function renderHomePage(options: { baseUrl: string; overlays: readonly Overlay[] }): string {
  const { baseUrl } = options;
  const overlays = options.overlays.length
    ? `<ul>${options.overlays
        .map(
          (o) =>
            `<li><strong>${escapeHtml(o.name)}</strong> <span class="muted">${o.width} × ${o.height}</span>` +
            `<span class="url">${escapeHtml(`${baseUrl}/overlay/${o.id}`)}</span></li>`,
        )
        .join('')}</ul>`
    : '<p>No overlays yet: create one in the dashboard.</p>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>overlay-daemon</title><style>${STYLE}</style></head><body>
<h1>overlay-daemon is running</h1>
<p class="muted">This computer serves your stream overlays at <code>${escapeHtml(baseUrl)}</code>.</p>
<h2>Dashboard</h2>
<p>Design overlays, rules and test events in the <a href="/dashboard">dashboard</a>. It asks for the sign-in
link that <code>overlay-daemon</code> printed when it started; run <code>overlay-daemon dashboard</code> to open it
signed in.</p>
<h2>Your overlays</h2>
<p>In OBS: <em>Sources → + → Browser</em>, paste an overlay's URL, set width and height to the overlay's size,
and tick <em>Control audio via OBS</em> for alert sounds. Opened in a normal browser tab an overlay looks empty:
its background is transparent and it shows only what events trigger.</p>
${overlays}
</body></html>
`;
}

/** GET / (and HEAD /): the page for a local client, `not_found` for anyone else (through the tunnel). */
export function homePageHandler(options: {
  overlays: () => readonly Overlay[];
  tunnelHost?: () => string | undefined;
}) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!isLocalControlClient(req, classifyHost(req.headers.host, options.tunnelHost?.())))
      return sendError(res, 'not_found', 'No such route');
    // The Host is a loopback name by now (the policy checked it): the URLs read as the streamer typed them.
    const html = renderHomePage({ baseUrl: `http://${req.headers.host}`, overlays: options.overlays() });
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': Buffer.byteLength(html),
      'Cache-Control': 'no-store',
      'Content-Security-Policy': HOME_CSP,
      'Referrer-Policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : html);
  };
}
