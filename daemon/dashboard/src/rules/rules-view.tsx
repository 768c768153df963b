// Rules: list, create, edit, reorder, delete; validated with RuleList before PUT /api/rules.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { parseWith } from '../../../../shared/protocol/index.js';
import { type Rule, RuleList } from '../../../../shared/rules.js';
import { ApiError } from '../api.js';
import { fieldIssues } from '../field-issues.js';
import type { Shared } from '../shared-data.js';
import { ErrorNotice, Notice } from '../ui.js';
import { newRule } from './new-rule.js';
import { RuleEditor } from './rule-editor.js';

export function RulesView(props: { shared: Shared }) {
  const { shared } = props;
  const [draft, setDraft] = useState<Rule[]>(shared.rules);
  const [serverError, setServerError] = useState<ApiError | undefined>();
  const [note, setNote] = useState<{ kind: 'ok' | 'error'; text: string } | undefined>();
  const [refusal, setRefusal] = useState<unknown>();

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
    return issues.get(`${index}.${sub}`);
  };

  const save = async () => {
    setServerError(undefined);
    setRefusal(undefined);
    // Same schema as the daemon: a list it would refuse is not sent.
    const parsed = parseWith(RuleList, draft);
    if (!parsed.ok) {
      setNote({ kind: 'error', text: `Not saved: ${parsed.error}` });
      return;
    }
    try {
      await shared.api.saveRules(parsed.value);
      await shared.reloadRules();
      setNote({
        kind: 'ok',
        text: `Saved ${parsed.value.length} rule${parsed.value.length === 1 ? '' : 's'}.`,
      });
    } catch (err) {
      if (err instanceof ApiError) setServerError(err);
      setNote(undefined);
      setRefusal(err);
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
        <h2 id="rules-title">Rules</h2>
        <button
          type="button"
          onClick={() =>
            setDraft((list) => [...list, newRule(shared.overlays, new Set(list.map((r) => r.id)))])
          }
        >
          New rule
        </button>
        <button type="button" class="primary" onClick={() => void save()} disabled={!dirty}>
          Save rules
        </button>
        {dirty && (
          <button type="button" class="quiet" onClick={() => setDraft(shared.rules)}>
            Discard changes
          </button>
        )}
      </div>
      <p class="muted">
        Rules run in this order on every event. A matching rule runs its actions: overlay commands, speech,
        OBS requests, webhooks and Streamer.bot actions.
      </p>
      {fileProblem !== null && <Notice kind="error">{fileProblem}</Notice>}
      {note && <Notice kind={note.kind}>{note.text}</Notice>}
      {refusal !== undefined && <ErrorNotice error={refusal} prefix="The daemon refused the rules: " />}
      {issues.get('') && <Notice kind="error">{issues.get('')}</Notice>}
      {draft.length === 0 && <Notice kind="info">No rules yet.</Notice>}
      <ul class="cards">
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
            onMove={(d) => move(i, d)}
            onRemove={() => setDraft((list) => list.filter((_, j) => j !== i))}
          />
        ))}
      </ul>
    </section>
  );
}
