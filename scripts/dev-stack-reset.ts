// What `npm run dev:stack` starts afresh on each run, and the words it prints for it. The stand-ins (fake
// Cloudflare, Kick, Twitch, YouTube) keep nothing between runs and the Gatekeeper signs with a new key,
// so a sign-in, a tunnel or a link of an earlier run would point at things that no longer exist: they are
// removed, and the overlays, rules, media and history the daemon keeps stay.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TWITCH_FILE } from '../daemon/src/sources/twitch/auth.js';
import { YOUTUBE_FILE } from '../daemon/src/sources/youtube/token-file.js';
import { dataDirPaths } from '../daemon/src/store/data-dir.js';

/** The Gatekeeper's storage under `wrangler dev --persist-to` (KV, Durable Objects, R2). */
const GATEKEEPER_STORAGE = 'v3';

/**
 * Removes what an earlier run left that this run's stand-ins would not know, and says what it removed in
 * one paragraph; undefined on a first run (nothing to reset).
 */
export function resetEarlierRun(stateDir: string, dataDir: string): string | undefined {
  const paths = dataDirPaths(dataDir);
  const parts: [string, string][] = [
    [
      join(stateDir, GATEKEEPER_STORAGE),
      "the Gatekeeper's storage (members' sign-ins, tunnels, the Kick link)",
    ],
    [paths.licenseFile, "the daemon's licence"],
    [paths.jwksFile, "the Gatekeeper's keys it cached"],
    [paths.tunnelFile, 'the tunnel'],
    [join(dataDir, TWITCH_FILE), 'the Twitch sign-in'],
    [join(dataDir, YOUTUBE_FILE), 'the YouTube sign-in'],
  ];
  const removed = parts.filter(([path]) => existsSync(path));
  if (removed.length === 0) return undefined;
  for (const [path] of removed) rmSync(path, { recursive: true, force: true });
  return (
    `Started afresh from the last run: ${removed.map(([, what]) => what).join(', ')} ` +
    'were removed, because the stand-ins keep nothing between runs and the Gatekeeper signs with a new key. ' +
    'The overlays, rules, media and history are kept. Sign in again (step 1 below), then tunnel up and ' +
    'connect kick as before.'
  );
}
