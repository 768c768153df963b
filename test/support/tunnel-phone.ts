// A paired phone's side of the tunnel for the daemon suites: a daemon on a fake clock whose tunnel is up, and
// a request as it arrives through the tunnel (the tunnel's Host, the real client in CF-Connecting-IP).
import { rawRequest, startTestDaemon, type TestDaemon } from './daemon.js';
import { FakeTimers } from './fake-timers.js';

/** The tunnel's host name. */
export const TUNNEL = 'o-abc.tunnel.example';
/** The phone's address, as the edge names it in CF-Connecting-IP. */
export const PHONE_IP = '203.0.113.9';

/** A daemon on a fake clock (at 2027-01-15 08:00 UTC) with its tunnel up at TUNNEL. */
export async function startTunnelledDaemon(): Promise<{ daemon: TestDaemon; clock: FakeTimers }> {
  const clock = new FakeTimers();
  clock.advance(1_800_000_000_000);
  const daemon = await startTestDaemon({ now: () => clock.now() });
  daemon.tunnelHost = TUNNEL;
  return { daemon, clock };
}

export interface TunnelRequest {
  /** Sent as JSON. */
  body?: unknown;
  /** The client the edge names (PHONE_IP by default). */
  ip?: string;
  /** The Host (TUNNEL by default). */
  host?: string;
  /** Laid over the others. */
  headers?: Record<string, string>;
}

/** A request through the tunnel, as the edge hands it to the daemon. */
export function viaTunnel(
  daemon: TestDaemon,
  method: string,
  path: string,
  request: TunnelRequest = {},
): ReturnType<typeof rawRequest> {
  return rawRequest(daemon.port, {
    method,
    path,
    headers: {
      Host: request.host ?? TUNNEL,
      'CF-Connecting-IP': request.ip ?? PHONE_IP,
      ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...request.headers,
    },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
}
