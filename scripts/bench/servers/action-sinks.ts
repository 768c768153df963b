// Bench child: what the busy daemon's actions call, in a process of their own so that answering them never
// competes with the bench's clients for its event loop: a stand-in OBS (obs-websocket v5) and an HTTP
// receiver that takes every request and never answers.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeObs } from '../../../test/support/fakes/obs.js';
import { serveCommands } from '../ipc.js';

const held: IncomingMessage[] = [];
const silent = createServer((req) => held.push(req));
await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
const obs = await startFakeObs();

serveCommands(async () => {
  for (const req of held) req.socket.destroy();
  silent.closeAllConnections();
  silent.close();
  await obs.close();
});
process.send?.({
  type: 'ready',
  port: (silent.address() as AddressInfo).port,
  obsUrl: obs.url,
});
