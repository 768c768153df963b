// Sources: the live channels the daemon reads events from (settings.json's `sources`
// with each one's state from /status, and those given on the command line), adding, turning off and
// removing one, and a box per platform (twitch-box.tsx, kick-box.tsx, youtube-box.tsx).

import { useCallback, useState } from 'preact/hooks';
import type { CredentialsReport } from '../../../../shared/credentials.js';
import { PLATFORM_NAMES } from '../../../../shared/platforms.js';
import type { SourceReport } from '../../../../shared/protocol/index.js';
import type { SettingsView as Settings, SourceEntry } from '../../../../shared/settings.js';
import { ApiError } from '../api.js';
import type { Shared } from '../shared-data.js';
import { describeError, Notice, PlatformMark } from '../ui.js';
import { usePolling } from '../use-polling.js';
import { AddSource } from './add-source.js';
import { type Channel, channelText, type Note, sameSource, sourceName } from './channels.js';
import { KickBox } from './kick-box.js';
import { SourceRow } from './source-row.js';
import { SourceStateLabel } from './source-state.js';
import { TwitchBox } from './twitch-box.js';
import { YouTubeBox } from './youtube-box.js';

const POLL_MS = 3000;

/** Why a row has no controls. */
const COMMAND_LINE_NOTE =
  'Given when overlay-daemon started (--tiktok, --twitch, --youtube, --kick): for this run only';

export function SourcesView(props: { shared: Shared }) {
  const { api } = props.shared;
  const [settings, setSettings] = useState<Settings>();
  const [reports, setReports] = useState<SourceReport[]>();
  const [credentials, setCredentials] = useState<CredentialsReport>();
  const [error, setError] = useState<string>();
  const [note, setNote] = useState<Note>();

  // settings.json may change elsewhere (by hand, another tab): both are read again on every poll.
  const load = useCallback(async () => {
    const [s, st] = await Promise.allSettled([api.settings(), api.status()]);
    if (s.status === 'fulfilled') setSettings(s.value);
    if (st.status === 'fulfilled') setReports(st.value.sources ?? []);
    const failed = [s, st].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    setError(failed ? describeError(failed.reason) : undefined);
    // Where the key in force comes from; an older daemon does not say (the box then says set or not).
    setCredentials(await api.credentials().catch(() => undefined));
  }, [api]);
  usePolling(load, POLL_MS);

  /** Changes the list as the daemon has it now and puts it in force; a refusal comes back to the caller. */
  const changeSources = async (
    edit: (sources: SourceEntry[]) => SourceEntry[],
    done: string,
  ): Promise<ApiError | undefined> => {
    setNote(undefined);
    try {
      const saved = await api.changeSettings((s) => ({ ...s, sources: edit(s.sources) }));
      setSettings(saved);
      setNote({ kind: 'ok', text: done });
      void load();
      return undefined;
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return err;
      setNote({ kind: 'error', text: `Not saved: ${describeError(err)}` });
      return undefined;
    }
  };

  const add = async (entry: Channel) => {
    let index = 0;
    const refused = await changeSources(
      (sources) => {
        index = sources.length;
        return [...sources, { ...entry, enabled: true }];
      },
      `Added ${sourceName(entry)}: the daemon is connecting to it.`,
    );
    return refused ? { refused, index } : undefined;
  };
  const edited = async (edit: (sources: SourceEntry[]) => SourceEntry[], done: string) => {
    const refused = await changeSources(edit, done);
    if (refused) setNote({ kind: 'error', text: `Not saved: ${describeError(refused)}` });
  };
  const toggle = (entry: SourceEntry) =>
    void edited(
      (sources) => sources.map((s) => (sameSource(s, entry) ? { ...s, enabled: !entry.enabled } : s)),
      `${sourceName(entry)} turned ${entry.enabled ? 'off' : 'on'}.`,
    );
  const remove = (entry: SourceEntry) =>
    void edited((sources) => sources.filter((s) => !sameSource(s, entry)), `${sourceName(entry)} removed.`);
  const setChatroomId = async (entry: SourceEntry, chatroomId: number | undefined) => {
    const refused = await changeSources(
      (sources) =>
        sources.map((s) => {
          if (!sameSource(s, entry)) return s;
          const { chatroomId: _old, ...rest } = s;
          return chatroomId === undefined ? rest : { ...rest, chatroomId };
        }),
      chatroomId === undefined
        ? `${sourceName(entry)}: chatroom id removed.`
        : `${sourceName(entry)}: chatroom id ${chatroomId} saved; the source starts again with it.`,
    );
    return refused ? describeError(refused) : undefined;
  };

  if (!settings) return error ? <Notice kind="error">{error}</Notice> : <p class="muted">Loading…</p>;

  const reportOf = (entry: Channel) => reports?.find((r) => sameSource(r, entry));
  // `--twitch` and friends run for this run only: /status lists them, settings.json does not.
  const fromCommandLine = (reports ?? []).filter((r) => !settings.sources.some((e) => sameSource(e, r)));
  const empty = settings.sources.length === 0 && fromCommandLine.length === 0;

  return (
    <section aria-labelledby="sources-title">
      <SourcesHead />
      {error && <Notice kind="error">{error}</Notice>}
      <div class="card">
        <h3>Channels</h3>
        {empty ? (
          <p class="muted">No source yet: add your TikTok, Twitch, YouTube or Kick channel below.</p>
        ) : (
          <SourcesTable
            sources={settings.sources}
            fromCommandLine={fromCommandLine}
            reportOf={reportOf}
            toggle={toggle}
            remove={remove}
            setChatroomId={setChatroomId}
          />
        )}
        {note && <Notice kind={note.kind}>{note.text}</Notice>}
      </div>
      <AddSource existing={settings.sources} add={add} />
      <div class="platform-boxes">
        <TwitchBox api={api} settings={settings} saved={setSettings} />
        <KickBox api={api} />
        <YouTubeBox api={api} settings={settings} saved={setSettings} origin={credentials?.youtubeApiKey} />
      </div>
    </section>
  );
}

