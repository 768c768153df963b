// JSON responses and the common error body of decisions §1, for HTTP responses and refused upgrades.
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS, type ErrorCode, errorBody } from '../../../shared/protocol/index.js';
import { isOverlayPagePath, overlayErrorPage } from './page.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(data),
  });
  res.end(data);
}

export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  // Under /overlay/ the answer lands in an OBS browser source: a transparent page, never JSON on stream.
  if (isOverlayPagePath(res.req?.url)) {
    const html = overlayErrorPage(code, message);
    res.writeHead(ERROR_STATUS[code], {
      ...headers,
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': Buffer.byteLength(html),
    });
    res.end(html);
    return;
  }
  sendJson(res, ERROR_STATUS[code], errorBody(code, message), headers);
}

export function sendNoContent(res: ServerResponse, status = 204, headers: Record<string, string> = {}): void {
  res.writeHead(status, headers);
  res.end();
}

/** Refuses a WebSocket upgrade with a plain HTTP response (nosniff included) and closes the socket. */
export function refuseUpgrade(
  socket: Duplex,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  const status = ERROR_STATUS[code];
  const body = JSON.stringify(errorBody(code, message));
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Content-Type-Options: nosniff',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  if (socket.writable) socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  else socket.destroy();
}
