// Bench child: the real overlay daemon (startDaemon) on 127.0.0.1 port 0, with the rules engine attached.
//
// Usage: daemon-server.ts --data-dir DIR [--no-rules]
// The rules engine is attached through startDaemon's `eventHandlers`, the way the CLI attaches
// extra event steps: rules.json in force is compiled once per change and every event is evaluated
// against it, fired actions going out as `overlay-command`.
import { parseArgs } from 'node:util';
import { type RunningDaemon, startDaemon } from '../../../daemon/src/daemon.js';
import type { EventHandler } from '../../../daemon/src/ingest.js';
import { RuleEngine } from '../../../daemon/src/rules/engine.js';
import { serveCommands } from '../ipc.js';

const { values } = parseArgs({
  options: { 'data-dir': { type: 'string' }, 'no-rules': { type: 'boolean' } },
});
const dataDir = values['data-dir'];
if (!dataDir) throw new Error('--data-dir is required');

const engine = new RuleEngine();
const runRules: EventHandler = (event, ctx) => {
  for (const action of engine.evaluate(event).actions) {
    ctx.hub.sendCommand(action.overlayId, {
      command: action.command,
      widgetId: action.widgetId,
      payload: action.payload,
    });
  }
};

const verbose = process.env.BENCH_VERBOSE === '1';
const daemon: RunningDaemon = await startDaemon({
  port: 0,
  host: '127.0.0.1',
  dataDir,
  watchSettleMs: 50,
  log: (line) => {
    if (verbose) process.stderr.write(`[daemon] ${line}\n`);
  },
  ...(values['no-rules'] ? {} : { eventHandlers: [runRules] }),
});
engine.load(daemon.rules.current());
daemon.rules.subscribe((rules) => engine.load(rules));

serveCommands(() => daemon.close());
process.send?.({
  type: 'ready',
  port: daemon.port,
  adminKey: daemon.adminKey,
  overlayIds: daemon.overlays.list().map((o) => o.id),
});
