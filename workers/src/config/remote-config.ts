// The remote configuration (decisions §2): KV key `config` when present and valid, else the bundled default.
import { DEFAULT_CONFIG, RemoteConfig } from '../../../shared/config.js';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';

const CONFIG_KEY = 'config';

/**
 * Operators edit `config` in KV without a deploy. A value that does not match the schema is logged
 * and ignored: a typo must not take every client's configuration down with it.
 */
export async function loadRemoteConfig(env: GatekeeperEnv): Promise<RemoteConfig> {
  const text = await env.GATEKEEPER_KV.get(CONFIG_KEY, { type: 'text', cacheTtl: 60 });
  if (text === null) return DEFAULT_CONFIG;
  const parsed = parseJsonWith(RemoteConfig, text);
  if (parsed.ok) return parsed.value;
  console.error(
    `KV "${CONFIG_KEY}" is not a valid remote configuration (${parsed.error}); serving the default`,
  );
  return DEFAULT_CONFIG;
}
