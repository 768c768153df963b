// Bench child: the real overlay daemon (startDaemon, with its default event pipeline) on 127.0.0.1 port 0.
// It runs the compiled daemon (dist/, what `npx overlay-daemon` runs), not the TypeScript sources through
// the tsx loader, whose transform wraps every function expression in a naming helper called per request.
//
// Usage: daemon-server.ts --data-dir DIR
// The demo rule of a fresh data directory is removed at start (rules.json = []), so an event costs
// what it costs a streamer without rules: broadcast, rules engine with nothing to fire, widget
// state. Benchmarks that measure rules PUT their own list.
import { parseArgs } from 'node:util';
import { type RunningDaemon, startDaemon } from '../../../dist/daemon/src/daemon.js';
import { serveCommands } from '../ipc.js';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' } } });
const dataDir = values['data-dir'];
if (!dataDir) throw new Error('--data-dir is required');

const verbose = process.env.BENCH_VERBOSE === '1';
const daemon: RunningDaemon = await startDaemon({
  port: 0,
  host: '127.0.0.1',
  dataDir,
  watchSettleMs: 50,
  log: (line) => {
    if (verbose) process.stderr.write(`[daemon] ${line}\n`);
  },
});
const cleared = await daemon.rules.replace([]);
if (!cleared.ok) throw new Error(`could not clear the demo rules: ${cleared.message}`);

serveCommands(() => daemon.close());
process.send?.({
  type: 'ready',
  port: daemon.port,
  adminKey: daemon.adminKey,
  overlayIds: daemon.overlays.list().map((o) => o.id),
});
