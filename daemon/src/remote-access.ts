// Wires licence and tunnel into a running daemon: GET /status fields, tier limits, the connector, file watches.
import type { RunningDaemon } from './daemon.js';
import { GatekeeperClient, gatekeeperUrl } from './licence/gatekeeper-client.js';
import { LicenceManager, type LicenceStatus } from './licence/licence-manager.js';
import { dataDirPaths } from './store/data-dir.js';
import type { SupervisorOptions } from './tunnel/cloudflared.js';
import { TunnelService } from './tunnel/tunnel-service.js';

interface RemoteAccessOptions {
  /** --gatekeeper (else $OVERLAY_GATEKEEPER_URL, else the default). */
  gatekeeper?: string | undefined;
  /** --cloudflared (else `cloudflared` on PATH). */
  cloudflared?: string | undefined;
  log?: (line: string) => void;
  supervisor?: Pick<SupervisorOptions, 'backoff' | 'env'>;
  /** A manager made beforehand (its limits are handed to startDaemon); else one is made here. */
  licence?: LicenceManager;
}

/** The daemon's licence, talking to the Gatekeeper chosen by --gatekeeper / $OVERLAY_GATEKEEPER_URL. */
export function createLicenceManager(
  dataDir: string,
  options: Pick<RemoteAccessOptions, 'gatekeeper' | 'log'> = {},
): LicenceManager {
  const log = options.log ?? ((line: string) => console.error(line));
  return new LicenceManager({
    dataDir,
    client: new GatekeeperClient(gatekeeperUrl(options.gatekeeper)),
    log: (line) => log(`[licence] ${line}`),
  });
}

export interface RemoteAccess {
  licence: LicenceManager;
  tunnel: TunnelService;
  /** The first validation with the Gatekeeper (the daemon does not wait for it to serve). */
  firstCheck: Promise<LicenceStatus>;
  close(): Promise<void>;
}

type DaemonSeams = Pick<RunningDaemon, 'dataDir' | 'files' | 'statusFields' | 'overlays'> & {
  tunnelHost: string | undefined;
};

export async function startRemoteAccess(
  daemon: DaemonSeams,
  options: RemoteAccessOptions = {},
): Promise<RemoteAccess> {
  const log = options.log ?? ((line: string) => console.error(line));
  const root = daemon.dataDir.root;
  const licence = options.licence ?? createLicenceManager(root, options);
  await licence.load();
  const tunnel = new TunnelService({
    dataDir: root,
    executable: options.cloudflared ?? 'cloudflared',
    canUseTunnel: () => licence.canUseTunnel(),
    setTunnelHost: (host) => {
      daemon.tunnelHost = host;
    },
    overlays: () => daemon.overlays.list(),
    log,
    ...(options.supervisor ? { supervisor: options.supervisor } : {}),
  });
  daemon.statusFields.set('licence', () => licence.status());
  daemon.statusFields.set('tunnel', () => tunnel.status());
  licence.on('change', () => void tunnel.sync());

  // `login`, `logout` and `tunnel up/down` run as separate processes and leave their result in the data
  // dir, followed through the daemon's file watcher.
  const unwatchLicence = daemon.files.watch(licence.licenceFile, () => void licence.reloadIfChanged());
  const unwatchTunnel = daemon.files.watch(dataDirPaths(root).tunnelFile, () => void tunnel.sync());

  await tunnel.sync();
  const firstCheck = licence.refresh();

  return {
    licence,
    tunnel,
    firstCheck,
    async close() {
      unwatchLicence();
      unwatchTunnel();
      await licence.close();
      await tunnel.close();
    },
  };
}
