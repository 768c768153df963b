// The values the daemon injects into every page load (interface §2.9).
declare global {
  interface Window {
    __APP_OVERLAY_ID__?: string;
    /** Injected as the interface names it, but not read: the page talks to the origin that served it, which through the tunnel is not the daemon's port. */
    __APP_PORT__?: number;
    __APP_TOKEN__?: string;
  }
}

export interface PageGlobals {
  overlayId: string;
  token: string;
}

export function readGlobals(w: Window = window): PageGlobals | undefined {
  const { __APP_OVERLAY_ID__: overlayId, __APP_TOKEN__: token } = w;
  if (typeof overlayId !== 'string' || typeof token !== 'string') return undefined;
  return { overlayId, token };
}
