// Actions: what the rules' actions did (the action log, newest first), their queues with skip and clear,
// and the OBS connection, refreshed every two seconds.
import { useCallback, useState } from 'preact/hooks';
import type { ActionLogEntry, ObsStatus, QueueState } from '../../../shared/protocol/index.js';
import type { Shared } from './shared-data.js';
import { describeError, Notice } from './ui.js';
import { usePolling } from './use-polling.js';

const POLL_MS = 2000;
const SHOWN = 50;

const OBS_TEXT: Record<ObsStatus['state'], string> = {
  connected: 'Connected',
  connecting: 'Connecting…',
  disconnected: 'Not connected',
  off: 'Not in use (no rule has an OBS action)',
};

/** An outcome in words: done, skipped (not a failure: it could not run, e.g. TikTok has no chat to write), or failed. */
function outcomeText(e: ActionLogEntry): string {
  if (!e.ok) return `failed — ${e.error ?? 'error'}`;
  if (e.skipped !== undefined) return `skipped — ${e.skipped}`;
  return `done in ${e.ms} ms`;
}

export function ActionsView(props: { shared: Shared }) {
  const { api } = props.shared;
  const [log, setLog] = useState<ActionLogEntry[]>([]);
  const [queues, setQueues] = useState<QueueState[]>([]);
  const [obs, setObs] = useState<ObsStatus | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    try {
      const [l, q, s] = await Promise.all([api.actionLog(), api.actionQueues(), api.status()]);
      setLog(l);
      setQueues(q);
      setObs(s.obs);
      setError(undefined);
    } catch (err) {
      setError(describeError(err));
    }
  }, [api]);

  usePolling(load, POLL_MS);

  const act = async (name: string, verb: 'skip' | 'clear') => {
    try {
      await api.queue(name, verb);
      await load();
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <section aria-labelledby="actions-title">
      <div class="section-head">
        <h1 id="actions-title" tabIndex={-1}>
          Actions
        </h1>
        <span class="muted">refreshes every {POLL_MS / 1000} s</span>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card" data-part="obs">
        <h3>OBS</h3>
        <p>
          {obs ? OBS_TEXT[obs.state] : '…'}
          {obs?.lastError && <span class="muted"> — {obs.lastError}</span>}
        </p>
      </div>
      <div class="card">
        <h3>Queues</h3>
        {queues.length === 0 ? (
          <p class="muted">No queue has work.</p>
        ) : (
          <table class="queues">
            <thead>
              <tr>
                <th scope="col">Queue</th>
                <th scope="col">Running</th>
                <th scope="col">Waiting</th>
                <th scope="col">
                  <span class="visually-hidden">Controls</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {queues.map((q) => (
                <tr key={q.name} data-queue={q.name}>
                  <td>{q.name}</td>
                  <td>{q.running ? 'yes' : 'no'}</td>
                  <td>{q.waiting}</td>
                  <td class="row">
                    <button type="button" onClick={() => void act(q.name, 'skip')}>
                      Skip
                    </button>
                    <button type="button" class="danger" onClick={() => void act(q.name, 'clear')}>
                      Clear
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <div class="card">
        <h3>Log</h3>
        {log.length === 0 ? (
          <p class="muted">No action has run yet.</p>
        ) : (
          <ol class="action-log">
            {log
              .slice(-SHOWN)
              .reverse()
              .map((e, i) => (
                <li
                  key={`${e.at}-${i}`}
                  data-ok={e.ok ? 'yes' : 'no'}
                  data-skipped={e.skipped !== undefined ? 'yes' : undefined}
                >
                  <span class="muted">{new Date(e.at).toLocaleTimeString()}</span> rule “
                  {e.ruleName ?? e.ruleId}” action {e.action + 1} ({e.kind}): {outcomeText(e)}
                </li>
              ))}
          </ol>
        )}
      </div>
    </section>
  );
}
