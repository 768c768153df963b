// What actions did (the action log, a paired device's with secrets hidden) and their named queues.
import type { IncomingMessage } from 'node:http';
import type { Polka } from 'polka';
import type { ActionRunner } from '../actions/runner.js';
import { outcomesForDevice } from '../devices/rule-secrets.js';
import type { DeviceAccess } from './device-access.js';
import { sendError, sendJson } from './responses.js';

export function mountActionRoutes(
  app: Polka,
  ctx: { actions: ActionRunner; deviceAccess?: DeviceAccess | undefined },
): void {
  const deviceAsks = (req: IncomingMessage) => ctx.deviceAccess?.deviceOf(req) !== undefined;
  // What actions did (newest last), and their queues.
  app.get('/api/actions/log', (req, res) => {
    const log = ctx.actions.log();
    sendJson(res, 200, deviceAsks(req) ? outcomesForDevice(log) : log);
  });
  app.get('/api/actions/queues', (_req, res) => sendJson(res, 200, ctx.actions.queues()));
  for (const verb of ['skip', 'clear'] as const) {
    app.post(`/api/actions/queues/:name/${verb}`, (req, res) => {
      const name = req.params.name ?? '';
      const state = verb === 'skip' ? ctx.actions.skip(name) : ctx.actions.clear(name);
      if (!state) return sendError(res, 'not_found', `No queue is named "${name}"`);
      sendJson(res, 200, state);
    });
  }
}
