// The three values the daemon injects into every page load (interface §2.9).
declare global {
  interface Window {
    __APP_OVERLAY_ID__?: string;
    __APP_PORT__?: number;
    __APP_TOKEN__?: string;
  }
}

export interface PageGlobals {
  overlayId: string;
  port: number;
  token: string;
}

export function readGlobals(w: Window = window): PageGlobals | undefined {
  const { __APP_OVERLAY_ID__: overlayId, __APP_PORT__: port, __APP_TOKEN__: token } = w;
  if (typeof overlayId !== 'string' || typeof port !== 'number' || typeof token !== 'string')
    return undefined;
  return { overlayId, port, token };
}
