// `POST /kick/webhook`: Kick's signed deliveries. The body is read up to 1 MiB (413 past it), its signature
// and timestamp checked (401), then parsed (400); a verified event of a type we map is handed to its
// member's KickChannel, which numbers and keeps it unless the delivery id was stored already. Kick retries
// every delivery that does not get a 200 and drops subscriptions that keep failing, so a repeat, a type we
// do not map and a channel no member links all answer 200 and store nothing.
import { Hono } from 'hono';
import { KICK_WEBHOOK_HEADER, KICK_WEBHOOK_LIMITS, parseKickWebhook } from '../../../shared/protocol/kick.js';
import type { AppEnv } from '../env.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import { limitBody } from '../middleware/body-limit.js';
import { kickChannelOf } from './channel.js';
import { timestampIsFresh, verifyKickSignature } from './signature.js';
import { memberForKickChannel } from './tokens.js';

/** What a 200 says happened (for logs and tests; Kick only reads the status). */
export type KickWebhookOutcome =
  | { status: 'stored'; seq: number }
  | { status: 'duplicate' }
  | { status: 'ignored'; reason: string };

const MAX_HEADER = 200;

export const kickWebhookRoutes = new Hono<AppEnv>();

kickWebhookRoutes.post('/webhook', limitBody(KICK_WEBHOOK_LIMITS.bodyBytes), async (c) => {
  const header = (name: string) => c.req.header(name)?.trim() ?? '';
  const messageId = header(KICK_WEBHOOK_HEADER.messageId);
  const timestamp = header(KICK_WEBHOOK_HEADER.timestamp);
  const signature = header(KICK_WEBHOOK_HEADER.signature);
  const type = header(KICK_WEBHOOK_HEADER.type);
  if (
    !messageId ||
    !timestamp ||
    !signature ||
    messageId.length > MAX_HEADER ||
    timestamp.length > MAX_HEADER
  ) {
    throw new ApiError(
      'unauthenticated',
      `A Kick delivery carries ${KICK_WEBHOOK_HEADER.messageId}, ${KICK_WEBHOOK_HEADER.timestamp} and ${KICK_WEBHOOK_HEADER.signature}`,
    );
  }
  // Before any key is fetched: a delivery from outside the 5 minutes is refused on its face.
  if (!timestampIsFresh(timestamp)) {
    throw new ApiError('unauthenticated', 'The delivery’s timestamp is not within 5 minutes of now');
  }
  const body = new Uint8Array(await c.req.arrayBuffer());
  let check: Awaited<ReturnType<typeof verifyKickSignature>>;
  try {
    check = await verifyKickSignature(c.env, { messageId, timestamp, signature, body });
  } catch (err) {
    // Neither accepted nor called forged: Kick retries it.
    console.error('kick webhook: Kick’s public key could not be fetched:', err);
    throw new ApiError('upstream_error', 'Kick’s public key could not be fetched; try again');
  }
  if (!check.ok) throw new ApiError('unauthenticated', `The delivery is not signed by Kick: ${check.reason}`);

  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    throw new ApiError('bad_request', 'The body is not JSON');
  }
  const parsed = parseKickWebhook(type, json);
  if (parsed.kind === 'invalid') {
    throw new ApiError('bad_request', `The body does not fit a ${type} event: ${parsed.error}`);
  }
  if (parsed.kind === 'unmapped') {
    return c.json<KickWebhookOutcome>({
      status: 'ignored',
      reason: `events of type ${type || '(none)'} are not used`,
    });
  }
  const member = await memberForKickChannel(c.env, parsed.broadcasterUserId);
  if (!member) {
    console.log(
      `kick webhook: ${type} for channel ${parsed.broadcasterUserId}, which no member links: dropped`,
    );
    return c.json<KickWebhookOutcome>({ status: 'ignored', reason: 'no member links this channel' });
  }
  const result = await kickChannelOf(c.env, member).store(messageId, parsed.event, parsed.at);
  if (!result.stored) return c.json<KickWebhookOutcome>({ status: 'duplicate' });
  return c.json<KickWebhookOutcome>({ status: 'stored', seq: result.seq });
});
kickWebhookRoutes.all('/webhook', methodNotAllowed('POST'));
