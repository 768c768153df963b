// `overlay-daemon devices [--revoke ID]` and `overlay-daemon pair [--role owner|moderator]`: the paired
// devices and pairing a phone, through the running server's control API with the data directory's key.
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { renderUnicodeCompact } from 'uqr';
import * as v from 'valibot';
import { forAndUntil, localTime } from '../../../shared/local-time.js';
import {
  DeviceRole,
  DeviceView,
  PairingOffer,
  PendingPairing,
  parseWith,
} from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import { dataDirPaths, readAdminKey } from '../store/data-dir.js';
import { describeLookup, locateDaemon } from './locate.js';
import { describeParseError, usageLine } from './usage-error.js';

export const DEVICES_HELP = `Usage: overlay-daemon devices [--revoke ID] [--port N] [--host ADDR] [--data-dir DIR]

Lists the devices paired with the overlay server running on this machine (name, role, last seen,
last address), or with --revoke ID revokes one at once: its cookie no longer works.

Options:
  --revoke ID       revoke the device with this id
  --port N          the server's port (default: where the daemon of --data-dir listens)
  --host ADDR       the server's address (default 127.0.0.1)
  --data-dir DIR    the server's data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  -h, --help        show this help
`;

export const PAIR_HELP = `Usage: overlay-daemon pair [--role owner|moderator] [--port N] [--host ADDR] [--data-dir DIR]

Pairs a phone (or another computer) with the overlay server through its tunnel: prints a code, the
URL to open on the phone and a QR code of it, waits up to the code's 10 minutes for the phone, then
asks whether to approve it. The tunnel must be running (overlay-daemon tunnel up).

Options:
  --role ROLE       moderator (the default: status, history, tests, skip/clear) or owner
  --port N, --host ADDR, --data-dir DIR   where the server is, as for "overlay-daemon status"
  -h, --help        show this help
`;

export interface DevicesCliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Asks a question on the terminal; the answer typed. */
  ask?: (question: string) => Promise<string>;
  /** How long to wait between looks for the phone (1 s). */
  pollMs?: number;
  /** The clock the offer's expiry is read against (`Date.now`). */
  now?: () => number;
}

export const COMMON = {
  port: { type: 'string' },
  host: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface Api {
  call(method: string, path: string, body?: unknown): Promise<Response>;
}

/** The running server and its key, or a message saying why there is none. */
export async function connect(values: {
  port?: string | undefined;
  host?: string | undefined;
  'data-dir'?: string | undefined;
}): Promise<Api | string> {
  const located = await locateDaemon(values);
  let key: string;
  try {
    key = await readAdminKey(dataDirPaths(located.dataDir));
  } catch {
    return `no admin key in ${located.dataDir}; start the server once with this --data-dir`;
  }
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${located.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(5000),
    });
  try {
    await call('GET', '/api/devices');
  } catch {
    return `no overlay server is answering at ${located.baseUrl} (${describeLookup(located)}); start it first`;
  }
  return { call };
}

export async function failure(res: Response): Promise<string> {
  const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
  return body?.error?.message ?? `the server answered ${res.status}`;
}

export function parseOrUsage<T>(
  io: DevicesCliIo,
  help: string,
  parse: () => T,
  known: string[],
): T | undefined {
  try {
    return parse();
  } catch (err) {
    io.err(`overlay-daemon: ${describeParseError(err, known) ?? errorMessage(err)}\n${usageLine(help)}\n`);
    return undefined;
  }
}

/** Local time, as `overlay-daemon status` and the dashboard say it. */
const when = (iso: string | null) => (iso ? localTime(iso) : 'never');

