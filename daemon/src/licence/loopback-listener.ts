// One-shot listener on 127.0.0.1 that receives the temporary auth code at /auth/done?code=… (RFC 8252 §7.3, decisions §2).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60_000;

const DONE_PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Signed in</title>
<body style="font-family:system-ui,sans-serif;margin:4rem auto;max-width:32rem">
<h1>You are signed in</h1><p>overlay-daemon has received your licence. You can close this tab.</p></body></html>`;

interface AuthCodeListener {
  /** The port the browser is redirected to. */
  port: number;
  /** Resolves with the first code received; rejects on timeout or `close()`. */
  code: Promise<string>;
  close(): void;
}

interface ListenOptions {
  /** 0 picks a free port (the usual case: the port travels in `redirect_port`). */
  port?: number;
  timeoutMs?: number;
}

export async function listenForAuthCode(options: ListenOptions = {}): Promise<AuthCodeListener> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
  let settle: { resolve(code: string): void; reject(err: Error): void } | undefined;
  const code = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Unhandled if the caller closes before awaiting; the caller still sees it when it awaits.
  code.catch(() => {});

  let port = 0;
  const server = createServer((req, res) => {
    const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
    // Only the browser on this machine, addressed by the exact loopback origin we handed out (no DNS rebinding).
    if (req.headers.host !== `127.0.0.1:${port}`) {
      res.writeHead(403, headers).end('Forbidden\n');
      return;
    }
    // A crafted request target (`GET http://[ …`) is not a URL; answer it instead of letting the throw end the login.
    let url: URL;
    try {
      url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    } catch {
      res.writeHead(400, headers).end('Bad request\n');
      return;
    }
    if (req.method !== 'GET' || url.pathname !== '/auth/done') {
      res.writeHead(404, headers).end('Not found\n');
      return;
    }
    const received = url.searchParams.get('code');
    if (!received || received.length > 512) {
      res
        .writeHead(400, headers)
        .end('The sign-in redirect carried no code. Run "overlay-daemon login" again.\n');
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      Connection: 'close',
    });
    res.end(DONE_PAGE, () => finish(undefined, received));
  });

  const finish = (err: Error | undefined, value?: string) => {
    clearTimeout(timer);
    server.close();
    server.closeIdleConnections();
    const s = settle;
    settle = undefined;
    if (!s) return;
    if (err) s.reject(err);
    else if (value !== undefined) s.resolve(value);
  };
  const timer = setTimeout(
    () => finish(new Error(`No sign-in arrived within ${Math.round(timeoutMs / 1000)} s.`)),
    timeoutMs,
  );
  timer.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  return { port, code, close: () => finish(new Error('Sign-in cancelled.')) };
}