/** The sources of settings.json, each with its controls, then those given on the command line. */
function SourcesTable(props: {
  sources: readonly SourceEntry[];
  fromCommandLine: readonly SourceReport[];
  reportOf: (entry: Channel) => SourceReport | undefined;
  toggle: (entry: SourceEntry) => void;
  remove: (entry: SourceEntry) => void;
  setChatroomId: (entry: SourceEntry, chatroomId: number | undefined) => Promise<string | undefined>;
}) {
  const { reportOf, toggle, remove, setChatroomId } = props;
  return (
    <table class="sources">
      <thead>
        <tr>
          <th scope="col">Platform</th>
          <th scope="col">Channel</th>
          <th scope="col">State</th>
          <th scope="col">
            <span class="visually-hidden">Controls</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.sources.map((entry) => (
          <SourceRow
            key={`${entry.platform}:${entry.channel}`}
            entry={entry}
            report={reportOf(entry)}
            toggle={() => toggle(entry)}
            remove={() => remove(entry)}
            setChatroomId={(chatroomId) => setChatroomId(entry, chatroomId)}
          />
        ))}
        {props.fromCommandLine.map((r) => (
          <tr
            key={`${r.platform}:${r.channel}`}
            data-source={`${r.platform}:${r.channel}`}
            data-from="command-line"
          >
            <td>
              <PlatformMark platform={r.platform} />
              {PLATFORM_NAMES[r.platform]}
            </td>
            <td class="source-channel">{channelText(r)}</td>
            <td>
              <SourceStateLabel report={r} />
            </td>
            <td class="muted" title={COMMAND_LINE_NOTE}>
              from the command line
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The view's title and what it is for. */
function SourcesHead() {
  return (
    <>
      <div class="section-head">
        <h1 id="sources-title" tabIndex={-1}>
          Sources
        </h1>
        <span class="muted">refreshes every {POLL_MS / 1000} s</span>
      </div>
      <p class="muted">
        The live channels events come from. Several can run at once; a change is in force as soon as it is
        saved.
      </p>
    </>
  );
}
