// `overlay-daemon relay take-back OVERLAY_ID`: publishes a public overlay from this machine again after
// another daemon with a copy of the licence took it over, through the running server's control API.
import { parseArgs } from 'node:util';
import { parseWith } from '../../../shared/protocol/index.js';
import { RelayStatus } from '../../../shared/protocol/relay.js';
import { COMMON, connect, type DevicesCliIo, failure, parseOrUsage } from './devices.js';

export const RELAY_HELP = `Usage: overlay-daemon relay take-back OVERLAY_ID [--port N] [--host ADDR] [--data-dir DIR]

A public overlay is published to viewers by one daemon at a time. When another daemon with a copy of
your licence publishes it, this one stops, and "overlay-daemon status" says since when and from which
address. take-back publishes it from this machine again; the other daemon is then the one that stops.
To stop a copied licence for good, "overlay-daemon logout" revokes every licence of your membership,
copies included; then "overlay-daemon login" signs this machine in again.

Options:
  --port N, --host ADDR, --data-dir DIR   where the server is, as for "overlay-daemon status"
  -h, --help        show this help
`;

export async function runRelayCommand(argv: string[], io: DevicesCliIo): Promise<number> {
  const parsed = parseOrUsage(
    io,
    RELAY_HELP,
    () => parseArgs({ args: argv, strict: true, allowPositionals: true, options: COMMON }),
    Object.keys(COMMON),
  );
  if (!parsed) return 2;
  if (parsed.values.help) {
    io.out(RELAY_HELP);
    return 0;
  }
  const [verb, overlayId, ...rest] = parsed.positionals;
  if (verb !== 'take-back' || overlayId === undefined || rest.length > 0) {
    io.err(`overlay-daemon: say "relay take-back OVERLAY_ID"\n${RELAY_HELP}`);
    return 2;
  }
  const api = await connect(parsed.values);
  if (typeof api === 'string') {
    io.err(`overlay-daemon: ${api}\n`);
    return 1;
  }
  const res = await api.call('POST', `/api/relay/${encodeURIComponent(overlayId)}/take-back`);
  if (!res.ok) {
    io.err(`overlay-daemon: ${await failure(res)}\n`);
    return 1;
  }
  const entry = parseWith(RelayStatus, await res.json());
  const state = entry.ok ? entry.value.state : 'unknown';
  io.out(
    state === 'connected'
      ? `Overlay ${overlayId} is published from this machine.\n`
      : `Overlay ${overlayId} is being published from this machine again (${state}); the other daemon stops.\n`,
  );
  return 0;
}
