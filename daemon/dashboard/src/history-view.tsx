// History: the stream sessions in the event journal with their totals, charts of one session's gifts,
// diamonds, likes and chats per minute (uPlot, bundled; each figure on its own scale), its top viewers,
// the all-time leaderboard, the session as CSV, the test events kept apart (and removed on request), and
// what came in late while the streamer was away (counted, but it fired no rule).
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { describeEvent } from '../../../shared/describe-event.js';
import { giftValueText } from '../../../shared/money.js';
import {
  type CaughtUpEvents,
  parseWith,
  type SessionMinutes,
  type SessionSummary,
  TestEventsRemoved,
  type ViewerFigures,
} from '../../../shared/protocol/index.js';
import type { Shared } from './shared-data.js';
import { describeError, Notice, PlatformMark } from './ui.js';

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

/** `session-12-2026-11-25T20-31Z.csv`, as the daemon names it: the start time tells two sessions apart. */
function csvName(session: SessionSummary): string {
  return `session-${session.id}-${session.startedAt.slice(0, 16).replace(':', '-')}Z.csv`;
}

/** The figures charted per minute, each on a scale of its own (20 gifts stay visible beside 125,000 diamonds). */
const FIGURES = [
  { key: 'gifts', label: 'Gifts', stroke: '#ffcf5c' },
  { key: 'diamonds', label: 'Diamonds', stroke: '#7cc4ff' },
  { key: 'likes', label: 'Likes', stroke: '#ff7aa8' },
  { key: 'chats', label: 'Chats', stroke: '#8be28b' },
] as const;

/** One figure per minute: its own chart and axis, the cursor shared with the others. */
function FigureChart(props: { minutes: SessionMinutes; figure: (typeof FIGURES)[number] }) {
  const box = useRef<HTMLDivElement>(null);
  const { minutes, figure } = props;
  useEffect(() => {
    const node = box.current;
    if (!node || minutes.length === 0) return;
    const x = minutes.map((m) => Date.parse(m.minute) / 1000);
    const plot = new uPlot(
      {
        width: Math.max(320, node.clientWidth),
        height: 130,
        cursor: { sync: { key: 'history-minutes' } },
        legend: { show: true },
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [
          {},
          { label: `${figure.label} / min`, stroke: figure.stroke, width: 2, points: { show: false } },
        ],
        axes: [{ stroke: '#9aa3b2' }, { stroke: '#9aa3b2', size: 60 }],
        hooks: {
          // The scale in force, for a reader of the page (and its tests): each figure has its own.
          draw: [(u) => node.setAttribute('data-scale-max', String(u.scales.y?.max ?? ''))],
        },
      },
      [x, minutes.map((m) => m[figure.key])],
      node,
    );
    return () => plot.destroy();
  }, [minutes, figure]);
  return <div ref={box} data-figure={figure.key} role="img" aria-label={`${figure.label} per minute`} />;
}

function Chart(props: { minutes: SessionMinutes }) {
  return (
    <div class="history-chart" data-points={props.minutes.length}>
      {FIGURES.map((figure) => (
        <FigureChart key={figure.key} minutes={props.minutes} figure={figure} />
      ))}
    </div>
  );
}

function Viewers(props: { list: ViewerFigures[]; metric: Metric; label: string }) {
  if (props.list.length === 0) return <p class="muted">Nobody yet.</p>;
  return (
    <ol class="viewers" aria-label={props.label}>
      {props.list.map((v) => (
        <li key={v.uniqueId}>
          {v.nickname || v.uniqueId} —{' '}
          {props.metric === 'diamonds'
            ? // Gift value in the unit of the platform it came from (bits, a currency, diamonds).
              giftValueText(v.platform, v.diamonds, v.currency)
            : `${NUMBER.format(v[props.metric])} ${props.metric}`}
        </li>
      ))}
    </ol>
  );
}

