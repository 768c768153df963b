// Settings in the control API: settings.json whole with secrets as {set} and an ETag, whether it reads,
// and the OBS connection's test.
import type { Polka } from 'polka';
import type { FileProblem } from '../../../shared/data-files.js';
import { applySettingsInput, changesASecret, SettingsInput, settingsView } from '../../../shared/settings.js';
import type { ObsConnection } from '../actions/obs.js';
import type { SettingsStore } from '../store/settings-store.js';
import { readJson } from './body.js';
import type { DeviceAccess } from './device-access.js';
import { etagOf, ifMatchHolds, sendPreconditionFailed } from './etag.js';
import { sendError, sendJson } from './responses.js';

export function mountSettingsRoutes(
  app: Polka,
  ctx: { settings: SettingsStore; obs: ObsConnection; deviceAccess?: DeviceAccess | undefined },
): void {
  // Settings, whole, with secrets as {set}, an ETag like overlays and rules. A PUT is refused with 409
  // while settings.json on disk does not read (a hand edit in progress is never written over), 412 when
  // If-Match names another version, 503 when it cannot be written; a secret it leaves out is kept.
  const settingsEtag = () => etagOf(settingsView(ctx.settings.current()));
  app.get('/api/settings', (_req, res) =>
    sendJson(res, 200, settingsView(ctx.settings.current()), {
      ETag: settingsEtag(),
      'Cache-Control': 'no-cache',
    }),
  );
  app.get('/api/settings/problem', (_req, res) => {
    const reason = ctx.settings.unreadable;
    sendJson(res, 200, {
      problem:
        reason === undefined
          ? null
          : `${ctx.settings.file} could not be read (${reason}); the settings in force are the last good ones, and saving is refused until the file is fixed or removed`,
    } satisfies FileProblem);
  });
  app.put('/api/settings', async (req, res) => {
    const input = await readJson(req, res, SettingsInput);
    if (!input) return;
    const unreadable = ctx.settings.unreadable;
    if (unreadable !== undefined)
      return sendError(
        res,
        'conflict',
        `${ctx.settings.file} could not be read (${unreadable}); fix or remove the file first, nothing was saved`,
      );
    if (!ifMatchHolds(req, settingsEtag())) return sendPreconditionFailed(res, settingsEtag());
    const next = applySettingsInput(input, ctx.settings.current());
    // A paired device may save settings only as they keep every secret (decisions-3 §11).
    if (ctx.deviceAccess?.deviceOf(req) && changesASecret(ctx.settings.current(), next)) {
      return sendError(
        res,
        'forbidden',
        'Only the streamer’s own dashboard may change a password or key, or the OBS or Streamer.bot address it is sent to',
      );
    }
    const result = await ctx.settings.replace(next);
    if (!result.ok)
      return sendError(res, result.reason === 'unavailable' ? 'unavailable' : 'conflict', result.message);
    sendJson(res, 200, settingsView(result.settings), { ETag: settingsEtag() });
  });

  app.post('/api/obs/test', async (_req, res) => sendJson(res, 200, await ctx.obs.test()));
}
