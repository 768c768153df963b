// The `overlay-daemon` command line (decisions §3): start (the default) and status.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { backupFileName } from '../../../shared/backup.js';
import { DEFAULT_CONFIG } from '../../../shared/config.js';
import { DaemonStatus, parseWith } from '../../../shared/protocol/index.js';
import {
  channelProblem,
  normaliseChannel,
  SOURCE_PLATFORMS,
  type SourceEntry,
} from '../../../shared/settings.js';
import { BackupError, createBackup, restoreBackup } from '../backup/backup.js';
import { DEFAULT_HOST, DEFAULT_PORT, type RunningDaemon, startDaemon } from '../daemon.js';
import { DeviceStore } from '../devices/store.js';
import { errorMessage } from '../errors.js';
import { dashboardSignInUrl } from '../http/dashboard.js';
import { isLoopbackIp } from '../http/policy.js';
import { gatekeeperUrl } from '../licence/gatekeeper-client.js';
import { safeLogLine } from '../log-line.js';
import { PACKAGE_VERSION } from '../package-root.js';
import { whenParentGone } from '../parent-watch.js';
import { createLicenceManager, type RemoteAccess, startRemoteAccess } from '../remote-access.js';
import type { ConfigArrival } from '../sources/credentials.js';
import { PlatformUrlError, type PlatformUrls, platformUrlsFromEnv } from '../sources/platform-urls.js';
import {
  type DataDir,
  DataDirError,
  dataDirPaths,
  defaultDataDir,
  readAdminKey,
  rotateAdminKey,
} from '../store/data-dir.js';
import { type DataDirLock, lockDataDir, readRunningDaemon } from '../store/running-daemon.js';
import { CONNECT_HELP, runConnectCommand } from './connect.js';
import { DASHBOARD_HELP, runDashboardCommand } from './dashboard.js';
import { DEVICES_HELP, PAIR_HELP, runDevicesCommand, runPairCommand } from './devices.js';
import { EVENT_HELP, runEventCommand } from './event.js';
import { describeLookup, locateDaemon, portFrom } from './locate.js';
import { RELAY_HELP, runRelayCommand } from './relay.js';
import { LOGIN_HELP, LOGOUT_HELP, type RemoteCommand, runRemoteCommand, TUNNEL_HELP } from './remote.js';
import { describeDaemonStatus } from './status-text.js';
import { describeParseError, UsageError, usageLine, wholeNumberIn } from './usage-error.js';

const MAIN_HELP = `overlay-daemon ${PACKAGE_VERSION}: browser-source overlays for live-streamers

Usage:
  overlay-daemon [start] [options]   run the overlay server (the default command)
  overlay-daemon status [--port N]   ask a running overlay server how it is
  overlay-daemon login | logout      sign in to (or out of) your membership for Premium
  overlay-daemon tunnel up | down | status   remote access at https://<your subdomain> (Premium)
  overlay-daemon event <type> [options]      send a test stream event (gift, like, chat…) to the server
  overlay-daemon dashboard [--port N]        open the dashboard of the running server, signed in
  overlay-daemon new-key [--data-dir DIR]    replace the admin key (old sign-in links and paired devices stop working)
  overlay-daemon pair [--role ROLE]          pair a phone through the tunnel (code + QR code), then approve it
  overlay-daemon devices [--revoke ID]       list the paired devices, or revoke one
  overlay-daemon relay take-back ID          publish a public overlay from here again after another daemon took it
  overlay-daemon connect twitch      sign in to Twitch for follows, subs, cheers, raids (disconnect twitch to undo)
  overlay-daemon connect kick        link Kick for follows, subs, gifts, also while off (disconnect kick to undo)
  overlay-daemon connect youtube     sign in to YouTube so chat actions write in your live chat (disconnect youtube to undo)
  overlay-daemon backup [FILE]       one .tar.gz of overlays, rules, media, settings and the event journal
  overlay-daemon restore FILE        put a backup in place (the current state is kept under backups/)
  overlay-daemon <command> --help    help on one command

Run "overlay-daemon start --help" for the server's options.
`;

