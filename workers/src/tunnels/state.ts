// The tunnel state a user sees (decisions §2) from what Cloudflare reports about the tunnel.
import type { TunnelState } from '../../../shared/protocol/index.js';
import type { TunnelInfo } from './cloudflare-api.js';

/**
 * Cloudflare's `status`: `inactive` = never run, `healthy`/`degraded` = serving traffic,
 * `down` = no connection to the edge any more. A tunnel that was connected once
 * (`conns_active_at` set) and has no connections now is `inactive` even if Cloudflare still
 * calls it `inactive` rather than `down`.
 */
export function tunnelState(tunnel: Pick<TunnelInfo, 'status' | 'conns_active_at'>): TunnelState {
  switch (tunnel.status) {
    case 'healthy':
    case 'degraded':
      return 'active';
    case 'down':
      return 'inactive';
    case 'inactive':
      return tunnel.conns_active_at ? 'inactive' : 'provisioned';
  }
}
