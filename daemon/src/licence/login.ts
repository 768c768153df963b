// `overlay-daemon login` / `logout`: browser sign-in through the Gatekeeper, then the JWT stored in license.json.
import { createHash, randomBytes } from 'node:crypto';
import { DaemonError, errorMessage } from '../errors.js';
import type { GatekeeperClient } from './gatekeeper-client.js';
import { decodeJwtPayload } from './jwt-payload.js';
import { type LicenceRecord, readLicence, removeLicence, writeLicence } from './licence-file.js';
import { DEFAULT_LOGIN_TIMEOUT_MS, listenForAuthCode } from './loopback-listener.js';

interface LoginOptions {
  client: GatekeeperClient;
  licenceFile: string;
  /** Opens the URL in a browser; resolves false when it could not (the URL is printed either way). */
  openUrl: (url: string) => Promise<boolean>;
  log?: (line: string) => void;
  timeoutMs?: number;
  now?: () => number;
}

export class LoginError extends DaemonError {
  constructor(message: string) {
    super('login_failed', message);
  }
}

export async function login(options: LoginOptions): Promise<LicenceRecord> {
  const log = options.log ?? console.log;
  // First, is the Gatekeeper there? Without it the browser would open on an error page.
  const health = await options.client.health();
  if (!health.ok) {
    throw new LoginError(
      health.kind === 'network'
        ? `The Gatekeeper at ${options.client.baseUrl} does not answer (${health.message}). Check your connection, or the address given with --gatekeeper / $OVERLAY_GATEKEEPER_URL.`
        : `The Gatekeeper at ${options.client.baseUrl} answered /health with ${health.status}: it is not working right now, try again later.`,
    );
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
  const listener = await listenForAuthCode({ timeoutMs });
  try {
    // PKCE (RFC 7636): only this process knows the verifier, so a code that another program or page
    // sends to the loopback listener (its own login's) cannot be exchanged here.
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const url = options.client.loginUrl(listener.port, challenge);
    log(`Opening your browser to sign in with Patreon. If it does not open, visit:\n  ${url}`);
    const opened = await options.openUrl(url);
    if (!opened) log('(Could not start a browser; open the address above yourself.)');
    log(
      `Waiting for the sign-in to finish in the browser (up to ${Math.round(timeoutMs / 60_000)} minutes; Ctrl+C cancels)…`,
    );
    let code: string;
    try {
      code = await listener.code;
    } catch (err) {
      throw new LoginError(errorMessage(err));
    }
    const exchanged = await options.client.exchange(code, verifier);
    if (!exchanged.ok) {
      throw new LoginError(
        exchanged.kind === 'http'
          ? `The Gatekeeper refused the sign-in (${exchanged.code}): ${exchanged.message}`
          : `Could not reach the Gatekeeper at ${options.client.baseUrl}: ${exchanged.message}`,
      );
    }
    const { token, tier } = exchanged.value;
    const claims = decodeJwtPayload(token);
    if (!claims) throw new LoginError('The Gatekeeper returned a token that is not a JWT.');
    const now = options.now?.() ?? Date.now();
    const record: LicenceRecord = {
      token,
      tier,
      validated_at: new Date(now).toISOString(),
      ...(claims.exp !== undefined ? { expires_at: new Date(claims.exp * 1000).toISOString() } : {}),
      user_id: claims.sub,
      verdict: 'ok',
    };
    await writeLicence(options.licenceFile, record);
    return record;
  } finally {
    listener.close();
  }
}

interface LogoutResult {
  /** Whether there was a licence to remove. */
  removed: boolean;
  /** Whether the Gatekeeper revoked every licence of the member; false offline (best effort). */
  revoked: boolean;
  /** Why the Gatekeeper did not revoke, when it did not. */
  reason?: string;
}

/**
 * Revokes every licence of the member at the Gatekeeper (`POST /auth/logout`), best effort, then removes
 * license.json whatever the answer: a person who signs out is signed out on this machine even offline.
 */
export async function logout(licenceFile: string, client?: GatekeeperClient): Promise<LogoutResult> {
  const read = await readLicence(licenceFile).catch(() => null);
  const record = read?.ok ? read.record : undefined;
  let revoked = false;
  let reason: string | undefined;
  if (record && client) {
    const answer = await client.logout(record.token);
    revoked = answer.ok;
    if (!answer.ok) reason = answer.kind === 'http' ? `${answer.code}: ${answer.message}` : answer.message;
  }
  const removed = await removeLicence(licenceFile);
  return { removed, revoked, ...(reason ? { reason } : {}) };
}