const START_HELP = `Usage: overlay-daemon [start] [options]

Runs the overlay server and prints the URL of each overlay (paste one into an OBS Browser Source).

Options:
  --port N               port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host ADDR            address to bind (default ${DEFAULT_HOST}; anything else is reachable from your network)
  --data-dir DIR         where overlays, rules and media live (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  --dev                  serve the overlay page from its sources through Vite, with hot reload
  --init-timeout-ms N    how long a WebSocket client may take to send init (default 5000)
  --gatekeeper URL       the licence server (default: $OVERLAY_GATEKEEPER_URL, else the public one)
  --cloudflared PATH     the tunnel connector (default: cloudflared on PATH)
  --tiktok USERNAME      receive the events of this TikTok LIVE stream (state in GET /status)
  --twitch CHANNEL       also the chat (and, after "connect twitch", follows, subs, cheers, raids) of a Twitch channel
  --youtube CHANNEL      also the live chat of a YouTube channel (@handle or UC… id; needs an API key in Settings)
  --kick CHANNEL         also the chat, hosts and subs of a Kick channel (as in kick.com/CHANNEL)
  --tiktok-sign-key KEY  API key of the sign server TikTok connections go through (lifts the free
                         tier's daily limit; or $OVERLAY_TIKTOK_SIGN_KEY, which stays out of the process list)
  -h, --help             show this help
`;

const NEW_KEY_HELP = `Usage: overlay-daemon new-key [--data-dir DIR]

Replaces the admin key of the data directory. The dashboard's sign-in link carries it: after a
link was shown on stream, this makes it worthless. A running server takes the new key at once;
open dashboards ask to sign in again ("overlay-daemon dashboard" opens it signed in).

Options:
  --data-dir DIR the data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  -h, --help     show this help
`;

const BACKUP_HELP = `Usage: overlay-daemon backup [FILE] [--data-dir DIR] [--include-secrets]

Writes one .tar.gz (default: <data dir>/backups/overlay-daemon-backup-<date>T<time>Z.tar.gz) with the
overlays, rules, media, settings and a consistent copy of the event journal. It works while the
server runs.

Options:
  --include-secrets  also the settings' secrets (OBS password, YouTube key), the admin key, the
                     licence, the tunnel token and the Twitch sign-in
                     (keep such a file as private as the data directory itself)
  --data-dir DIR     the data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  -h, --help         show this help
`;

const RESTORE_HELP = `Usage: overlay-daemon restore FILE [--data-dir DIR]

Puts a backup in place. Every file in it is checked first; if any is wrong, nothing changes. The
current overlays, rules, media, settings and journal move to <data dir>/backups/<time>/. Stop the
server first.

Options:
  --data-dir DIR the data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  -h, --help     show this help
`;

const STATUS_HELP = `Usage: overlay-daemon status [--data-dir DIR] [--port N] [--host ADDR] [--json]

Asks the overlay server on this machine for GET /status and says what it answered: the
licence, remote access and TikTok LIVE. Exits 0 when it is running, 1 when it is not reachable.
The server is found through its data directory (it records where it listens in daemon.json).

Options:
  --data-dir DIR the server's data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  --port N       the server's port, instead of looking it up (or $OVERLAY_PORT; default ${DEFAULT_PORT})
  --host ADDR    the server's address (default ${DEFAULT_HOST})
  --json         print GET /status as JSON
  -h, --help     show this help
`;

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || isLoopbackIp(host);
}

/** Every option of every command but `event` (which has its own). */
const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  dev: { type: 'boolean' },
  'init-timeout-ms': { type: 'string' },
  gatekeeper: { type: 'string' },
  cloudflared: { type: 'string' },
  tiktok: { type: 'string' },
  twitch: { type: 'string' },
  youtube: { type: 'string' },
  kick: { type: 'string' },
  'tiktok-sign-key': { type: 'string' },
  'include-secrets': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parseCommandLine(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
}

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM). */
  stopSignal: () => Promise<string>;
  /** The server has stopped: nothing of it may keep the process alive any more. */
  stopped?: () => void;
}

