// `overlay-daemon login` / `logout`: browser sign-in through the Gatekeeper, then the JWT stored in license.json.
import type { GatekeeperClient } from './gatekeeper-client.js';
import { decodeJwtPayload } from './jwt-payload.js';
import { type LicenceRecord, removeLicence, writeLicence } from './licence-file.js';
import { listenForAuthCode } from './loopback-listener.js';

export interface LoginOptions {
  client: GatekeeperClient;
  licenceFile: string;
  /** Opens the URL in a browser; resolves false when it could not (the URL is printed either way). */
  openUrl: (url: string) => Promise<boolean>;
  log?: (line: string) => void;
  timeoutMs?: number;
  now?: () => number;
}

export class LoginError extends Error {}

export async function login(options: LoginOptions): Promise<LicenceRecord> {
  const log = options.log ?? console.log;
  const listener = await listenForAuthCode(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {});
  try {
    const url = options.client.loginUrl(listener.port);
    log(`Opening your browser to sign in. If it does not open, visit:\n  ${url}`);
    const opened = await options.openUrl(url);
    if (!opened) log('(Could not start a browser; open the address above yourself.)');
    let code: string;
    try {
      code = await listener.code;
    } catch (err) {
      throw new LoginError((err as Error).message);
    }
    const exchanged = await options.client.exchange(code);
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

export function logout(licenceFile: string): Promise<boolean> {
  return removeLicence(licenceFile);
}
