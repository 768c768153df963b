// Pairing routes: the streamer's (admin key, under /api/: offer, waiting pairings, approve, refuse, the
// devices and their revocation) and the phone's (`POST /pair`, `GET /pair/:pairingId`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Polka } from 'polka';
import type * as v from 'valibot';
import {
  PairingApproveInput,
  PairingOfferInput,
  PairRequestInput,
  parseJsonWith,
} from '../../../shared/protocol/index.js';
import { deviceCookie, type PairingService } from '../devices/pairing.js';
import type { DeviceStore } from '../devices/store.js';
import { readBody } from './body.js';
import { deviceCookieValue } from './device-access.js';
import { pairPageHandler } from './pair-page.js';
import { classifyHost, clientIp } from './policy.js';
import { sendError, sendJson, sendNoContent } from './responses.js';

const PAIR_BODY_MAX_BYTES = 4096;

export interface PairingRoutesContext {
  devices: DeviceStore;
  pairing: PairingService;
  tunnelHost?: (() => string | undefined) | undefined;
}

/** A small JSON body checked with `schema`; an empty body is `{}`. Answers 413/400 itself. */
async function readSmallJson<S extends v.GenericSchema>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: S,
): Promise<v.InferOutput<S> | undefined> {
  const body = await readBody(req, PAIR_BODY_MAX_BYTES);
  if (!body.ok) {
    sendError(res, 'payload_too_large', `bodies here are limited to ${PAIR_BODY_MAX_BYTES} bytes`, {
      Connection: 'close',
    });
    return undefined;
  }
  const parsed = parseJsonWith(schema, body.text.trim() === '' ? '{}' : body.text);
  if (!parsed.ok) {
    sendError(res, 'bad_request', parsed.error);
    return undefined;
  }
  return parsed.value;
}

const noStore = { 'Cache-Control': 'no-store' };

export function mountPairingRoutes(app: Polka, ctx: PairingRoutesContext): void {
  const { devices, pairing } = ctx;

  app.post('/api/pairings/offer', async (req, res) => {
    const input = await readSmallJson(req, res, PairingOfferInput);
    if (!input) return;
    const offer = pairing.offer(input.role);
    if (!offer) {
      return sendError(
        res,
        'conflict',
        'A phone pairs through the tunnel, and no tunnel is running: start remote access first (overlay-daemon tunnel)',
      );
    }
    sendJson(res, 201, offer, noStore);
  });

  app.get('/api/pairings', (_req, res) => sendJson(res, 200, pairing.pending(), noStore));

  app.post('/api/pairings/:id/approve', async (req, res) => {
    const input = await readSmallJson(req, res, PairingApproveInput);
    if (!input) return;
    if (!(await pairing.approve(req.params.id ?? '', input.role))) {
      return sendError(res, 'not_found', 'No pairing waits with this id (answered or expired)');
    }
    sendNoContent(res);
  });

  app.post('/api/pairings/:id/refuse', (req, res) => {
    if (!pairing.refuse(req.params.id ?? '')) {
      return sendError(res, 'not_found', 'No pairing waits with this id (answered or expired)');
    }
    sendNoContent(res);
  });

  app.get('/api/devices', (_req, res) => sendJson(res, 200, devices.list(), noStore));

  app.delete('/api/devices/:id', async (req, res) => {
    if (!(await devices.revoke(req.params.id ?? ''))) return sendError(res, 'not_found', 'No such device');
    sendNoContent(res);
  });

  // The phone's page, where the QR code leads.
  app.get('/pair', pairPageHandler);

  app.post('/pair', async (req, res) => {
    const input = await readSmallJson(req, res, PairRequestInput);
    if (!input) return;
    const ip = clientIp(req, classifyHost(req.headers.host, ctx.tunnelHost?.()));
    // A browser paired before sends its old cookie along (same origin, Path=/): that device is replaced.
    const before = devices.authenticate(deviceCookieValue(req.headers.cookie) || undefined);
    const result = pairing.request(input.code, input.deviceName, ip, before?.id);
    if (!result.ok) {
      return sendError(
        res,
        result.code,
        result.message,
        result.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(result.retryAfterSeconds) },
      );
    }
    sendJson(res, 202, { pairingId: result.pairingId }, noStore);
  });

  app.get('/pair/:pairingId', (req, res) => {
    const answer = pairing.poll(req.params.pairingId ?? '');
    if (!answer) return sendError(res, 'not_found', 'No such pairing');
    sendJson(
      res,
      200,
      { state: answer.state },
      answer.token ? { ...noStore, 'Set-Cookie': deviceCookie(answer.token) } : noStore,
    );
  });
}