/** How long a stopped server's process may take to end by itself before it is ended. */
const EXIT_GRACE_MS = 1000;

/** How often the server checks that the process that started it is still there. */
const PARENT_CHECK_MS = 500;

/** stdout and stderr whose reader went away (EPIPE): closed for good, what follows is dropped. */
const closedOutputs = new Set<NodeJS.WriteStream>();

/**
 * The reader of stdout or stderr may go away (`overlay-daemon tunnel up | head -1`): its EPIPE closes
 * that output for good, for this program's lines and any library's `console` alike. The command goes on
 * to its own end and status (a server keeps serving), with no unhandled error and no stack trace.
 */
function guardProcessOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.listeners('error').includes(onOutputError)) stream.on('error', onOutputError);
  }
}

function onOutputError(this: NodeJS.WriteStream, err: NodeJS.ErrnoException): void {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
  closedOutputs.add(this);
}

const writeTo = (stream: NodeJS.WriteStream) => (text: string) => {
  if (!closedOutputs.has(stream)) stream.write(text);
};

const processIo: CliIo = {
  out: writeTo(process.stdout),
  err: writeTo(process.stderr),
  stopSignal: () =>
    new Promise((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGHUP', () => resolve('SIGHUP'));
      // `npx overlay-daemon` runs this under `npm exec` and `sh -c`: when the process that started it
      // goes away, it stops as for a signal.
      whenParentGone(() => resolve('the process that started it exited'), PARENT_CHECK_MS);
    }),
  // A socket a library left open (a connect to an unreachable host) does not hold the terminal: the
  // process ends with the exit status set by then.
  stopped: () => {
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  },
};

/** One command of the table: its name, its help, and how it runs once the shared options are parsed. */
interface Command {
  name: string;
  help: () => string;
  /** `event` has options of its own (--user, --gift …), so it parses its arguments itself. */
  ownArguments?: (argv: string[], io: CliIo) => Promise<number>;
  run?: (values: Values, positionals: string[], io: CliIo) => Promise<number>;
}

const noMoreArguments = (positionals: string[]): void => {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
};

const remote = (name: RemoteCommand, help: string): Command => ({
  name,
  help: () => help,
  run: (values, positionals, io) =>
    runRemoteCommand(name, positionals[0], values, io, () => start(values, io)),
});

