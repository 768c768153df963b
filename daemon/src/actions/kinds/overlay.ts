// `overlay`: an overlay command to that overlay's pages, sent in the caller's turn.
import type { ExecutorFactory } from './types.js';

export const overlay: ExecutorFactory<'overlay'> = (services) => (action) => {
  services.sendCommand(action.overlayId, {
    command: action.command,
    widgetId: action.widgetId,
    payload: action.payload,
  });
  return undefined;
};
