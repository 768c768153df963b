// The values the daemon injects into every page load (interface §2.9), or the Gatekeeper into a viewer page.
declare global {
  interface Window {
    __APP_OVERLAY_ID__?: string;
    /** Injected as the interface names it, but not read: the page talks to the origin that served it, which through the tunnel is not the daemon's port. */
    __APP_PORT__?: number;
    __APP_TOKEN__?: string;
    /** Set by the Gatekeeper on a public overlay's viewer page: the relay socket's path on the same origin. */
    __APP_RELAY__?: string;
  }
}

/** The daemon's own page: a single-use token, full page protocol. */
export interface PageGlobals {
  overlayId: string;
  token: string;
  relay?: undefined;
}

/** A viewer page served by the Gatekeeper: no token, receive-only through the relay at `relay`. */
export interface RelayGlobals {
  overlayId: string;
  relay: string;
  token?: undefined;
}

/** A path on the page's own origin (`/v/…/ws`), never another host (`//host`, `https://…`). */
const SAME_ORIGIN_PATH = /^\/(?![/\\])[^\s]*$/;

export function readGlobals(w: Window = window): PageGlobals | RelayGlobals | undefined {
  const { __APP_OVERLAY_ID__: overlayId, __APP_TOKEN__: token, __APP_RELAY__: relay } = w;
  if (typeof overlayId !== 'string') return undefined;
  // A relay wins over a token: the receive-only mode can do nothing a token would allow.
  if (relay !== undefined)
    return typeof relay === 'string' && SAME_ORIGIN_PATH.test(relay) ? { overlayId, relay } : undefined;
  if (typeof token !== 'string') return undefined;
  return { overlayId, token };
}
