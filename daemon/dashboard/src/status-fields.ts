// Reads optional fields of GET /status (tunnel, licence, TikTok) without assuming they exist yet.
import type { JsonRecord } from './api.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function httpsUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The tunnel's public origin when the daemon reports one (`tunnel.public_url` of GET /status). */
export function tunnelPublicUrl(status: JsonRecord | undefined): string | undefined {
  const tunnel = status?.tunnel;
  if (!isRecord(tunnel) || tunnel.active === false || tunnel.state === 'inactive') return undefined;
  return httpsUrl(tunnel.public_url);
}

/** The tunnel connector's state (`running`, `restarting`, `stopped`) when the daemon reports one. */
export function tunnelConnector(status: JsonRecord | undefined): string | undefined {
  const tunnel = status?.tunnel;
  return isRecord(tunnel) && typeof tunnel.connector === 'string' ? tunnel.connector : undefined;
}

export { isRecord };
