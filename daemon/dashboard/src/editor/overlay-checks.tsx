// Above the canvas: the overlay's URL for OBS with a copy button, and a test gift that shows at once
// whether this overlay would show it (and why not).
import { useState } from 'preact/hooks';
import { describeEvent } from '../../../../shared/describe-event.js';
import type { Overlay, StreamEvent } from '../../../../shared/protocol/index.js';
import { reachOf, whyNothingShows } from '../event-reach.js';
import type { Shared } from '../shared-data.js';
import { CopyButton, describeError, Notice } from '../ui.js';

const TEST_GIFT: StreamEvent = {
  type: 'gift',
  platform: 'api',
  user: { uniqueId: 'test_viewer', nickname: 'Test Viewer' },
  data: { giftName: 'Rose', repeatCount: 1, diamondCount: 1 },
};

export function ObsUrl(props: { overlay: Overlay }) {
  const url = `${location.origin}/overlay/${props.overlay.id}`;
  return (
    <div class="row obs-url">
      <label for="editor-obs-url">OBS URL</label>
      <input id="editor-obs-url" readOnly value={url} size={Math.min(60, url.length)} />
      <CopyButton text={url} label="Copy OBS URL" />
      <span class="muted">
        Browser source, {props.overlay.width} × {props.overlay.height}
      </span>
    </div>
  );
}

export function TestGiftButton(props: { shared: Shared; overlay: Overlay }) {
  const { shared, overlay } = props;
  const [result, setResult] = useState<{ kind: 'ok' | 'info' | 'error'; text: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setBusy(true);
    try {
      const { firedRules } = await shared.api.sendEvent(TEST_GIFT);
      const reach = reachOf(TEST_GIFT, overlay, shared.rules, firedRules);
      const shownBy = [...reach.widgets, ...reach.rules.map((r) => `rule “${r}”`)];
      setResult(
        shownBy.length > 0
          ? { kind: 'ok', text: `Sent “${describeEvent(TEST_GIFT)}”: shown by ${shownBy.join(', ')}.` }
          : { kind: 'info', text: whyNothingShows(TEST_GIFT, overlay) },
      );
    } catch (err) {
      setResult({ kind: 'error', text: describeError(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="test-gift" data-test-gift>
      <button type="button" onClick={() => void send()} disabled={busy}>
        Send a test gift
      </button>
      <span class="muted"> every open overlay receives it, as from the live stream</span>
      {result && <Notice kind={result.kind}>{result.text}</Notice>}
    </div>
  );
}
