// "Test this rule": runs the rule's actions once, as the editor has them (saved or not), for a sample
// event that meets its conditions, and says what each action did.
import { useState } from 'preact/hooks';
import { PLATFORM_NAMES } from '../../../../shared/platforms.js';
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
            {outcomes.map((o, i) => {
              const state = !o.ok ? 'failed' : o.skipped !== undefined ? 'skipped' : 'ok';
              return (
                <li key={i} class={state} data-outcome={state}>
                  Action {o.action + 1} ({o.kind}):{' '}
                  {state === 'failed'
                    ? `failed: ${o.error}`
                    : state === 'skipped'
                      ? `not run: ${o.skipped}`
                      : `done in ${o.ms} ms`}
                </li>
              );
            })}
          </ul>
          {result.chat && result.chat.length > 0 && (
            <ul class="test-chat" aria-label="Chat the rule would send (a test sends none)">
              {result.chat.map((c, i) => {
                const on = c.platform ? ` on ${PLATFORM_NAMES[c.platform]}` : '';
                return (
                  <li
                    key={i}
                    data-chat-platform={c.platform ?? 'none'}
                    data-chat={c.skipped === undefined ? 'would-send' : 'would-skip'}
                  >
                    {c.skipped === undefined ? (
                      <>
                        Action {c.action + 1} would send{on}: <q>{c.text}</q>
                      </>
                    ) : (
                      <>
                        Action {c.action + 1} would not send{on}: {c.skipped}.
                        {c.text !== undefined && (
                          <span class="muted">
                            {' '}
                            Its text: <q>{c.text}</q>
                          </span>
                        )}
                      </>
                    )}
                  </li>
                );
              })}
            </ul>
          )}
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
