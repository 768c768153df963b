// How each widget kind looks on the editor's canvas: close enough to place it, not the overlay's renderer.
import type { Widget } from '../../../../shared/protocol/index.js';

const assetUrl = (name: string) => `/assets/${name.split('/').map(encodeURIComponent).join('/')}`;

export function WidgetPreview(props: { widget: Widget }) {
  const w = props.widget;
  switch (w.type) {
    case 'text':
      return (
        <span
          class="pv-text"
          style={{ fontFamily: w.fontFamily, fontSize: `${w.fontSize ?? 48}px`, color: w.color ?? '#fff' }}
        >
          {w.content || ' '}
        </span>
      );
    case 'image':
      return <img class="pv-image" src={assetUrl(w.src)} alt="" draggable={false} />;
    case 'alert':
      return (
        <span class="pv-box" style={{ color: w.color ?? '#fff', fontSize: `${w.fontSize ?? 48}px` }}>
          {w.image && <img class="pv-alert-image" src={assetUrl(w.image)} alt="" draggable={false} />}
          Alert · {(w.duration / 1000).toFixed(1)} s{w.sound ? ' · ♪' : ''}
        </span>
      );
    case 'goal': {
      const ratio = Math.min(1, w.current / w.target);
      return (
        <span class="pv-goal" style={{ color: w.color ?? '#fff' }}>
          <span class="pv-goal-title">
            {w.title || 'Goal'} · {w.current}/{w.target} {w.source}
          </span>
          <span class="pv-goal-bar">
            <span style={{ width: `${ratio * 100}%`, background: w.color ?? '#ff3b6b' }} />
          </span>
        </span>
      );
    }
    case 'chat':
      return (
        <span class="pv-box" style={{ color: w.color ?? '#fff', fontSize: `${w.fontSize ?? 24}px` }}>
          Chat · last {w.maxMessages} messages
        </span>
      );
    case 'counter':
      return (
        <span class="pv-text" style={{ color: w.color ?? '#fff', fontSize: `${w.fontSize ?? 48}px` }}>
          {w.label ? `${w.label}: ` : ''}
          {w.value}
        </span>
      );
    case 'event-list':
      return (
        <span class="pv-box" style={{ color: w.color ?? '#fff' }}>
          Event list · {w.maxEvents} {w.eventTypes?.length ? w.eventTypes.join(', ') : 'all events'}
        </span>
      );
    case 'top-gifters':
      return (
        <span class="pv-box" style={{ color: w.color ?? '#fff' }}>
          Top {w.maxEntries} gifters
        </span>
      );
  }
}

export { assetUrl };