/**
 * Events that reached the daemon late (the Kick feed's backlog after a night off): each at its own time,
 * counted in points, totals and goals, but none fired a rule, so the streamer reads them here.
 */
function WhileAway(props: { events: CaughtUpEvents['events'] }) {
  const { events } = props;
  if (events.length === 0) return null;
  return (
    <section class="card history-away" aria-labelledby="history-away-title">
      <h3 id="history-away-title">While you were away</h3>
      <p class="muted">
        {NUMBER.format(events.length)} event{events.length === 1 ? '' : 's'} came in late, from when the
        overlay server was off: counted in points, totals and goals, but no alert, rule or chat answer ran for{' '}
        {events.length === 1 ? 'it' : 'them'}.
      </p>
      <ul aria-label="While you were away">
        {events.map((e) => (
          <li key={e.seq}>
            <time dateTime={e.at}>{WHEN.format(new Date(e.at))}</time>{' '}
            <PlatformMark platform={e.event.platform} />
            {describeEvent(e.event)}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function HistoryView(props: { shared: Shared }) {
  const { api } = props.shared;
  const [sessions, setSessions] = useState<SessionSummary[] | undefined>();
  const [chosen, setChosen] = useState<number | undefined>();
  const [minutes, setMinutes] = useState<SessionMinutes>([]);
  const [metric, setMetric] = useState<Metric>('diamonds');
  const [allTime, setAllTime] = useState<ViewerFigures[]>([]);
  const [away, setAway] = useState<CaughtUpEvents['events']>([]);
  const [error, setError] = useState<string | undefined>();
  const [removedNote, setRemovedNote] = useState<string | undefined>();
  /** Bumped to read the sessions again (after test events were removed). */
  const [reload, setReload] = useState(0);

  useEffect(() => {
    api.sessions().then(
      (list) => {
        setSessions(list);
        setChosen((id) => (id !== undefined && list.some((s) => s.id === id) ? id : list[0]?.id));
      },
      (err: unknown) => setError(describeError(err)),
    );
  }, [api, reload]);
  useEffect(() => {
    api.caughtUp().then(setAway, (err: unknown) => setError(describeError(err)));
  }, [api, reload]);
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
      save(await api.download(`/api/sessions/${session.id}/events.csv`), csvName(session));
    } catch (err) {
      setError(describeError(err));
    }
  };
  const testEvents = sessions?.reduce((sum, s) => sum + s.testEvents, 0) ?? 0;
  const removeTestEvents = async () => {
    try {
      const answer = parseWith(
        TestEventsRemoved,
        await api.request('/api/test-events', { method: 'DELETE' }),
      );
      const removed = answer.ok ? answer.value.removed : 0;
      setRemovedNote(`${NUMBER.format(removed)} test event${removed === 1 ? '' : 's'} removed.`);
      setReload((n) => n + 1);
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <section aria-labelledby="history-title">
      <div class="section-head">
        <h1 id="history-title" tabIndex={-1}>
          History
        </h1>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      {removedNote && <Notice kind="info">{removedNote}</Notice>}
      <WhileAway events={away} />
      {testEvents > 0 && (
        <section class="history-tests" aria-label="Test events">
          <p>
            {NUMBER.format(testEvents)} test event{testEvents === 1 ? '' : 's'} (from the test panel or the{' '}
            <code>event</code> command) {testEvents === 1 ? 'is' : 'are'} kept apart: counted in no total,
            chart or leaderboard.
          </p>
          {api.allows('DELETE', '/api/test-events') && (
            <button type="button" onClick={() => void removeTestEvents()}>
              Remove test events
            </button>
          )}
        </section>
      )}
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
                  {s.testEvents > 0 && (
                    <span class="muted" data-test-events={s.testEvents}>
                      + {NUMBER.format(s.testEvents)} test event{s.testEvents === 1 ? '' : 's'}, not counted
                    </span>
                  )}
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
