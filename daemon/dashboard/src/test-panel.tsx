// Test panel: send any stream event through POST /api/events and see which rules it fired.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { describeEvent } from '../../../shared/describe-event.js';
import { PLATFORM_NAMES, PLATFORM_TABLE } from '../../../shared/platforms.js';
import {
  PLATFORMS,
  type Platform,
  parseWith,
  STREAM_EVENT_TYPES,
  StreamEvent,
  type StreamEventType,
  type TestChatAnswer,
} from '../../../shared/protocol/index.js';
import type { Rule } from '../../../shared/rules.js';
import { type Reach, reachOf, whyNothingShows } from './event-reach.js';
import { fieldIssues } from './field-issues.js';
import type { Shared } from './shared-data.js';
import { describeError, FieldError, Notice, PlatformMark } from './ui.js';

interface DataField {
  key: string;
  label: string;
  numeric: boolean;
  initial: string;
}
const DATA_FIELDS: Record<StreamEventType, DataField[]> = {
  gift: [
    { key: 'giftName', label: 'Gift name', numeric: false, initial: 'Rose' },
    { key: 'repeatCount', label: 'How many', numeric: true, initial: '99' },
    { key: 'diamondCount', label: 'Diamonds each', numeric: true, initial: '1' },
  ],
  like: [{ key: 'likeCount', label: 'Likes', numeric: true, initial: '15' }],
  chat: [{ key: 'comment', label: 'Message', numeric: false, initial: 'Hello from the test panel!' }],
  viewer: [{ key: 'viewerCount', label: 'Viewers', numeric: true, initial: '120' }],
  follow: [],
  share: [],
  subscribe: [],
};

/** A gift's worth in the unit of the platform it is sent as: "Bits each". */
function giftValueLabel(platform: Platform): string {
  const { unit } = PLATFORM_TABLE[platform];
  if (unit.code === 'currency') return 'Amount each (cents of the currency)';
  return `${unit.many.charAt(0).toUpperCase()}${unit.many.slice(1)} each`;
}

interface Sent {
  at: string;
  platform: Platform;
  summary: string;
  /** The rules the daemon reports it fired for this event. */
  fired: Rule[];
  /** What the chat commands answered, here only: a test posts nothing to the chat. */
  chatAnswers: TestChatAnswer[];
  /** What showed it on each overlay (nothing: the log says why). */
  reach: { reach: Reach; why: string | undefined }[];
}

