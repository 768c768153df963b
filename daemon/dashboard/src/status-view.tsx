// Status: what GET /status reports (sources, TikTok, licence, tunnel…) and the overlay clients connected now.
import { useCallback, useState } from 'preact/hooks';
import type { DaemonStatus, SourceStatus } from '../../../shared/protocol/index.js';
import { formatWait } from '../../../shared/timers.js';
import type { Shared } from './shared-data.js';
import { SourceReportList } from './sources-view.js';
import { describeError, Notice } from './ui.js';
import { usePolling } from './use-polling.js';

const POLL_MS = 5000;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Labels of the fields of GET /status (shared/protocol/control-api.ts); others are spelled out from their names. */
const LABELS: Record<string, string> = {
  running: 'Overlay server running',
  port: 'Port',
  tiktok: 'TikTok LIVE',
  obs: 'OBS',
  licence: 'Licence',
  tier: 'Tier',
  tunnel: 'Tunnel',
  public_url: 'Public URL',
  state: 'State',
  connector: 'Connector',
  valid_until: 'Valid until',
  last_validated_at: 'Last checked',
  reason: 'Why',
};
const label = (key: string) =>
  LABELS[key] ??
  key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/^./, (c) => c.toUpperCase());

function Value(props: { value: unknown }) {
  const { value } = props;
  if (typeof value === 'boolean') return <span class={value ? 'yes' : 'no'}>{value ? 'yes' : 'no'}</span>;
  if (value === null || value === undefined) return <span class="muted">—</span>;
  if (Array.isArray(value)) {
    return value.length === 0 ? (
      <span class="muted">none</span>
    ) : (
      <ul>
        {value.map((v, i) => (
          <li key={i}>
            <Value value={v} />
          </li>
        ))}
      </ul>
    );
  }
  if (isRecord(value)) return <Fields record={value} />;
  const text = String(value);
  if (/^https?:\/\//.test(text))
    return (
      <a href={text} target="_blank" rel="noreferrer noopener">
        {text}
      </a>
    );
  return <span>{text}</span>;
}

/** Every field present, in the order the daemon sends them: fields added later show up without a change here. */
function Fields(props: { record: Record<string, unknown> }) {
  return (
    <dl class="fields">
      {Object.entries(props.record).map(([key, value]) => (
        <div key={key} data-field={key}>
          <dt>{label(key)}</dt>
          <dd>
            <Value value={value} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** OBS's states in words: `off` is not "not set up", it waits for a rule with an OBS action. */
const OBS_WORDS: Record<NonNullable<DaemonStatus['obs']>['state'], string> = {
  connected: 'Connected',
  connecting: 'Connecting…',
  disconnected: 'Not connected: trying again',
  off: 'Not used by any rule',
};

/** The daemon's fields but those with a card of their own (TikTok, the sources); OBS's state in words. */
function withoutCards(status: DaemonStatus): Record<string, unknown> {
  const { tiktok: _tiktok, sources: _sources, ...rest } = status;
  if (!rest.obs) return rest;
  return { ...rest, obs: { ...rest.obs, state: OBS_WORDS[rest.obs.state] } };
}

const STATE_TEXT: Record<SourceStatus['state'], string> = {
  connected: 'Connected: events arrive',
  connecting: 'Connecting…',
  reconnecting: 'Not connected: trying again',
  offline: 'Not live right now: looking again',
  disconnected: 'Stopped',
};

const clock = (iso: string) => new Date(iso).toLocaleTimeString();

/** The TikTok LIVE connection in a streamer's words: state, why not, and when the next try is. */
function TikTokCard(props: { tiktok: SourceStatus }) {
  const t = props.tiktok;
  return (
    <div class="card" data-part="tiktok">
      <h3>TikTok LIVE · @{t.username}</h3>
      <dl class="fields">
        <div data-field="state">
          <dt>Connection</dt>
          <dd class={t.state === 'connected' ? 'yes' : 'no'}>{STATE_TEXT[t.state]}</dd>
        </div>
        {t.connectedSince && (
          <div data-field="connectedSince">
            <dt>Connected since</dt>
            <dd>{clock(t.connectedSince)}</dd>
          </div>
        )}
        {t.state !== 'connected' && t.lastError && (
          <div data-field="lastError">
            <dt>Why</dt>
            <dd>
              {t.lastError}
              {t.lastErrorAt && <span class="muted"> (at {clock(t.lastErrorAt)})</span>}
            </dd>
          </div>
        )}
        {t.retryInMs !== undefined && (
          <div data-field="retryInMs">
            <dt>Next attempt</dt>
            <dd>in {formatWait(t.retryInMs)}</dd>
          </div>
        )}
        {t.attempts > 0 && (
          <div data-field="attempts">
            <dt>Failed attempts</dt>
            <dd>{t.attempts}</dd>
          </div>
        )}
      </dl>
      {t.gaps && t.gaps.length > 0 && (
        <>
          <h4>Connection gaps</h4>
          <ul class="gaps" aria-label="Connection gaps">
            {[...t.gaps].reverse().map((g) => (
              <li key={g.at}>
                {clock(g.at)}: away {formatWait(g.durationMs)}, {g.recovered} missed message
                {g.recovered === 1 ? '' : 's'} recovered
              </li>
            ))}
          </ul>
        </>
      )}
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
        {status ? <Fields record={withoutCards(status)} /> : <p class="muted">Loading…</p>}
        {status && !tunnel && (
          <p class="muted">No tunnel reported: overlays are reachable on this computer only.</p>
        )}
      </div>
      {status?.sources && (
        <div class="card" data-part="sources">
          <h3>Sources</h3>
          <SourceReportList reports={status.sources} />
        </div>
      )}
      {status?.tiktok && <TikTokCard tiktok={status.tiktok} />}
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
