// A source's state in the streamer's words, its detail and since when.
import type { SourceReport } from '../../../../shared/protocol/index.js';
import { sinceText } from './channels.js';

/** A source's state in a streamer's words; waiting and trouble say why in the same breath. */
function stateWords(report: SourceReport): string {
  switch (report.state) {
    case 'connecting':
      return 'Connecting…';
    case 'connected':
      return 'Connected';
    case 'reconnecting':
      // A drop or a platform out of reach alike; the detail says which.
      return 'Not connected: trying again';
    case 'backoff':
      return report.detail ? `Waiting (${report.detail})` : 'Waiting before the next try';
    case 'error':
      return `Needs attention: ${report.detail ?? 'see the daemon’s log'}`;
    case 'offline':
      return 'Not live right now';
    case 'off':
      return 'Turned off';
  }
}

/** The detail the words above do not already carry. */
const extraDetail = (report: SourceReport) =>
  report.state === 'backoff' || report.state === 'error' || report.state === 'off'
    ? undefined
    : report.detail;

/** The state of one source, its detail and since when; `pending` while /status has not listed it yet. */
export function SourceStateLabel(props: { report: SourceReport | undefined; pending?: string }) {
  const { report } = props;
  if (!report) return <span class="source-state muted">{props.pending ?? '…'}</span>;
  const detail = extraDetail(report);
  const since = sinceText(report.since);
  return (
    <span class="source-state" data-state={report.state}>
      <span class={`state-words state-${report.state}`}>{stateWords(report)}</span>
      {detail && <span class="muted"> — {detail}</span>}
      {since && <span class="muted source-since"> · {since}</span>}
    </span>
  );
}
