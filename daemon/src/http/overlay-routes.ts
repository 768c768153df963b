// The overlays of the control API: list, create (within the tier's limits), read and save with an ETag,
// delete, send a command to an overlay's pages, and how many pages each overlay has open.
import type { Polka, Request } from 'polka';
import {
  type ClientCounts,
  type CommandReceipt,
  OverlayCommandInput,
  OverlayInput,
  parseWith,
  Uuid,
} from '../../../shared/protocol/index.js';
import type { LimitDecision } from '../licence/limits.js';
import type { OverlayStore } from '../store/overlay-store.js';
import { WriteFailed } from '../store/synced-json-file.js';
import type { Hub } from '../ws/hub.js';
import { readJson } from './body.js';
import type { CreationLimits } from './creation-limits.js';
import { ifMatchHolds, overlayEtag, sendPreconditionFailed } from './etag.js';
import { sendError, sendJson, sendNoContent } from './responses.js';

/** Making an overlay public needs Premium; one that is public already stays editable whatever the tier. */
function publishRefused(
  limits: CreationLimits | undefined,
  wanted: boolean,
  was: boolean,
): LimitDecision | undefined {
  if (!wanted || was) return undefined;
  const decision = limits?.canPublish?.() ?? {
    ok: false,
    code: 'premium_required',
    message:
      "Public overlays (served to viewers by the Gatekeeper's relay) need a Premium licence: run overlay-daemon login.",
    upgradeUrl: undefined,
  };
  return decision.ok ? undefined : decision;
}

function overlayIdParam(req: Request): string | undefined {
  const id = req.params.id ?? '';
  return parseWith(Uuid, id).ok ? id.toLowerCase() : undefined;
}

export function mountOverlayRoutes(
  app: Polka,
  ctx: { overlays: OverlayStore; hub: Hub; limits?: CreationLimits | undefined },
): void {
  const { overlays, hub } = ctx;
  app.get('/api/overlays', (_req, res) => sendJson(res, 200, overlays.list()));

  app.post('/api/overlays', async (req, res) => {
    const input = await readJson(req, res, OverlayInput);
    if (!input) return;
    const allowed = ctx.limits?.canCreateOverlay(overlays.list().length) ?? { ok: true };
    if (!allowed.ok) return sendError(res, allowed.code, allowed.message);
    const unpublishable = publishRefused(ctx.limits, input.public, false);
    if (unpublishable && !unpublishable.ok) return sendError(res, unpublishable.code, unpublishable.message);
    let overlay: Awaited<ReturnType<OverlayStore['create']>>;
    try {
      overlay = await overlays.create(input);
    } catch (err) {
      // A full disk: refused in words, and nothing was created.
      if (err instanceof WriteFailed) return sendError(res, 'unavailable', err.message);
      throw err;
    }
    sendJson(res, 201, overlay, { Location: `/api/overlays/${overlay.id}` });
  });

  app.get('/api/overlays/:id', (req, res) => {
    const id = overlayIdParam(req);
    const overlay = id ? overlays.get(id) : undefined;
    if (!overlay) return sendError(res, 'not_found', 'No overlay has that id');
    sendJson(res, 200, overlay, { ETag: overlayEtag(overlay), 'Cache-Control': 'no-cache' });
  });

  app.put('/api/overlays/:id', async (req, res) => {
    const id = overlayIdParam(req);
    const current = id ? overlays.get(id) : undefined;
    if (!id || !current) return sendError(res, 'not_found', 'No overlay has that id');
    const input = await readJson(req, res, OverlayInput);
    if (!input) return;
    // Checked after the body is read, against the overlay in force now (a hand edit, another tab).
    const inForce = overlays.get(id) ?? current;
    if (!ifMatchHolds(req, overlayEtag(inForce))) return sendPreconditionFailed(res, overlayEtag(inForce));
    const unpublishable = publishRefused(ctx.limits, input.public, inForce.public === true);
    if (unpublishable && !unpublishable.ok) return sendError(res, unpublishable.code, unpublishable.message);
    // A layout save: the live widget values (goal progress, counters, top gifters) stay those in force.
    const result = await overlays.saveLayout({ id, ...input });
    if (result.ok) return sendJson(res, 200, result.overlay, { ETag: overlayEtag(result.overlay) });
    const code = { not_found: 'not_found', unreadable: 'conflict', unavailable: 'unavailable' } as const;
    sendError(res, code[result.reason], result.message);
  });

  app.delete('/api/overlays/:id', async (req, res) => {
    const id = overlayIdParam(req);
    if (!id || !(await overlays.remove(id))) return sendError(res, 'not_found', 'No overlay has that id');
    sendNoContent(res);
  });

  app.post('/api/overlays/:id/commands', async (req, res) => {
    const id = overlayIdParam(req);
    if (!id || !overlays.get(id)) return sendError(res, 'not_found', 'No overlay has that id');
    const command = await readJson(req, res, OverlayCommandInput);
    if (!command) return;
    const delivered = hub.sendCommand(id, command);
    sendJson(res, 202, { delivered } satisfies CommandReceipt);
  });

  app.get('/api/clients', (_req, res) => {
    const counts = hub.clientCounts();
    const clients: Record<string, number> = {};
    for (const overlay of overlays.list()) clients[overlay.id] = counts[overlay.id] ?? 0;
    sendJson(res, 200, { clients } satisfies ClientCounts);
  });
}
