// The real overlay page in an iframe, scaled down: it receives overlay-update like OBS does.
import { useState } from 'preact/hooks';
import type { Overlay } from '../../../../shared/protocol/index.js';

const PREVIEW_WIDTH = 288;

function PreviewFrame(props: { overlay: Overlay; nonce: number }) {
  const scale = PREVIEW_WIDTH / props.overlay.width;
  return (
    <div
      class="live-preview"
      style={{ width: `${PREVIEW_WIDTH}px`, height: `${props.overlay.height * scale}px` }}
    >
      <iframe
        key={props.nonce}
        title="Live preview of the overlay"
        src={`/overlay/${props.overlay.id}`}
        width={props.overlay.width}
        height={props.overlay.height}
        style={{ transform: `scale(${scale})` }}
        tabIndex={-1}
      />
    </div>
  );
}

/** The preview with its switch and a reload button (a fresh page load, as OBS's "Refresh cache"). */
export function LivePreview(props: { overlay: Overlay }) {
  const [shown, setShown] = useState(true);
  const [nonce, setNonce] = useState(0);
  return (
    <div class="preview">
      <div class="row">
        <label class="check">
          <input type="checkbox" checked={shown} onChange={(e) => setShown(e.currentTarget.checked)} />
          Live preview (what OBS shows)
        </label>
        {shown && (
          <button type="button" class="quiet" onClick={() => setNonce((n) => n + 1)}>
            Reload
          </button>
        )}
      </div>
      {shown && <PreviewFrame overlay={props.overlay} nonce={nonce} />}
    </div>
  );
}
