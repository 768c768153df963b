// Status: GET /status in the words of `overlay-daemon status` (one formatter for both) and the overlay clients connected now.
import { useCallback, useState } from 'preact/hooks';
import { localTime } from '../../../shared/local-time.js';
import type { DaemonStatus, SourceReport, SourceStatus } from '../../../shared/protocol/index.js';
import { runningLine, statusLines } from '../../../shared/status-text.js';
import { formatWait } from '../../../shared/timers.js';
import type { Shared } from './shared-data.js';
import { describeError, Notice, PlatformMark } from './ui.js';
import { usePolling } from './use-polling.js';

const POLL_MS = 5000;

/** The status lines of `overlay-daemon status`, word for word: one row each, times in local time. */
function StatusLines(props: { status: DaemonStatus; url: string }) {
  const { status } = props;
  const lines = statusLines(status);
  return (
    <>
      <p data-field="running">{runningLine(props.url)}</p>
      <dl class="fields status-lines">
        {lines.map((line) => {
          const source =
            line.part === 'source' ? status.sources?.find((s) => sourceKey(s) === line.key) : undefined;
          return (
            <div
              key={`${line.part}:${line.key ?? ''}`}
              data-field={line.part}
              data-source={source ? line.key : undefined}
              data-state={source?.state}
            >
              <dt>
                {source && <PlatformMark platform={source.platform} />}
                {line.label}
              </dt>
              <dd>{line.text}</dd>
            </div>
          );
        })}
      </dl>
    </>
  );
}

const sourceKey = (s: SourceReport) => `${s.platform}:${s.channel}`;

/** The TikTok LIVE connection's gaps, newest first: more than the status line says, in the same local time. */
function TikTokGaps(props: { tiktok: SourceStatus }) {
  const gaps = props.tiktok.gaps ?? [];
  if (gaps.length === 0) return null;
  return (
    <div class="card" data-part="tiktok">
      <h3>TikTok LIVE · @{props.tiktok.username}: connection gaps</h3>
      <ul class="gaps" aria-label="Connection gaps">
        {[...gaps].reverse().map((g) => (
          <li key={g.at}>
            {localTime(g.at)}: away {formatWait(g.durationMs)}, {g.recovered} missed message
            {g.recovered === 1 ? '' : 's'} recovered
          </li>
        ))}
      </ul>
    </div>
  );
}

export function StatusView(props: { shared: Shared }) {
  const { api, overlays } = props.shared;
  const [status, setStatus] = useState<DaemonStatus | undefined>();
  const [clients, setClients] = useState<Record<string, number> | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    const [s, c] = await Promise.allSettled([api.status(), api.clients()]);
    if (s.status === 'fulfilled') setStatus(s.value);
    if (c.status === 'fulfilled') setClients(c.value.clients);
    const failed = [s, c].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    setError(failed ? describeError(failed.reason) : undefined);
  }, [api]);
  usePolling(load, POLL_MS);

  const tunnel = status?.tunnel?.public_url;
  return (
    <section aria-labelledby="status-title">
      <div class="section-head">
        <h1 id="status-title" tabIndex={-1}>
          Status
        </h1>
        <span class="muted">refreshes every {POLL_MS / 1000} s</span>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card">
        <h3>Daemon</h3>
        {status ? <StatusLines status={status} url={location.origin} /> : <p class="muted">Loading…</p>}
        {status && !tunnel && (
          <p class="muted">No tunnel reported: overlays are reachable on this computer only.</p>
        )}
      </div>
      {status?.tiktok && <TikTokGaps tiktok={status.tiktok} />}
      {/* Per overlay, by name: for a signer that may read the overlays. */}
      {api.allows('GET', '/api/overlays') && (
        <div class="card">
          <h3>Connected overlay clients</h3>
          <table class="clients">
            <thead>
              <tr>
                <th scope="col">Overlay</th>
                <th scope="col">Clients (OBS, previews)</th>
              </tr>
            </thead>
            <tbody>
              {overlays.map((o) => (
                <tr key={o.id} data-overlay-id={o.id}>
                  <td>{o.name}</td>
                  <td>{clients ? (clients[o.id] ?? 0) : '…'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
