// Opens a URL in the system browser without a shell (xdg-open, open, or rundll32 on Windows).
import { spawn } from 'node:child_process';

export function browserCommand(
  url: string,
  platform: NodeJS.Platform = process.platform,
): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  // `start` is a cmd.exe built-in and cmd would interpret the URL's `&`; the URL handler takes it verbatim.
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}

/** Resolves true when the opener started, false when there is none (the caller has printed the URL anyway). */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const protocol = new URL(url).protocol;
  if (protocol !== 'https:' && protocol !== 'http:') return Promise.resolve(false);
  const [command, args] = browserCommand(url, platform);
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: true, shell: false });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
