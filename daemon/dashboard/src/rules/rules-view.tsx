// Rules: list, create, edit, reorder, delete; validated with RuleList before PUT /api/rules.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { parseWith } from '../../../../shared/protocol/index.js';
import { type Rule, RuleList } from '../../../../shared/rules.js';
import { ApiError } from '../api.js';
import { fieldIssues } from '../field-issues.js';
import type { Shared } from '../shared-data.js';
import { ErrorNotice, focusSoon, Notice } from '../ui.js';
import { newRule } from './new-rule.js';
import { RuleEditor } from './rule-editor.js';

export function RulesView(props: { shared: Shared }) {
  const { shared } = props;
  const [draft, setDraft] = useState<Rule[]>(shared.rules);
  const [serverError, setServerError] = useState<ApiError | undefined>();
  const [note, setNote] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();
  const [refusal, setRefusal] = useState<unknown>();
  /** Controls the person has changed or left: only their messages show, until a save shows them all. */
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  /** Bumped on each outcome worth announcing: the note takes keyboard focus. */
  const [noteFocus, setNoteFocus] = useState(0);
  const announce = (next: { kind: 'ok' | 'error'; text: string }) => {
    setNote(next);
    setNoteFocus((n) => n + 1);
  };
  const touch = (e: Event) => {
    const id = e.target instanceof HTMLElement ? e.target.id : '';
    if (id && !touched.has(id)) setTouched((set) => new Set(set).add(id));
  };

  useEffect(() => setDraft(shared.rules), [shared.rules]);
  // A rules.json that does not read (a hand edit with an error) is said when the view opens.
  const [fileProblem, setFileProblem] = useState<string | null>(null);
  useEffect(() => {
    shared.api.rulesProblem().then(setFileProblem, () => setFileProblem(null));
  }, [shared.api, shared.rules]);

  const issues = useMemo(() => fieldIssues(RuleList, draft), [draft]);
  const dirty = JSON.stringify(draft) !== JSON.stringify(shared.rules);

  const errorOf = (index: number) => (sub: string) => {
    if (serverError?.field === `${index}.${sub}`) return serverError.message.replace(/^[^:]+: /, '');
    const shown = submitted || touched.has(`rule-${index}-${sub.replace(/\./g, '-')}`);
    return shown ? issues.get(`${index}.${sub}`) : undefined;
  };

  const save = async () => {
    setServerError(undefined);
    setRefusal(undefined);
    setSubmitted(true);
    // Same schema as the daemon: a list it would refuse is not sent.
    const parsed = parseWith(RuleList, draft);
    if (!parsed.ok) {
      const [path, words] = [...issues][0] ?? ['', parsed.error];
      announce({ kind: 'error', text: `Not saved: ${path ? `${path}: ` : ''}${words}` });
      return;
    }
    try {
      await shared.api.saveRules(parsed.value);
      await shared.reloadRules();
      setSubmitted(false);
      setTouched(new Set());
      announce({
        kind: 'ok',
        text: `Saved ${parsed.value.length} rule${parsed.value.length === 1 ? '' : 's'}.`,
      });
    } catch (err) {
      if (err instanceof ApiError) setServerError(err);
      setNote(undefined);
      setRefusal(err);
      // The refusal takes focus (it is below the buttons), so the keyboard is not left on the page's body.
      focusSoon(() => document.querySelector<HTMLElement>('[data-rules-refusal]'));
    }
  };

  const move = (index: number, delta: number) =>
    setDraft((list) => {
      const to = index + delta;
      if (to < 0 || to >= list.length) return list;
      const next = [...list];
      const [rule] = next.splice(index, 1);
      if (rule) next.splice(to, 0, rule);
      return next;
    });

  return (
    <section aria-labelledby="rules-title">
      <div class="section-head">
        <h1 id="rules-title" tabIndex={-1}>
          Rules
        </h1>
        <button
          type="button"
          onClick={() => {
            const rule = newRule(shared.overlays, new Set(draft.map((r) => r.id)));
            setDraft((list) => [...list, rule]);
            // The new rule is at the end of a long list: bring it into view with its name ready to type.
            focusSoon(() => document.querySelector<HTMLElement>(`li[data-rule-id="${rule.id}"] input`));
          }}
        >
          New rule
        </button>
        <button type="button" class="primary" onClick={() => void save()} disabled={!dirty}>
          Save rules
        </button>
        {dirty && (
          <button
            type="button"
            class="quiet"
            onClick={() => {
              setDraft(shared.rules);
              setSubmitted(false);
              setTouched(new Set());
              announce({ kind: 'ok', text: 'Changes discarded: the saved rules are back.' });
            }}
          >
            Discard changes
          </button>
        )}
      </div>
      <p class="muted">
        Rules run in this order on every event. A matching rule runs its actions: overlay commands, speech,
        OBS requests, webhooks and Streamer.bot actions.
      </p>
      {fileProblem !== null && <Notice kind="error">{fileProblem}</Notice>}
      {note && (
        <Notice kind={note.kind} focus={noteFocus}>
          {note.text}
        </Notice>
      )}
      {refusal !== undefined && (
        <div data-rules-refusal tabIndex={-1}>
          <ErrorNotice error={refusal} prefix="The daemon refused the rules: " />
        </div>
      )}
      {submitted && issues.get('') && <Notice kind="error">{issues.get('')}</Notice>}
      {draft.length === 0 && <Notice kind="info">No rules yet.</Notice>}
      <ul class="cards" onInput={touch} onChange={touch} onFocusOut={touch}>
        {draft.map((rule, i) => (
          <RuleEditor
            key={rule.id}
            rule={rule}
            index={i}
            count={draft.length}
            shared={shared}
            error={errorOf(i)}
            onChange={(r) => {
              setServerError(undefined);
              setDraft((list) => list.map((x, j) => (j === i ? r : x)));
            }}
            onMove={(d) => {
              move(i, d);
              // The rule's card moves: keep the keyboard on the button that moved it (or, at the end of
              // the list where that one is disabled, on the other).
              const name = rule.name || rule.id;
              const labels = d < 0 ? ['up', 'down'] : ['down', 'up'];
              focusSoon(() =>
                labels
                  .map((way) =>
                    document.querySelector<HTMLButtonElement>(
                      `li[data-rule-id="${CSS.escape(rule.id)}"] button[aria-label="${CSS.escape(`Move ${name} ${way}`)}"]`,
                    ),
                  )
                  .find((button) => button && !button.disabled),
              );
            }}
            onRemove={() => {
              setDraft((list) => list.filter((_, j) => j !== i));
              announce({
                kind: 'ok',
                text: `Removed “${rule.name || rule.id}”. Save rules to keep this, or discard the changes.`,
              });
            }}
          />
        ))}
      </ul>
    </section>
  );
}
