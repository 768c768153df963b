// The overlay's widgets in stacking order (back to front); choosing one selects it on the canvas.
import type { Widget } from '../../../../shared/protocol/index.js';
import { widgetLabel } from '../widget-defaults.js';

export function Layers(props: {
  widgets: readonly Widget[];
  selected: string | undefined;
  onSelect: (id: string) => void;
}) {
  return (
    <div class="layers">
      <h3>Widgets (back to front)</h3>
      {props.widgets.length === 0 && <p class="muted">No widgets yet: add one above.</p>}
      <ol>
        {props.widgets.map((w) => (
          <li key={w.id}>
            <button type="button" aria-pressed={w.id === props.selected} onClick={() => props.onSelect(w.id)}>
              {widgetLabel(w)}
            </button>
          </li>
        ))}
      </ol>
    </div>
  );
}
