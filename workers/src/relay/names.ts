// Names, limits and small helpers the relay's Worker routes, hub and shards share.
import { type GatekeeperEnv, positiveVar } from '../env.js';

/** Overlay ids are lowercase UUIDs: one spelling per overlay, so one hub per overlay. */
export const OVERLAY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Tunnel subdomains as tunnels/subdomain.ts derives them. */
export const SUBDOMAIN = /^o-[a-z2-7]{16}$/;

/** Headers only the Worker sets on what it forwards to the hub; any a client sends are dropped. */
export const RELAY_HEADER = {
  member: 'X-Relay-Member',
  subdomain: 'X-Relay-Subdomain',
  licenceExp: 'X-Relay-Licence-Exp',
  licenceEpoch: 'X-Relay-Licence-Epoch',
  ip: 'X-Relay-IP',
  /** Hub → shard: the hub's name and the shard's number, so the shard can report back. */
  hub: 'X-Relay-Hub',
  shard: 'X-Relay-Shard',
  /** Hub → shard: the viewer's address has this many sockets on shards before this one in its order. */
  ipElsewhere: 'X-Relay-IP-Elsewhere',
  /** Shard → hub, with a 503 (full): how many sockets of the viewer's address it holds. */
  ipViewers: 'X-Relay-IP-Viewers',
} as const;

export const hubName = (subdomain: string, overlayId: string) => `${subdomain}/${overlayId}`;
export const shardName = (hub: string, index: number) => `${hub}#${index}`;

export function hubOf(env: GatekeeperEnv, subdomain: string, overlayId: string) {
  return env.OVERLAY_RELAY.get(env.OVERLAY_RELAY.idFromName(hubName(subdomain, overlayId)));
}

/** How many shards a hub may use and how many viewers each holds (RELAY_SHARDS, RELAY_SHARD_SIZE). */
export function shardLayout(env: GatekeeperEnv, defaults: { shards: number; shardSize: number }) {
  return {
    shards: positiveVar(env.RELAY_SHARDS, defaults.shards),
    shardSize: positiveVar(env.RELAY_SHARD_SIZE, defaults.shardSize),
  };
}

/**
 * The order in which a viewer's address tries the shards: from a shard picked by the address (FNV-1a),
 * then each next one. An address's sockets so sit on one shard while it has room, which counts them.
 */
export function shardOrder(ip: string, shards: number): number[] {
  let hash = 0x811c9dc5;
  for (let i = 0; i < ip.length; i++) hash = Math.imul(hash ^ ip.charCodeAt(i), 0x01000193);
  const first = (hash >>> 0) % shards;
  return Array.from({ length: shards }, (_, i) => (first + i) % shards);
}

/** Whether a frame's text is over `limit` UTF-8 bytes; the bytes are counted only when its length cannot tell. */
export function overBytes(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return new TextEncoder().encode(text).byteLength > limit;
}

/** Close reasons are at most 123 bytes. */
export function shortReason(reason: string): string {
  return reason.length > 100 ? `${reason.slice(0, 99)}…` : reason;
}

/** Closes a socket that may be closing already. */
export function safeClose(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}
