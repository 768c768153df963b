// The relay's control route: `POST /api/relay/:overlayId/take-back` publishes from here again an overlay
// another daemon with a copy of the licence took over (4409), which closes that daemon's publisher in turn.
import type { Polka } from 'polka';
import { parseWith, Uuid } from '../../../shared/protocol/index.js';
import type { TakeBack } from '../relay/relay-service.js';
import { sendError, sendJson } from './responses.js';

export interface RelayControl {
  takeBack(overlayId: string): TakeBack;
}

export function mountRelayRoutes(app: Polka, relay: RelayControl): void {
  app.post('/api/relay/:id/take-back', (req, res) => {
    const id = req.params.id ?? '';
    if (!parseWith(Uuid, id).ok) return sendError(res, 'not_found', 'No overlay has that id');
    const result = relay.takeBack(id.toLowerCase());
    if (!result.ok) return sendError(res, result.code, result.message);
    sendJson(res, 200, result.status);
  });
}
