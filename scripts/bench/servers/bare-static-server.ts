// Bench child, the page-serving baseline: a bare polka app returning the same bytes as the daemon's page and asset.
//
// Usage: bare-static-server.ts --page FILE --asset FILE --asset-type MIME
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import polka from 'polka';
import { serveCommands } from '../ipc.js';

const { values } = parseArgs({
  options: { page: { type: 'string' }, asset: { type: 'string' }, 'asset-type': { type: 'string' } },
});
if (!values.page || !values.asset || !values['asset-type']) throw new Error('--page, --asset, --asset-type');
const page = readFileSync(values.page);
const asset = readFileSync(values.asset);
const assetType = values['asset-type'];

const app = polka()
  .get('/overlay/:id', (_req, res) => {
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': page.length,
    });
    res.end(page);
  })
  .get('/assets/:name', (_req, res) => {
    res.writeHead(200, {
      'Content-Type': assetType,
      'Cache-Control': 'public, max-age=300',
      'Content-Length': asset.length,
    });
    res.end(asset);
  });

app.listen(0, '127.0.0.1', () => {
  const server = app.server;
  if (!server) throw new Error('polka has no server');
  serveCommands(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  );
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
