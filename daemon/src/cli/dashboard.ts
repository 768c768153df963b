// `overlay-daemon dashboard`: opens the running daemon's dashboard, signed in, in the system browser.
import { dashboardSignInUrl } from '../http/dashboard.js';
import { dataDirPaths, readAdminKey } from '../store/data-dir.js';
import { openBrowser } from './open-browser.js';

export const DASHBOARD_HELP = `Usage: overlay-daemon dashboard [--port N] [--host ADDR] [--data-dir DIR]

Opens the dashboard of the overlay server running on this machine, signed in with the key
of its data directory, and prints the same sign-in URL (keep it private: it grants control).

Options:
  --port N          the server's port (default: where the daemon of --data-dir listens, else $OVERLAY_PORT or 7890)
  --host ADDR       the server's address (default 127.0.0.1)
  --data-dir DIR    the server's data directory (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  -h, --help        show this help
`;

interface DashboardCommandOptions {
  baseUrl: string;
  dataDir: string;
  out: (text: string) => void;
  err: (text: string) => void;
  open?: (url: string) => Promise<boolean>;
}

export async function runDashboardCommand(options: DashboardCommandOptions): Promise<number> {
  let key: string;
  try {
    key = await readAdminKey(dataDirPaths(options.dataDir));
  } catch {
    options.err(
      `overlay-daemon: no admin key in ${options.dataDir}; start the server once with this --data-dir\n`,
    );
    return 1;
  }
  try {
    const res = await fetch(`${options.baseUrl}/status`, { signal: AbortSignal.timeout(3000) });
    if (!res.ok) throw new Error(String(res.status));
  } catch {
    options.err(`overlay-daemon: no overlay server is answering at ${options.baseUrl}; start it first\n`);
    return 1;
  }
  const url = dashboardSignInUrl(options.baseUrl, key);
  options.out(`dashboard: ${url}\n`);
  const opened = await (options.open ?? openBrowser)(url);
  if (!opened) options.err('could not open a browser: open the URL above yourself\n');
  return 0;
}
