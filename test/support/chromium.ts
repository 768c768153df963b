// Launches Debian's Chromium through playwright-core, kept off every network but loopback.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_MISSING_MESSAGE = `Chromium was not found at ${CHROMIUM_PATH}.
The browser tests drive a real Chromium. Install it with:
  sudo apt-get install -y chromium
or point CHROMIUM_PATH at an existing Chromium or Chrome executable.`;

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

interface LaunchOptions {
  /**
   * Names the browser resolves to a loopback address:port, as DNS would resolve them on the internet
   * (e.g. `{ '*.overlays.test': '127.0.0.1:8443' }`). Every other name but 127.0.0.1 and localhost stays unresolvable.
   */
  hostMap?: Record<string, string>;
}

export function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  // One --host-resolver-rules flag holds every rule (a second flag would replace the first), mapped names first.
  const hostRules = [
    ...Object.entries(options.hostMap ?? {}).map(([name, target]) => `MAP ${name} ${target}`),
    'MAP * ~NOTFOUND',
    'EXCLUDE 127.0.0.1',
    'EXCLUDE localhost',
  ];
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
      `--host-resolver-rules=${hostRules.join(' , ')}`,
    ],
  });
}
