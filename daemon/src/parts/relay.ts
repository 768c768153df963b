// The relay part: publishes each public overlay to the Gatekeeper's relay while the daemon is Premium
// (relay/relay-service.ts), and reports each one under `relay` in /status.
import type { StatusParts } from '../http/status-parts.js';
import { type RelayLicence, RelayService } from '../relay/relay-service.js';
import type { OverlayStore } from '../store/overlay-store.js';
import { systemTimers, type Timers } from '../timers.js';
import type { Hub } from '../ws/hub.js';

export interface RelayOptions {
  /** The licence in force: Premium publishes, and its JWT opens the publisher sockets. */
  licence: RelayLicence;
  /** The Gatekeeper's origin (the one licences are validated with). */
  gatekeeperUrl: string;
  /** Clock for reconnects and pacing (a fake one in tests). */
  timers?: Timers;
  random?: () => number;
}

export interface RelayPart {
  relay: RelayService;
  close(): void;
}

export function startRelay(
  options: RelayOptions | undefined,
  ctx: {
    hub: Hub;
    overlays: OverlayStore;
    mediaDir: string;
    statusFields: StatusParts;
    log: (line: string) => void;
  },
): RelayPart {
  const relay = new RelayService({
    licence: options?.licence,
    gatekeeperUrl: options?.gatekeeperUrl,
    overlays: ctx.overlays,
    hub: ctx.hub,
    mediaDir: ctx.mediaDir,
    timers: options?.timers ?? systemTimers(),
    ...(options?.random ? { random: options.random } : {}),
    log: ctx.log,
  });
  ctx.statusFields.set('relay', () => relay.status());
  return {
    relay,
    close() {
      ctx.statusFields.delete('relay');
      relay.close();
    },
  };
}
