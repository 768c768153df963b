// Starts the real daemon on a free port with a fresh data directory, for suites under test/.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DaemonOptions, type RunningDaemon, startDaemon } from '../../daemon/src/daemon.js';

export interface TestDaemon extends RunningDaemon {
  /** Stops the daemon and removes its data directory. */
  stop(): Promise<void>;
}

export async function makeDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'overlay-daemon-test-'));
}

export async function startTestDaemon(options: Partial<DaemonOptions> = {}): Promise<TestDaemon> {
  const dataDir = options.dataDir ?? (await makeDataDir());
  const daemon = await startDaemon({ port: 0, host: '127.0.0.1', ...options, dataDir });
  return {
    ...daemon,
    async stop() {
      await daemon.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
