// What a sign-in gives this computer, said after `overlay-daemon login`: the licence verified as the daemon
// verifies it (the Gatekeeper's keys, fetched again when the cached ones do not verify it), and what the
// running daemon of the data directory says once it has read the new licence.
import { DaemonStatus, type LicenceStatus, parseWith } from '../../../shared/protocol/index.js';
import { statusLines } from '../../../shared/status-text.js';
import type { GatekeeperClient } from '../licence/gatekeeper-client.js';
import { LicenceManager } from '../licence/licence-manager.js';
import { locateDaemon } from './locate.js';

/** How long `login` waits for the running daemon to take the new licence up (it watches license.json). */
const RUNNING_WAIT_MS = 5000;
const RUNNING_POLL_MS = 200;

/** The licence's line of `overlay-daemon status`: "premium tier, valid, until 23:15". */
export function licenceWords(licence: LicenceStatus): string {
  const line = statusLines({ running: true, port: 0, licence }).find((l) => l.part === 'licence');
  return line?.text ?? `${licence.tier} tier`;
}

/** The verdict on the stored licence, reached as the daemon reaches it; `why` when it does not verify. */
export async function verifyStoredLicence(
  dataDir: string,
  client: GatekeeperClient,
): Promise<{ status: LicenceStatus; why: string | undefined }> {
  const lines: string[] = [];
  const manager = new LicenceManager({ dataDir, client, log: (line) => lines.push(line) });
  try {
    const status = await manager.load();
    const why = /does not verify \((.+)\): free tier$/.exec(
      lines.find((l) => l.includes('does not verify')) ?? '',
    );
    return { status, why: why?.[1] };
  } finally {
    manager.stop();
  }
}

/**
 * The licence the running daemon of `dataDir` reports, once it matches `expected` (it reads the new
 * license.json within a moment) or after a few seconds; undefined when no daemon answers.
 */
export async function runningDaemonLicence(
  values: { port?: string | undefined; host?: string | undefined; 'data-dir'?: string | undefined },
  expected: LicenceStatus,
  timing: { waitMs?: number; pollMs?: number } = {},
): Promise<{ baseUrl: string; licence: LicenceStatus } | undefined> {
  const { baseUrl } = await locateDaemon(values);
  const deadline = Date.now() + (timing.waitMs ?? RUNNING_WAIT_MS);
  let last: LicenceStatus | undefined;
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/status`, { signal: AbortSignal.timeout(2000) });
      const body = parseWith(DaemonStatus, await res.json());
      if (!res.ok || !body.ok || !body.value.licence) return last && { baseUrl, licence: last };
      last = body.value.licence;
    } catch {
      return last && { baseUrl, licence: last };
    }
    if (last.tier === expected.tier && last.state === expected.state) return { baseUrl, licence: last };
    if (Date.now() >= deadline) return { baseUrl, licence: last };
    await new Promise((resolve) => setTimeout(resolve, timing.pollMs ?? RUNNING_POLL_MS));
  }
}
