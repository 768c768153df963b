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

/** Whether a frame's text is over `limit` UTF-8 bytes; the bytes are counted only when its length cannot tell. */
export function overBytes(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return new TextEncoder().encode(text).byteLength > limit;
}