export async function runDevicesCommand(argv: string[], io: DevicesCliIo): Promise<number> {
  const parsed = parseOrUsage(
    io,
    DEVICES_HELP,
    () =>
      parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: { ...COMMON, revoke: { type: 'string' } },
      }),
    ['revoke', ...Object.keys(COMMON)],
  );
  if (!parsed) return 2;
  if (parsed.values.help) {
    io.out(DEVICES_HELP);
    return 0;
  }
  const api = await connect(parsed.values);
  if (typeof api === 'string') {
    io.err(`overlay-daemon: ${api}\n`);
    return 1;
  }
  const id = parsed.values.revoke;
  if (id !== undefined) {
    const res = await api.call('DELETE', `/api/devices/${encodeURIComponent(id)}`);
    if (res.status === 404) {
      io.err(`overlay-daemon: no paired device has the id ${id} (run "overlay-daemon devices")\n`);
      return 1;
    }
    if (!res.ok) {
      io.err(`overlay-daemon: ${await failure(res)}\n`);
      return 1;
    }
    io.out(`Device ${id} revoked: it can no longer reach the dashboard.\n`);
    return 0;
  }
  const res = await api.call('GET', '/api/devices');
  const list = parseWith(v.array(DeviceView), await res.json());
  if (!res.ok || !list.ok) {
    io.err(`overlay-daemon: the device list could not be read\n`);
    return 1;
  }
  if (list.value.length === 0) {
    io.out('No paired devices. Pair a phone with: overlay-daemon pair\n');
    return 0;
  }
  for (const d of list.value) {
    io.out(
      `${d.id}  ${d.name}  ${d.role}  last seen ${when(d.lastSeenAt)}${d.lastIp ? ` from ${d.lastIp}` : ''}  (paired ${when(d.createdAt)})\n`,
    );
  }
  return 0;
}

async function terminalAsk(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

export async function runPairCommand(argv: string[], io: DevicesCliIo): Promise<number> {
  const parsed = parseOrUsage(
    io,
    PAIR_HELP,
    () =>
      parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: { ...COMMON, role: { type: 'string' } },
      }),
    ['role', ...Object.keys(COMMON)],
  );
  if (!parsed) return 2;
  if (parsed.values.help) {
    io.out(PAIR_HELP);
    return 0;
  }
  const role = parsed.values.role === undefined ? undefined : parseWith(DeviceRole, parsed.values.role);
  if (role && !role.ok) {
    io.err('overlay-daemon: --role is owner or moderator\n');
    return 2;
  }
  const api = await connect(parsed.values);
  if (typeof api === 'string') {
    io.err(`overlay-daemon: ${api}\n`);
    return 1;
  }
  const res = await api.call('POST', '/api/pairings/offer', role ? { role: role.value } : {});
  const offer = res.ok ? parseWith(PairingOffer, await res.json()) : undefined;
  if (!offer?.ok) {
    io.err(`overlay-daemon: ${offer ? 'the offer could not be read' : await failure(res)}\n`);
    return 1;
  }
  const { code, url, expiresAt } = offer.value;
  const now = io.now ?? Date.now;
  io.out(
    `Pairing code: ${code} (${offer.value.role}, valid for ${forAndUntil(expiresAt, new Date(now()))}, once)\n` +
      `On the phone, open: ${url}\n\n${url ? renderUnicodeCompact(url) : ''}\n\nWaiting for the phone…\n`,
  );
  const pollMs = io.pollMs ?? 1000;
  const seen = new Set<string>();
  while (now() < Date.parse(expiresAt)) {
    const list = await api.call('GET', '/api/pairings');
    const pending = parseWith(v.array(PendingPairing), await list.json());
    const next = pending.ok ? pending.value.find((p) => !seen.has(p.pairingId)) : undefined;
    if (next) {
      seen.add(next.pairingId);
      const answer = await (io.ask ?? terminalAsk)(
        `"${next.deviceName}" asks to pair from ${next.ip} as ${next.role}. Approve? [y/N] `,
      );
      const yes = /^y(es)?$/i.test(answer.trim());
      const done = await api.call('POST', `/api/pairings/${next.pairingId}/${yes ? 'approve' : 'refuse'}`);
      if (!done.ok) {
        io.err(`overlay-daemon: ${await failure(done)}\n`);
        return 1;
      }
      io.out(yes ? `Paired "${next.deviceName}" as ${next.role}.\n` : `Refused "${next.deviceName}".\n`);
      return yes ? 0 : 1;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  io.err('overlay-daemon: the code expired before a phone used it; run "overlay-daemon pair" again\n');
  return 1;
}