const COMMANDS: readonly Command[] = [
  {
    name: 'start',
    help: () => START_HELP,
    run: (values, positionals, io) => {
      noMoreArguments(positionals);
      return start(values, io);
    },
  },
  {
    name: 'status',
    help: () => STATUS_HELP,
    run: (values, positionals, io) => {
      noMoreArguments(positionals);
      return status(values, io);
    },
  },
  remote('login', LOGIN_HELP),
  remote('logout', LOGOUT_HELP),
  remote('tunnel', TUNNEL_HELP),
  { name: 'event', help: () => EVENT_HELP, ownArguments: runEventCommand },
  { name: 'devices', help: () => DEVICES_HELP, ownArguments: runDevicesCommand },
  { name: 'pair', help: () => PAIR_HELP, ownArguments: runPairCommand },
  { name: 'relay', help: () => RELAY_HELP, ownArguments: runRelayCommand },
  {
    name: 'new-key',
    help: () => NEW_KEY_HELP,
    run: async (values, positionals, io) => {
      noMoreArguments(positionals);
      const dataDir = values['data-dir'] ?? defaultDataDir();
      let dirs: DataDir;
      try {
        dirs = dataDirPaths(dataDir);
        await readAdminKey(dirs);
      } catch {
        io.err(`overlay-daemon: no admin key in ${dataDir}; start the server once with this --data-dir\n`);
        return 1;
      }
      // Every paired device is revoked with the old key (a running server does the same when it sees the new key).
      const revoked = await (await DeviceStore.open(dirs.root)).revokeAll();
      await rotateAdminKey(dirs);
      io.out(
        'New admin key written. Sign-in links with the old key no longer work, and open dashboards ask to sign in again.\n' +
          (revoked > 0
            ? `${revoked} paired device(s) revoked: pair them again with overlay-daemon pair.\n`
            : '') +
          'Open the dashboard with: overlay-daemon dashboard\n',
      );
      return 0;
    },
  },
  {
    name: 'connect',
    help: () => CONNECT_HELP,
    run: (values, positionals, io) => {
      noMoreArguments(positionals.slice(1));
      return runConnectCommand('connect', positionals[0], values, io);
    },
  },
  {
    name: 'disconnect',
    help: () => CONNECT_HELP,
    run: (values, positionals, io) => {
      noMoreArguments(positionals.slice(1));
      return runConnectCommand('disconnect', positionals[0], values, io);
    },
  },
  {
    name: 'backup',
    help: () => BACKUP_HELP,
    run: async (values, positionals, io) => {
      if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
      const dirs = dataDirPaths(values['data-dir'] ?? defaultDataDir());
      if (!existsSync(dirs.root)) {
        io.err(`overlay-daemon: there is no data directory at ${dirs.root}\n`);
        return 1;
      }
      const now = new Date();
      // Without a FILE, the data directory's backups/ folder: never the folder the command runs in,
      // which may be a checkout of the project.
      const file = resolve(positionals[0] ?? join(dirs.backupsDir, backupFileName(now)));
      try {
        if (positionals[0] === undefined) await mkdir(dirs.backupsDir, { recursive: true, mode: 0o700 });
        const result = await createBackup(dirs, file, {
          includeSecrets: values['include-secrets'] === true,
          now,
        });
        io.out(
          `Backup written: ${result.file} (${result.members} files, ${(result.bytes / 1024).toFixed(0)} KiB)` +
            `${values['include-secrets'] ? ', secrets included: keep it private' : ', without secrets'}.\n`,
        );
        return 0;
      } catch (err) {
        io.err(`overlay-daemon: the backup could not be written: ${errorMessage(err)}\n`);
        return 1;
      }
    },
  },
  {
    name: 'restore',
    help: () => RESTORE_HELP,
    run: async (values, positionals, io) => {
      const [file, extra] = positionals;
      if (!file) throw new UsageError('restore needs the backup file');
      if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
      const dirs = dataDirPaths(values['data-dir'] ?? defaultDataDir());
      const running = await readRunningDaemon(dirs.daemonFile);
      if (running) {
        io.err(`overlay-daemon: the server is running on ${running.url}; stop it first, then restore\n`);
        return 1;
      }
      await mkdir(dirs.root, { recursive: true, mode: 0o700 });
      // A daemon starting meanwhile (or one whose daemon.json is gone) holds the lock: never restore under it.
      let lock: DataDirLock;
      try {
        lock = await lockDataDir(dirs);
      } catch (err) {
        io.err(`overlay-daemon: ${errorMessage(err)}; nothing was restored\n`);
        return 1;
      }
      try {
        const { keptIn, manifest } = await restoreBackup(dirs, resolve(file));
        io.out(`Restored the backup of ${manifest.createdAt}. What was there before is in ${keptIn}.\n`);
        return 0;
      } catch (err) {
        const why = err instanceof BackupError ? err.message : errorMessage(err);
        io.err(`overlay-daemon: ${file} was not restored, nothing changed: ${why}\n`);
        return 1;
      } finally {
        await lock.release();
      }
    },
  },
  {
    name: 'dashboard',
    help: () => DASHBOARD_HELP,
    run: (values, positionals, io) => {
      noMoreArguments(positionals);
      return locateDaemon(values).then(({ baseUrl, dataDir }) =>
        runDashboardCommand({ baseUrl, dataDir, out: io.out, err: io.err }),
      );
    },
  },
];

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  if (io === processIo) guardProcessOutput();
  const named = COMMANDS.find((c) => c.name === argv[0]);
  if (named?.ownArguments) return await named.ownArguments(argv.slice(1), io);
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (err) {
    // A typo (`--prot`) is named in words, with the usage line of the command it was meant for.
    const said = describeParseError(err, Object.keys(OPTIONS)) ?? errorMessage(err);
    const meant = COMMANDS.find((c) => argv.includes(c.name)) ?? COMMANDS[0];
    const help = meant ? usageLine(meant.help()) : '';
    io.err(
      `overlay-daemon: ${said}\n${help ? `${help}\n` : ''}Run "overlay-daemon${meant && meant.name !== 'start' ? ` ${meant.name}` : ''} --help" for usage.\n`,
    );
    return 2;
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  // No command: the server (the default), and `--help` alone is the overview.
  const command = name === undefined ? COMMANDS[0] : COMMANDS.find((c) => c.name === name);
  if (command?.run === undefined) {
    io.err(`overlay-daemon: unknown command "${name}". Run "overlay-daemon --help".\n`);
    return 2;
  }
  if (values.help) {
    io.out(name === undefined ? MAIN_HELP : command.help());
    return 0;
  }
  try {
    return await command.run(values, rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`overlay-daemon: ${err.message}. Run "overlay-daemon --help".\n`);
      return 2;
    }
    throw err;
  }
}

