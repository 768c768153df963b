// The table from an action's `kind` to its executor. A new kind is one file beside this one (its
// executor, made by an `ExecutorFactory`) and one entry here; the schema of its fields is in shared/rules.ts.
import type { FiredAction } from '../../rules/engine.js';
import { chat } from './chat.js';
import { obs } from './obs.js';
import { overlay } from './overlay.js';
import { speak } from './speak.js';
import { streamerbot } from './streamerbot.js';
import type { ActionServices, Executed, Executor, ExecutorFactory, Refused } from './types.js';
import { webhook } from './webhook.js';

export type { ActionServices, Executed, Executor, ExecutorFactory, Refused } from './types.js';
export { ActionSkipped } from './types.js';

type Kind = FiredAction['kind'];

export const EXECUTORS: { readonly [K in Kind]: ExecutorFactory<K> } = {
  overlay,
  speak,
  obs,
  webhook,
  streamerbot,
  chat,
};

/** Every kind's executor, made once for one runner. */
export type Executors = { readonly [K in Kind]: Executor<K> };

export function makeExecutors(services: ActionServices): Executors {
  const made: Partial<Record<Kind, unknown>> = {};
  for (const kind of Object.keys(EXECUTORS) as Kind[])
    made[kind] = (EXECUTORS[kind] as ExecutorFactory<Kind>)(services);
  return made as Executors;
}

/** Runs `action` with the executor of its kind. */
export function execute(
  executors: Executors,
  action: FiredAction,
): Executed | Refused | undefined | Promise<Executed | undefined> {
  return (executors[action.kind] as Executor<Kind>)(action as never);
}
