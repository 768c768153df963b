// History (decisions-2 §7): the stream sessions in the event journal with their totals, a chart of one
// session's gifts, diamonds and likes per minute (uPlot, bundled), its top viewers, the all-time
// leaderboard, and the session as CSV.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { SessionMinutes, SessionSummary, ViewerFigures } from '../../../shared/protocol/index.js';
import type { Shared } from './shared-data.js';
import { describeError, Notice } from './ui.js';

const NUMBER = new Intl.NumberFormat('en-US');
const WHEN = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
type Metric = 'diamonds' | 'likes' | 'chats' | 'points';

function duration(s: SessionSummary): string {
  const end = s.endedAt ? Date.parse(s.endedAt) : Date.now();
  const minutes = Math.max(1, Math.round((end - Date.parse(s.startedAt)) / 60_000));
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Saves a Blob under a name, as a download link would. */
function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function Chart(props: { minutes: SessionMinutes }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const node = box.current;
    if (!node || props.minutes.length === 0) return;
    const x = props.minutes.map((m) => Date.parse(m.minute) / 1000);
    const plot = new uPlot(
      {
        width: Math.max(320, node.clientWidth),
        height: 260,
        series: [
          {},
          { label: 'Diamonds', stroke: '#7cc4ff', width: 2, scale: 'gifts' },
          { label: 'Gifts', stroke: '#ffcf5c', width: 2, scale: 'gifts' },
          { label: 'Likes', stroke: '#ff7aa8', width: 2, scale: 'likes' },
        ],
        axes: [
          { stroke: '#9aa3b2' },
          { scale: 'gifts', stroke: '#9aa3b2', label: 'diamonds, gifts / min', size: 70 },
          {
            scale: 'likes',
            side: 1,
            stroke: '#9aa3b2',
            label: 'likes / min',
            grid: { show: false },
            size: 60,
          },
        ],
      },
      [
        x,
        props.minutes.map((m) => m.diamonds),
        props.minutes.map((m) => m.gifts),
        props.minutes.map((m) => m.likes),
      ],
      node,
    );
    return () => plot.destroy();
  }, [props.minutes]);
  return <div ref={box} class="history-chart" data-points={props.minutes.length} />;
}

function Viewers(props: { list: ViewerFigures[]; metric: Metric; label: string }) {
  if (props.list.length === 0) return <p class="muted">Nobody yet.</p>;
  return (
    <ol class="viewers" aria-label={props.label}>
      {props.list.map((v) => (
        <li key={v.uniqueId}>
          {v.nickname || v.uniqueId} — {NUMBER.format(v[props.metric])} {props.metric}
        </li>
      ))}
    </ol>
  );
}

export function HistoryView(props: { shared: Shared }) {
  const { api } = props.shared;
  const [sessions, setSessions] = useState<SessionSummary[] | undefined>();
  const [chosen, setChosen] = useState<number | undefined>();
  const [minutes, setMinutes] = useState<SessionMinutes>([]);
  const [metric, setMetric] = useState<Metric>('diamonds');
  const [allTime, setAllTime] = useState<ViewerFigures[]>([]);
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    api.sessions().then(
      (list) => {
        setSessions(list);
        setChosen((id) => id ?? list[0]?.id);
      },
      (err: unknown) => setError(describeError(err)),
    );
  }, [api]);
  useEffect(() => {
    if (chosen === undefined) return;
    api.sessionMinutes(chosen).then(setMinutes, (err: unknown) => setError(describeError(err)));
  }, [api, chosen]);
  useEffect(() => {
    api.leaderboard('all', metric).then(setAllTime, (err: unknown) => setError(describeError(err)));
  }, [api, metric]);

  const session = sessions?.find((s) => s.id === chosen);
  const downloadCsv = async () => {
    if (!session) return;
    try {
      save(await api.download(`/api/sessions/${session.id}/events.csv`), `session-${session.id}.csv`);
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <section aria-labelledby="history-title">
      <div class="section-head">
        <h2 id="history-title">History</h2>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      {sessions === undefined ? (
        <p class="muted">Loading…</p>
      ) : sessions.length === 0 ? (
        <Notice kind="info">
          No stream yet: every event is kept here (a session starts with the first event and ends after 30
          minutes without any).
        </Notice>
      ) : (
        <div class="history">
          <ul class="sessions" aria-label="Stream sessions">
            {sessions.map((s) => (
              <li key={s.id}>
                <button
                  type="button"
                  class={s.id === chosen ? 'chosen' : ''}
                  aria-pressed={s.id === chosen}
                  onClick={() => setChosen(s.id)}
                >
                  <strong>{WHEN.format(new Date(s.startedAt))}</strong>
                  <span class="muted">
                    {duration(s)}
                    {s.endedAt ? '' : ' · live'}
                  </span>
                  <span>
                    {NUMBER.format(s.totals.diamonds)} diamonds · {NUMBER.format(s.totals.likes)} likes ·{' '}
                    {NUMBER.format(s.totals.chats)} chats
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {session && (
            <section class="card" aria-labelledby="session-title">
              <div class="card-head">
                <h3 id="session-title">Stream of {WHEN.format(new Date(session.startedAt))}</h3>
                <button type="button" onClick={() => void downloadCsv()}>
                  Download CSV
                </button>
              </div>
              <dl class="totals">
                {(
                  [
                    ['Gifts', session.totals.gifts],
                    ['Diamonds', session.totals.diamonds],
                    ['Likes', session.totals.likes],
                    ['Follows', session.totals.follows],
                    ['Shares', session.totals.shares],
                    ['Subscribes', session.totals.subscribes],
                    ['Chats', session.totals.chats],
                    ['Peak viewers', session.totals.peakViewers],
                  ] as const
                ).map(([label, value]) => (
                  <div key={label}>
                    <dt>{label}</dt>
                    <dd data-total={label}>{NUMBER.format(value)}</dd>
                  </div>
                ))}
              </dl>
              <h4>Per minute</h4>
              <Chart minutes={minutes} />
              <h4>Top gifters of this stream</h4>
              <Viewers list={session.topGifters} metric="diamonds" label="Top gifters of this stream" />
            </section>
          )}
          <div class="card">
            <div class="card-head">
              <h3>All-time leaderboard</h3>
              <select
                aria-label="Rank by"
                value={metric}
                onChange={(e) => setMetric(e.currentTarget.value as Metric)}
              >
                <option value="diamonds">diamonds</option>
                <option value="likes">likes</option>
                <option value="chats">chats</option>
                <option value="points">points</option>
              </select>
            </div>
            <Viewers list={allTime} metric={metric} label="All-time leaderboard" />
          </div>
        </div>
      )}
    </section>
  );
}
