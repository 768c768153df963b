// "Test this rule": runs the rule's actions once, as the editor has them (saved or not), for a sample
// event that meets its conditions, and says what each action did.
import { useState } from 'preact/hooks';
import type { RuleTestResult } from '../../../../shared/protocol/index.js';
import { parseWith } from '../../../../shared/protocol/index.js';
import { Rule } from '../../../../shared/rules.js';
import type { Shared } from '../shared-data.js';
import { describeError, Notice } from '../ui.js';

export function RuleTest(props: { rule: Rule; shared: Shared }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<RuleTestResult | undefined>();
  const [problem, setProblem] = useState<string | undefined>();

  const run = async () => {
    setResult(undefined);
    setProblem(undefined);
    const parsed = parseWith(Rule, props.rule);
    if (!parsed.ok) {
      setProblem('Fix the marked fields first.');
      return;
    }
    setBusy(true);
    try {
      setResult(await props.shared.api.testRule(parsed.value));
    } catch (err) {
      setProblem(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const outcomes = result ? [...result.outcomes].sort((a, b) => a.action - b.action) : [];
  return (
    <>
      <button type="button" onClick={() => void run()} disabled={busy}>
        {busy ? 'Testing…' : 'Test this rule'}
      </button>
      {problem && <Notice kind="error">{problem}</Notice>}
      {result && (
        <div class="card rule-test-result" role="status" aria-label="Test result">
          <p class="muted">
            Ran once for a test {result.event.type} from “{result.event.user.nickname}” (conditions and
            cooldowns aside).
          </p>
          <ul class="test-outcomes">
            {outcomes.map((o, i) => (
              <li key={i} class={o.ok ? 'ok' : 'failed'} data-outcome={o.ok ? 'ok' : 'failed'}>
                Action {o.action + 1} ({o.kind}): {o.ok ? `done in ${o.ms} ms` : `failed: ${o.error}`}
              </li>
            ))}
          </ul>
          {result.unfinished > 0 && (
            <p class="muted">
              {result.unfinished} still waiting (a wait before it, or its queue): see Actions for how it ends.
            </p>
          )}
        </div>
      )}
    </>
  );
}
