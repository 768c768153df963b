// When the open overlay changed elsewhere (a hand edit, another tab): both versions side by side, and the
// person chooses (the dashboard never overwrites silently).
import type { Overlay } from '../../../../shared/protocol/index.js';

export interface Conflict {
  theirs: Overlay;
  etag: string | undefined;
}

function Summary(props: { title: string; overlay: Overlay }) {
  const { overlay } = props;
  return (
    <div class="conflict-version">
      <h4>{props.title}</h4>
      <p>
        <strong>{overlay.name}</strong> · {overlay.width} × {overlay.height} · {overlay.widgets.length} widget
        {overlay.widgets.length === 1 ? '' : 's'}
      </p>
      <ul>
        {overlay.widgets.map((w) => (
          <li key={w.id}>
            {w.type} <code>{w.id}</code> at {Math.round(w.x)}, {Math.round(w.y)}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function ConflictNotice(props: {
  conflict: Conflict;
  mine: Overlay;
  onKeepMine: () => void;
  onTakeTheirs: () => void;
}) {
  return (
    <section class="notice notice-error conflict" role="alert" aria-labelledby="conflict-title">
      <h3 id="conflict-title">This overlay was changed somewhere else</h3>
      <p>
        Someone edited it while it was open here (its file by hand, or the dashboard in another tab). Nothing
        is saved until you choose which version to keep.
      </p>
      <div class="conflict-versions">
        <Summary title="Your version (this page)" overlay={props.mine} />
        <Summary title="The other version (saved now)" overlay={props.conflict.theirs} />
      </div>
      <div class="row">
        <button type="button" class="primary" onClick={props.onKeepMine}>
          Keep my version
        </button>
        <button type="button" onClick={props.onTakeTheirs}>
          Use the other version
        </button>
      </div>
    </section>
  );
}
