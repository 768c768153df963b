// The selected widget's panel: its properties, and moving it in the stack or removing it.
import type { Widget } from '../../../../shared/protocol/index.js';
import type { MediaItem } from '../api.js';
import { Properties } from './properties.js';

export function SelectedWidget(props: {
  widget: Widget;
  index: number;
  count: number;
  media: MediaItem[];
  errorFor: (field: string) => string | undefined;
  onChange: (next: Widget, key: string) => void;
  onRestack: (delta: number) => void;
  onRemove: () => void;
}) {
  return (
    <>
      <Properties
        widget={props.widget}
        media={props.media}
        errorFor={props.errorFor}
        onChange={props.onChange}
      />
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
