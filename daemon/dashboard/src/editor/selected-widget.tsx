// The selected widget's panel: its properties, resetting the value it keeps, and moving it in the stack or
// removing it.
import { useState } from 'preact/hooks';
import type { Widget } from '../../../../shared/protocol/index.js';
import type { MediaItem } from '../api.js';
import { describeError, Notice } from '../ui.js';
import { Properties } from './properties.js';

/** What the reset button says for a widget that keeps a value from the stream. */
const RESET_LABEL: Partial<Record<Widget['type'], string>> = {
  goal: 'Reset progress to 0',
  counter: 'Reset the count to 0',
  'top-gifters': 'Clear the top gifters',
};

/** Sets the value the daemon keeps (goal progress, a count, the top gifters) back to zero, on stream too. */
function ResetValue(props: { widget: Widget; onReset: () => Promise<void> }) {
  const [result, setResult] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const label = RESET_LABEL[props.widget.type];
  if (!label) return null;
  const reset = async () => {
    setBusy(true);
    try {
      await props.onReset();
      setResult({ kind: 'ok', text: 'Reset: every page showing the overlay shows it from zero.' });
    } catch (err) {
      setResult({ kind: 'error', text: describeError(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="row" data-reset-value>
      <button type="button" onClick={() => void reset()} disabled={busy}>
        {label}
      </button>
      {result && <Notice kind={result.kind}>{result.text}</Notice>}
    </div>
  );
}

export function SelectedWidget(props: {
  widget: Widget;
  index: number;
  count: number;
  media: MediaItem[];
  errorFor: (field: string) => string | undefined;
  onChange: (next: Widget, key: string) => void;
  onRestack: (delta: number) => void;
  onRemove: () => void;
  /** Resets the value the widget keeps; absent when this sign-in may not send commands. */
  onReset?: (() => Promise<void>) | undefined;
}) {
  return (
    <>
      <Properties
        widget={props.widget}
        media={props.media}
        errorFor={props.errorFor}
        onChange={props.onChange}
      />
      {props.onReset && <ResetValue key={props.widget.id} widget={props.widget} onReset={props.onReset} />}
      <div class="row">
        <button type="button" onClick={() => props.onRestack(-1)} disabled={props.index === 0}>
          Send backward
        </button>
        <button type="button" onClick={() => props.onRestack(1)} disabled={props.index === props.count - 1}>
          Bring forward
        </button>
        <button type="button" class="danger" onClick={props.onRemove}>
          Remove widget
        </button>
      </div>
    </>
  );
}
