// Starts the real daemon on a free port with a fresh data directory, and speaks raw HTTP to it, for suites under test/.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DaemonOptions, type RunningDaemon, startDaemon } from '../../daemon/src/daemon.js';
import type { PlatformUrls } from '../../daemon/src/sources/platform-urls.js';
import { type ConnectOptions, connectWs, type TestWsClient } from './ws.js';

// The daemon suites import their poller from here with the rest of their helpers.
export { waitFor } from './wait.js';

export interface TestDaemon extends RunningDaemon {
  /** Log lines the daemon wrote. */
  logs: string[];
  /** Stops the daemon and removes its data directory. */
  stop(): Promise<void>;
}

/** Every platform at a closed loopback port. */
export const UNREACHABLE_PLATFORMS: PlatformUrls = {
  twitchIrc: 'ws://127.0.0.1:9',
  twitchEventSub: 'ws://127.0.0.1:9/ws',
  twitchApi: 'http://127.0.0.1:9/helix',
  twitchAuth: 'http://127.0.0.1:9',
  youtubeApi: 'http://127.0.0.1:9/youtube/v3',
  kickPusher: 'ws://127.0.0.1:9/app/unreachable',
  kickSite: 'http://127.0.0.1:9',
};

export async function makeDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'overlay-daemon-test-'));
}

export async function startTestDaemon(options: Partial<DaemonOptions> = {}): Promise<TestDaemon> {
  const dataDir = options.dataDir ?? (await makeDataDir());
  // Suites start from no rules: a first start would add the demo overlay's gift rule
  // (store.ts demoRules, covered by test/daemon/event-pipeline.test.ts), which every event would fire.
  if (!options.dataDir) await writeFile(join(dataDir, 'rules.json'), '[]\n');
  const logs: string[] = [];
  const daemon = await startDaemon({
    port: 0,
    host: '127.0.0.1',
    watchSettleMs: 50,
    // Nothing leaves the machine: a suite that adds a source without its fakes reaches a closed port.
    platformUrls: UNREACHABLE_PLATFORMS,
    log: (line) => logs.push(line),
    ...options,
    dataDir,
  });
  return Object.assign(daemon, {
    logs,
    async stop() {
      await daemon.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  });
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): unknown;
}

interface RawRequest {
  method?: string;
  /** Sent exactly as given: node:http does not normalise it, unlike fetch. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  localAddress?: string;
}

/** One HTTP request on its own connection, with the raw path and any Host header. */
export function rawRequest(port: number, options: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Calls the control API with the daemon's admin key. */
export async function api(
  daemon: RunningDaemon,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${daemon.adminKey}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** Loads an overlay's page like a browser would and returns the token injected into it. */
export async function pageToken(
  daemon: { port: number },
  overlayId: string,
  localAddress?: string,
): Promise<string> {
  const res = await rawRequest(daemon.port, {
    path: `/overlay/${overlayId}`,
    headers: { Host: `127.0.0.1:${daemon.port}` },
    ...(localAddress ? { localAddress } : {}),
  });
  const match = /window\.__APP_TOKEN__="([A-Za-z0-9_-]+)"/.exec(res.body);
  if (res.status !== 200 || !match?.[1]) throw new Error(`no token in the page (status ${res.status})`);
  return match[1];
}

/** A client subscribed to an overlay: page loaded, init sent, init reply received. */
export async function subscribe(
  daemon: RunningDaemon,
  overlayId: string,
  options: ConnectOptions = {},
): Promise<TestWsClient> {
  const token = await pageToken(daemon, overlayId, options.localAddress);
  const client = await connectWs(`ws://127.0.0.1:${daemon.port}`, options);
  client.sendInit(overlayId, token);
  await client.next((m) => m.type === 'init');
  return client;
}
