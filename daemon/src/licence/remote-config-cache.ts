// The last remote configuration the Gatekeeper served, kept in the data dir so limits hold offline (decisions §2).
import { readFile } from 'node:fs/promises';
import {
  DEFAULT_CONFIG,
  type RemoteConfig,
  RemoteConfig as RemoteConfigSchema,
} from '../../../shared/config.js';
import { parseJsonWith } from '../../../shared/protocol/index.js';
import { writeFileAtomic } from '../store/atomic-file.js';

/** The cached copy, or the bundled default when there is none or it no longer parses. */
export async function readCachedConfig(path: string): Promise<RemoteConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return DEFAULT_CONFIG;
  }
  const parsed = parseJsonWith(RemoteConfigSchema, text);
  return parsed.ok ? parsed.value : DEFAULT_CONFIG;
}

export async function writeCachedConfig(path: string, config: RemoteConfig): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`);
}