export function TestPanel(props: { shared: Shared }) {
  const { shared } = props;
  const [type, setType] = useState<StreamEventType>('gift');
  // `api` by default: an event as a tool posts it, without a platform mark.
  const [platform, setPlatform] = useState<Platform>('api');
  const [uniqueId, setUniqueId] = useState('test_viewer');
  const [nickname, setNickname] = useState('Test Viewer');
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.values(DATA_FIELDS).flatMap((fields) => fields.map((f) => [f.key, f.initial]))),
  );
  const [log, setLog] = useState<Sent[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const data: Record<string, string | number> = {};
  for (const f of DATA_FIELDS[type]) {
    const raw = values[f.key] ?? '';
    // Optional numbers left empty are simply absent.
    if (raw === '' && f.key === 'diamondCount') continue;
    data[f.key] = f.numeric ? (raw.trim() === '' ? Number.NaN : Number(raw)) : raw;
  }
  const candidate = { type, platform, user: { uniqueId, nickname }, data };
  const issues = fieldIssues(StreamEvent, candidate);

  const send = async (e: Event) => {
    e.preventDefault();
    const parsed = parseWith(StreamEvent, candidate);
    if (!parsed.ok) return setError(parsed.error);
    setBusy(true);
    setError(undefined);
    try {
      // The daemon's own verdict: the rules engine that fired them, cooldowns included.
      const { firedRules, chatAnswers = [] } = await shared.api.sendEvent(parsed.value);
      const fired = firedRules.map(
        (id) => shared.rules.find((r) => r.id === id) ?? { ...placeholderRule, id },
      );
      const entry: Sent = {
        at: new Date().toLocaleTimeString(),
        platform: parsed.value.platform,
        summary: describeEvent(parsed.value),
        fired,
        chatAnswers,
        reach: shared.overlays.map((overlay) => {
          const reach = reachOf(parsed.value, overlay, shared.rules, firedRules);
          const shown = reach.widgets.length > 0 || reach.rules.length > 0;
          return { reach, why: shown ? undefined : whyNothingShows(parsed.value, overlay) };
        }),
      };
      setLog((l) => [entry, ...l].slice(0, 20));
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const field = (id: string, label: string, path: string, input: JSX.Element) => (
    <div class={`field${issues.get(path) ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {input}
      <FieldError id={`${id}-error`} message={issues.get(path)} />
    </div>
  );

  return (
    <section aria-labelledby="test-title">
      <div class="section-head">
        <h1 id="test-title" tabIndex={-1}>
          Test events
        </h1>
      </div>
      <p class="muted">
        Sends an event exactly as if it came from the live stream: rules run and every open overlay receives
        it. A chat command (!points, !top) answers here, not in the chat.
      </p>
      <form class="card grid" onSubmit={send}>
        {field(
          'ev-type',
          'Event',
          'type',
          <select
            id="ev-type"
            value={type}
            onChange={(e) => {
              const next = STREAM_EVENT_TYPES.find((t) => t === e.currentTarget.value);
              if (next) setType(next);
            }}
          >
            {STREAM_EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>,
        )}
        {field(
          'ev-platform',
          'Platform',
          'platform',
          <select
            id="ev-platform"
            value={platform}
            onChange={(e) => {
              const next = PLATFORMS.find((p) => p === e.currentTarget.value);
              if (next) setPlatform(next);
            }}
          >
            {PLATFORMS.map((p) => (
              <option key={p} value={p}>
                {p === 'api' ? 'API (no platform)' : PLATFORM_NAMES[p]}
              </option>
            ))}
          </select>,
        )}
        {field(
          'ev-user',
          'User (uniqueId)',
          'user.uniqueId',
          <input id="ev-user" value={uniqueId} onInput={(e) => setUniqueId(e.currentTarget.value)} />,
        )}
        {field(
          'ev-nickname',
          'Nickname',
          'user.nickname',
          <input id="ev-nickname" value={nickname} onInput={(e) => setNickname(e.currentTarget.value)} />,
        )}
        {DATA_FIELDS[type].map((f) =>
          field(
            `ev-${f.key}`,
            f.key === 'diamondCount' ? giftValueLabel(platform) : f.label,
            `data.${f.key}`,
            <input
              id={`ev-${f.key}`}
              type={f.numeric ? 'number' : 'text'}
              min={f.numeric ? 0 : undefined}
              value={values[f.key] ?? ''}
              onInput={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })}
            />,
          ),
        )}
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            Send {type} event
          </button>
        </div>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      <h3>Sent</h3>
      {log.length === 0 && <p class="muted">Nothing sent yet.</p>}
      <ol class="event-log" aria-live="polite">
        {log.map((s, i) => (
          <li key={`${s.at}-${i}`} class="card">
            <strong>{s.at}</strong> <PlatformMark platform={s.platform} />
            {s.summary}
            <div class="fired">
              {s.fired.length === 0 ? (
                s.chatAnswers.length === 0 && <span>No rule fired.</span>
              ) : (
                <span>Fired: {s.fired.map((r) => r.name || r.id).join(', ')}</span>
              )}
            </div>
            {s.chatAnswers.map((a) => (
              <div key={a.command} class="chat-answer" data-command={a.command}>
                {`Chat command ${a.command} answers${a.platform === 'api' ? '' : ` on ${PLATFORM_NAMES[a.platform]}`}: “${a.text}” `}
                <span class="muted">(shown here only: a test posts nothing to the chat)</span>
              </div>
            ))}
            <ul class="reach">
              {s.reach.map(({ reach, why }) => (
                <li key={reach.overlay.id} data-overlay-id={reach.overlay.id} data-shown={why ? 'no' : 'yes'}>
                  {why ?? (
                    <>
                      On “{reach.overlay.name}”:{' '}
                      {[...reach.widgets, ...reach.rules.map((r) => `rule “${r}”`)].join(', ')}
                    </>
                  )}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ol>
    </section>
  );
}

const placeholderRule: Rule = {
  id: '',
  name: '',
  enabled: true,
  trigger: 'gift',
  conditions: {},
  cooldownMs: 0,
  actions: [],
};
