// The overlay page OBS shows: reads the injected globals, subscribes over WebSocket, renders the widgets.
// The same page is a public overlay's viewer page when the Gatekeeper injects a relay instead of a token.
import type { ServerMessage } from '../../../shared/protocol/index.js';
import { connect, connectViewer } from './connection.js';
import { readGlobals } from './globals.js';
import { OverlayView, setAssetBase } from './overlay-view.js';

/** A replayed alert or sound older than this is not shown or played. */
const STALE_MS = 60_000;
const isStale = (message: { replayed?: true; at?: number }) =>
  message.replayed === true && message.at !== undefined && Date.now() - message.at > STALE_MS;

const stage = document.getElementById('stage');
const globals = readGlobals();
if (stage instanceof HTMLElement) {
  stage.dataset.state = globals ? 'ready' : 'missing-globals';
  if (globals) {
    stage.dataset.overlayId = globals.overlayId;
    // A viewer page finds media beside its own address (/v/<subdomain>/<overlayId>/assets/…).
    if (globals.relay !== undefined) {
      stage.dataset.mode = 'viewer';
      setAssetBase(`${globals.relay.replace(/\/ws$/, '')}/assets/`);
    }
    const view = new OverlayView(stage);
    document.body.dataset.connection = 'closed';
    const hooks = {
      onState: (state: 'open' | 'closed') => {
        // The stage keeps its last picture while closed: viewers never see an error.
        document.body.dataset.connection = state;
        if (state === 'open') {
          delete document.body.dataset.unreachable;
          delete document.body.dataset.retry;
        }
      },
      onUnreachable: (failures: number) => {
        // How many looks at the daemon went unanswered so far (diagnostics and tests; nothing shows).
        document.body.dataset.unreachable = String(failures);
      },
      onMessage: (message: ServerMessage) => {
        switch (message.type) {
          case 'init':
            view.replace(message.overlay, message.widgets);
            break;
          case 'overlay-update':
            if (message.overlayId === globals.overlayId) view.replace(message.overlay, message.widgets);
            break;
          case 'stream-event':
            view.onStreamEvent(message.event, isStale(message));
            break;
          case 'overlay-command':
            view.onCommand(message, isStale(message));
            break;
        }
      },
    };
    if (globals.relay !== undefined)
      connectViewer(globals, {
        ...hooks,
        onRetry: (failures) => {
          // Reconnects due so far in a row (diagnostics and tests; nothing shows).
          document.body.dataset.retry = String(failures);
        },
        onUnpublished: () => {
          // The streamer stopped sharing this overlay: it goes away rather than stay frozen on screen.
          document.body.dataset.connection = 'unpublished';
          stage.hidden = true;
        },
      });
    else connect(globals, hooks);
  }
}
