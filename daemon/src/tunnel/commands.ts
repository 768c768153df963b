// `overlay-daemon tunnel up | down | status`: provisioning through the Gatekeeper; the daemon runs the connector.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { premiumPageUrl } from '../../../shared/config.js';
import { localTime } from '../../../shared/local-time.js';
import type { Tier } from '../../../shared/protocol/index.js';
import { Overlay, parseJsonWith } from '../../../shared/protocol/index.js';
import { DaemonError } from '../errors.js';
import { findExecutable } from '../find-executable.js';
import type { GatekeeperClient, GatekeeperFailure } from '../licence/gatekeeper-client.js';
import { readLicence } from '../licence/licence-file.js';
import { readCachedConfig } from '../licence/remote-config-cache.js';
import { dataDirPaths } from '../store/data-dir.js';
import { CLOUDFLARED_DOWNLOAD_URL } from './cloudflared.js';
import { readTunnelFile, removeTunnelFile, type TunnelRecord, writeTunnelFile } from './tunnel-file.js';

export class TunnelCommandError extends DaemonError {
  constructor(message: string) {
    super('tunnel_failed', message);
  }
}

interface TunnelCommandContext {
  client: GatekeeperClient;
  dataDir: string;
}

async function signedIn(dataDir: string): Promise<{ token: string; userId: string; tier: Tier }> {
  const read = await readLicence(dataDirPaths(dataDir).licenseFile);
  if (!read.ok) throw new TunnelCommandError(`Cannot read the licence: ${read.error}`);
  if (!read.record) throw new TunnelCommandError('Not signed in. Run "overlay-daemon login" first.');
  return { token: read.record.token, userId: read.record.user_id, tier: read.record.tier };
}

/** Remote access is not in the free tier: the upgrade prompt of the cached remote config. */
async function premiumNeeded(ctx: TunnelCommandContext): Promise<TunnelCommandError> {
  const config = await readCachedConfig(dataDirPaths(ctx.dataDir).remoteConfigFile);
  return new TunnelCommandError(
    `Remote access needs Premium. ${config.upgrade.message} ${premiumPageUrl(config) ?? ''}`.trim(),
  );
}

async function explain(ctx: TunnelCommandContext, failure: GatekeeperFailure): Promise<TunnelCommandError> {
  if (failure.kind === 'network') {
    return new TunnelCommandError(
      `Could not reach the Gatekeeper at ${ctx.client.baseUrl}: ${failure.message}`,
    );
  }
  if (failure.code === 'premium_required') return premiumNeeded(ctx);
  if (failure.status === 401) {
    return new TunnelCommandError(
      `The Gatekeeper did not accept your licence (${failure.code}). Run "overlay-daemon login" again.`,
    );
  }
  return new TunnelCommandError(`The Gatekeeper refused (${failure.code}): ${failure.message}`);
}

/**
 * Before anything else of `tunnel up`: signed in, and not on the free tier as far as this machine
 * knows (the Gatekeeper has the last word when provisioning). Says so before asking for cloudflared.
 */
export async function checkTunnelAllowed(ctx: TunnelCommandContext): Promise<void> {
  const { tier } = await signedIn(ctx.dataDir);
  if (tier === 'free') throw await premiumNeeded(ctx);
}

/** Exits early with the install hint: provisioning a tunnel nobody can connect helps no one. */
export async function requireCloudflared(executable: string): Promise<string> {
  const found = await findExecutable(executable);
  if (!found) {
    throw new TunnelCommandError(
      `cloudflared was not found ("${executable}"): install it from ${CLOUDFLARED_DOWNLOAD_URL} or pass --cloudflared PATH.`,
    );
  }
  return found;
}

/** Provisions the tunnel (the Gatekeeper returns the same one when it exists) and stores it for the daemon. */
export async function tunnelUp(ctx: TunnelCommandContext): Promise<TunnelRecord> {
  const { token, userId } = await signedIn(ctx.dataDir);
  const result = await ctx.client.provisionTunnel(token, userId);
  if (!result.ok) throw await explain(ctx, result);
  const record: TunnelRecord = { ...result.value, user_id: userId };
  await writeTunnelFile(dataDirPaths(ctx.dataDir).tunnelFile, record);
  return record;
}

/** Deletes the tunnel at the Gatekeeper (releasing its subdomain) and forgets it locally. */
export async function tunnelDown(ctx: TunnelCommandContext): Promise<'deleted' | 'none'> {
  const { token, userId } = await signedIn(ctx.dataDir);
  const result = await ctx.client.deleteTunnel(token, userId);
  if (!result.ok && !(result.kind === 'http' && result.code === 'not_found'))
    throw await explain(ctx, result);
  await removeTunnelFile(dataDirPaths(ctx.dataDir).tunnelFile);
  return result.ok ? 'deleted' : 'none';
}

export async function tunnelStatusLines(ctx: TunnelCommandContext): Promise<string[]> {
  const { token, userId } = await signedIn(ctx.dataDir);
  const result = await ctx.client.tunnelStatus(token, userId);
  const local = await readTunnelFile(dataDirPaths(ctx.dataDir).tunnelFile);
  if (!result.ok) {
    if (result.kind === 'http' && result.code === 'not_found') {
      return ['No tunnel. Run "overlay-daemon tunnel up" to create one.'];
    }
    throw await explain(ctx, result);
  }
  const s = result.value;
  const connections = s.active ? ` (${s.connections} connection${s.connections === 1 ? '' : 's'})` : '';
  return [
    `tunnel ${s.subdomain}: ${s.state}${connections}`,
    `public URL: ${s.public_url}`,
    `created: ${localTime(s.created_at)}`,
    ...(local.ok && !local.record
      ? ['(not stored in this data directory: run "overlay-daemon tunnel up")']
      : []),
  ];
}

/** Public addresses of the overlays in the data directory, for printing after `tunnel up`. */
export async function publicOverlayUrls(dataDir: string, publicUrl: string): Promise<string[]> {
  const dir = dataDirPaths(dataDir).overlaysDir;
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8').catch(() => '');
    const parsed = parseJsonWith(Overlay, text);
    // A file that does not parse is reported by the daemon itself.
    if (parsed.ok) lines.push(`overlay "${parsed.value.name}": ${publicUrl}/overlay/${parsed.value.id}`);
  }
  return lines;
}