type Values = ReturnType<typeof parseCommandLine>['values'];

/** `--tiktok`, `--twitch`, `--youtube`, `--kick`: sources for this run, checked before anything starts. */
function commandLineSources(values: Values): SourceEntry[] {
  const sources: SourceEntry[] = [];
  for (const platform of SOURCE_PLATFORMS) {
    const channel = values[platform]?.trim();
    if (channel === undefined) continue;
    const problem = channelProblem(platform, channel);
    if (problem) throw new UsageError(`--${platform} ${problem}, got "${channel}"`);
    sources.push({ platform, channel: normaliseChannel(platform, channel), enabled: true });
  }
  return sources;
}

async function start(values: Values, io: CliIo): Promise<number> {
  const port =
    portFrom('--port', values.port, 0) ??
    portFrom('$OVERLAY_PORT', process.env.OVERLAY_PORT, 0) ??
    DEFAULT_PORT;
  const initTimeoutMs = wholeNumberIn('--init-timeout-ms', values['init-timeout-ms'], 1, 600_000) ?? 5000;
  const host = values.host ?? DEFAULT_HOST;
  const sources = commandLineSources(values);
  let platformUrls: PlatformUrls;
  try {
    platformUrls = platformUrlsFromEnv();
  } catch (err) {
    if (err instanceof PlatformUrlError) throw new UsageError(err.message);
    throw err;
  }
  if (!isLoopbackHost(host)) {
    io.err(
      `warning: --host ${host} makes the overlay server reachable from other devices on your network.\n`,
    );
  }
  const dataDir = values['data-dir'] ?? defaultDataDir();
  // Listen for SIGINT/SIGTERM before starting anything, so a stop during start-up is still clean. The
  // terminal hears at once that the stop is under way, also while start-up is still going on.
  const stopped = io.stopSignal();
  void stopped.then((signal) => io.out(`${signal}: stopping…\n`));
  const remoteOptions = {
    gatekeeper: values.gatekeeper,
    cloudflared: values.cloudflared,
    log: (line: string) => io.err(`${safeLogLine(line)}\n`),
  };
  const licence = createLicenceManager(dataDir, remoteOptions);
  // The Gatekeeper's config (it may give the Twitch client id and the YouTube key): a cached one counts
  // as arrived; without, it is awaited until the first check with the Gatekeeper ends, then out of reach.
  let firstCheckDone = false;
  const remoteConfigArrival = (): ConfigArrival =>
    licence.config() !== DEFAULT_CONFIG ? 'arrived' : firstCheckDone ? 'unreachable' : 'waiting';
  const signApiKey = values['tiktok-sign-key'] || process.env.OVERLAY_TIKTOK_SIGN_KEY || undefined;
  let daemon: RunningDaemon;
  try {
    daemon = await startDaemon({
      limits: licence,
      // Public overlays go to the relay of the Gatekeeper the licence is validated with.
      relay: { licence, gatekeeperUrl: gatekeeperUrl(values.gatekeeper) },
      // Kick's official events, kept by that Gatekeeper once the member linked Kick (any tier).
      kickEvents: { licence, gatekeeperUrl: gatekeeperUrl(values.gatekeeper) },
      port,
      host,
      dataDir,
      dev: values.dev === true,
      initTimeoutMs,
      sources,
      platformUrls,
      platforms: { tiktok: signApiKey ? { signApiKey } : {} },
      remoteConfig: () => licence.config(),
      remoteConfigArrival,
      log: (line) => io.err(`${safeLogLine(line)}\n`),
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (err instanceof DataDirError) {
      io.err(`overlay-daemon: ${err.message}\n`);
    } else if (e.code === 'EADDRINUSE') {
      io.err(
        `overlay-daemon: port ${port} on ${host} is already in use (is another overlay-daemon running? try --port)\n`,
      );
    } else if (e.code === 'EADDRNOTAVAIL') {
      io.err(`overlay-daemon: cannot bind ${host}: no such address on this machine\n`);
    } else if (e.code === 'EACCES') {
      io.err(
        `overlay-daemon: not allowed to listen on ${host}:${port} (ports below 1024 need special rights: try --port)\n`,
      );
    } else {
      io.err(`overlay-daemon: ${e.message}\n`);
    }
    return 1;
  }
  io.out(
    `overlay-daemon ${PACKAGE_VERSION} listening on ${daemon.url}${values.dev ? ' (dev: page served by Vite)' : ''}\n`,
  );
  io.out(`data directory: ${daemon.dataDir.root}\n`);
  for (const overlay of daemon.overlays.list()) {
    io.out(`overlay "${overlay.name}": ${daemon.url}/overlay/${overlay.id}\n`);
  }
  // The link carries the admin key, and streamers show their terminal on stream: it is printed once,
  // when the key is made; afterwards `overlay-daemon dashboard` opens it. (The key rides in the URL's
  // fragment, which browsers never send: it reaches no server log.)
  if (daemon.newAdminKey)
    io.out(`dashboard (sign-in link, keep it private): ${dashboardSignInUrl(daemon.url, daemon.adminKey)}\n`);
  else io.out('dashboard: run "overlay-daemon dashboard" to open it signed in\n');
  // Licence, tier limits and the tunnel (when `tunnel up` has stored one).
  // One lifecycle: remote access is the daemon's last part, closed first when the daemon closes.
  let remote: RemoteAccess;
  try {
    remote = await startRemoteAccess(daemon, { ...remoteOptions, licence });
  } catch (err) {
    await daemon.close();
    throw err;
  }
  daemon.onClose(() => remote.close(), 'remote access');
  void remote.firstCheck.then(
    () => {
      firstCheckDone = true;
    },
    () => {
      firstCheckDone = true;
    },
  );
  io.out('press Ctrl+C to stop\n');
  await stopped;
  // Start in reverse: remote access, then the daemon's parts. Every source's retries and timers end with
  // it; a library's request still in flight (TikTok's, to an unreachable host) would hold the process for
  // its own timeout: it is not waited for.
  await daemon.close();
  io.out('stopped\n');
  io.stopped?.();
  return 0;
}

async function status(values: Values, io: CliIo): Promise<number> {
  const located = await locateDaemon(values);
  const { baseUrl } = located;
  const url = `${baseUrl}/status`;
  let body: unknown;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    const text = await res.text();
    if (!res.ok) {
      io.err(`overlay-daemon: ${url} answered ${res.status}: ${text}\n`);
      return 1;
    }
    body = JSON.parse(text);
  } catch {
    io.err(`overlay-daemon: no overlay server is answering at ${url} (${describeLookup(located)})\n`);
    return 1;
  }
  const parsed = parseWith(DaemonStatus, body);
  if (values.json || !parsed.ok) {
    io.out(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  io.out(describeDaemonStatus(parsed.value, baseUrl));
  return 0;
}
