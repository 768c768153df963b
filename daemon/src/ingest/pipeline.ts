// What the daemon does with each stream event after broadcasting it: run the rules, then keep widget state.
//
// - Rules: the list in force (`rules.current()`) is compiled by a RuleEngine when it changes (the
//   store hands out a new array on every change), never per event. Each fired action goes out as
//   `overlay-command` through `hub.sendCommand`. Rules run after the `stream-event` broadcast
//   (ingest.ts puts that step first), so they never hold up event delivery; their actions start once
//   the event's turn is over (the 202 answered, the next event read), in the order they fired.
// - Widget state (docs/events-and-rules.md §3): goal `current`, counter `value` and top-gifters
//   `entries` follow the events. They have one owner, widget-state/live-values-store.ts, which queues
//   and coalesces the changes, applies `reset` commands, and keeps the values apart from the overlay
//   files; this step hands it each event after the rules, except test events (they count nowhere).
// - Built-in chat commands (chat/commands.ts, settings.json `commands`): a command's answer, a `chat`
//   action, runs with the actions fired in the same turn.
// - The TikFinity event feed (parts/tikfinity-feed.ts): last, each event in TikTok-Live-Connector's
//   shape to the local games and widgets that listen; test events too, caught-up ones not.
import type { StreamEvent } from '../../../shared/protocol/index.js';
import type { RuleList } from '../../../shared/rules.js';
import { ActionRunner } from '../actions/runner.js';
import type { ChatCommands } from '../chat/commands.js';
import { type FiredAction, RuleEngine } from '../rules/engine.js';
import type { LiveValuesStore } from '../widget-state/live-values-store.js';
import type { EventHandler, EventMark, IngestContext } from './ingest.js';

interface EventPipelineOptions {
  /** Runs the actions of fired rules; by default one that only sends overlay commands through the hub. */
  actions?: ActionRunner;
  /** Moves the values widgets keep from events; without it, events change no widget state. */
  liveValues?: Pick<LiveValuesStore, 'handleEvent'>;
  /** The built-in chat commands (chat/commands.ts): their answers run with the rules' actions. */
  commands?: Pick<ChatCommands, 'answer' | 'testAnswer'>;
  /** The TikFinity event feed's step: it decides itself which events go out. */
  tikfinityFeed?: EventHandler;
}

interface EventPipeline {
  /** The steps to hand to createIngest after the broadcast: rules first, then widget state. */
  handlers: EventHandler[];
  /** Stops the pipeline (shutdown); the live values' owner writes its own waiting changes. */
  close(): void;
}

export function createEventPipeline(ctx: IngestContext, options: EventPipelineOptions = {}): EventPipeline {
  const { hub, rules, log } = ctx;

  // --- rules -------------------------------------------------------------------------------
  const runner =
    options.actions ??
    new ActionRunner({ sendCommand: (overlayId, command) => hub.sendCommand(overlayId, command), log });
  const engine = new RuleEngine();
  let compiledFrom: RuleList | undefined;
  /** Actions fired in this turn, run together once it is over. */
  let fired: FiredAction[][] = [];
  let firing: NodeJS.Immediate | undefined;
  const runFired = () => {
    if (firing) clearImmediate(firing);
    firing = undefined;
    const batch = fired;
    fired = [];
    for (const actions of batch) runner.run(actions);
  };
  const runRules: EventHandler = (event, _ctx, mark) => {
    // A caught-up event (it happened a while ago) is counted, never acted on: no alert, speech, webhook.
    if (mark.caughtUp) return;
    const list = rules.current();
    if (list !== compiledFrom) {
      compiledFrom = list;
      for (const failure of engine.load(list))
        log(`[rules] rule "${failure.ruleName}" cannot be used: ${failure.message}`);
    }
    const { actions, errors } = engine.evaluate(event);
    for (const error of errors)
      log(`[rules] rule "${error.ruleName}" failed on a ${event.type} event: ${error.message}`);
    const firedRules: string[] = [];
    for (const action of actions)
      if (firedRules[firedRules.length - 1] !== action.ruleId) firedRules.push(action.ruleId);
    // Run after this turn: neither the answer to the event nor the next event waits for the actions.
    if (actions.length > 0) {
      fired.push(actions);
      firing ??= setImmediate(runFired);
    }
    return { firedRules };
  };
  // A built-in chat command's answer goes with the actions of this turn. A test event's answer is
  // reported to the test instead: a test posts nothing to the real chat.
  const answerCommand: EventHandler = (event, _ctx, mark) => {
    // Nobody waits for an answer to a command given hours ago.
    if (mark.caughtUp) return;
    if (mark.test) {
      const answer = options.commands?.testAnswer(event);
      return answer ? { chatAnswers: [answer] } : undefined;
    }
    const answer = options.commands?.answer(event);
    if (!answer) return;
    fired.push([answer]);
    firing ??= setImmediate(runFired);
  };

  // --- widget state: the live values' owner moves them (widget-state/live-values-store.ts) -----
  const liveValues = options.liveValues;
  return {
    handlers: [
      runRules,
      ...(options.commands ? [answerCommand] : []),
      // A test event moves no kept value: a test gift never reaches the top gifters shown on stream.
      ...(liveValues
        ? [
            (event: StreamEvent, _ctx: IngestContext, mark: EventMark) => {
              if (!mark.test) liveValues.handleEvent(event);
            },
          ]
        : []),
      ...(options.tikfinityFeed ? [options.tikfinityFeed] : []),
    ],
    close() {
      // What the last events fired still starts, as it would have a moment later.
      runFired();
    },
  };
}
