// The rules of the control API: read and save them whole with an ETag (a paired device with secrets hidden),
// whether rules.json reads, and "test this rule" with its actions' outcomes.
import type { IncomingMessage } from 'node:http';
import type { Polka } from 'polka';
import type { FileProblem } from '../../../shared/data-files.js';
import type { ChatPreview, RuleTestResult } from '../../../shared/protocol/index.js';
import { RuleList, RuleTestInput } from '../../../shared/rules.js';
import type { ActionRunner } from '../actions/runner.js';
import {
  isTheSavedRule,
  outcomesForDevice,
  restoreHidden,
  rulesForDevice,
  storedHeaderMoved,
} from '../devices/rule-secrets.js';
import { errorMessage } from '../errors.js';
import { type FiredAction, fireRule } from '../rules/engine.js';
import { sampleEvent } from '../rules/sample-event.js';
import type { DataDir } from '../store/data-dir.js';
import type { RulesStore } from '../store/rules-store.js';
import { readJson } from './body.js';
import type { CreationLimits } from './creation-limits.js';
import type { DeviceAccess } from './device-access.js';
import { etagOf, ifMatchHolds, sendPreconditionFailed } from './etag.js';
import { sendError, sendJson } from './responses.js';

/** How long "test this rule" waits for outcomes: a webhook's 5 s timeout and a little more. */
const RULE_TEST_WAIT_MS = 6000;

export function mountRuleRoutes(
  app: Polka,
  ctx: {
    rules: RulesStore;
    dataDir: DataDir;
    actions: ActionRunner;
    limits?: CreationLimits | undefined;
    deviceAccess?: DeviceAccess | undefined;
  },
): void {
  const { rules } = ctx;
  /** A paired device reads rules and outcomes with webhook tokens and stored headers hidden (rule-secrets.ts). */
  const deviceAsks = (req: IncomingMessage) => ctx.deviceAccess?.deviceOf(req) !== undefined;
  /** The rules as `req` reads them, and so the version its If-Match quotes. */
  const rulesAsRead = (req: IncomingMessage, list: RuleList) =>
    deviceAsks(req) ? rulesForDevice(list) : list;

  app.get('/api/rules', (req, res) => {
    const list = rulesAsRead(req, rules.current());
    sendJson(res, 200, list, { ETag: etagOf(list), 'Cache-Control': 'no-cache' });
  });

  // Whether rules.json reads: the Rules view says so when it opens, not only when a save is refused.
  app.get('/api/rules/problem', (_req, res) => {
    const reason = rules.unreadable;
    sendJson(res, 200, {
      problem:
        reason === undefined
          ? null
          : `${ctx.dataDir.rulesFile} could not be read (${reason}); the rules in force are the last good ones, and saving is refused until the file is fixed or removed`,
    } satisfies FileProblem);
  });

  app.put('/api/rules', async (req, res) => {
    const sent = await readJson(req, res, RuleList);
    if (!sent) return;
    const inForce = etagOf(rulesAsRead(req, rules.current()));
    if (!ifMatchHolds(req, inForce)) return sendPreconditionFailed(res, inForce);
    const allowed = ctx.limits?.canSaveRules(sent.length, rules.current().length) ?? { ok: true };
    if (!allowed.ok) return sendError(res, allowed.code, allowed.message);
    // A device sends back hidden what it read hidden: the stored values stay.
    const restored = deviceAsks(req)
      ? restoreHidden(rules.current(), sent)
      : { ok: true as const, rules: sent };
    if (!restored.ok) return sendError(res, 'bad_request', restored.message);
    const list = restored.rules;
    // Sending a stored credential elsewhere is changing it: the streamer's own dashboard only (§11).
    const moved = deviceAsks(req) ? storedHeaderMoved(rules.current(), list) : undefined;
    if (moved !== undefined)
      return sendError(
        res,
        'forbidden',
        `Only the streamer’s own dashboard may send a stored header to another address: ${moved}`,
      );
    const result = await rules.replace(list);
    if (result.ok) {
      const saved = rulesAsRead(req, result.rules);
      return sendJson(res, 200, saved, { ETag: etagOf(saved) });
    }
    sendError(res, result.reason === 'unavailable' ? 'unavailable' : 'conflict', result.message);
  });

  // "Test this rule": its actions once, for a sample event, conditions and cooldowns aside; the answer
  // waits for their outcomes (a little longer than a webhook's timeout).
  app.post('/api/rules/test', async (req, res) => {
    const input = await readJson(req, res, RuleTestInput);
    if (!input) return;
    const device = ctx.deviceAccess?.deviceOf(req);
    const id = 'ruleId' in input ? input.ruleId : input.rule.id;
    const saved = rules.current().find((r) => r.id === id);
    if ('ruleId' in input && !saved) return sendError(res, 'not_found', `No saved rule has the id "${id}"`);
    // A paired device runs only what the streamer saved: a rule of its own making could send a webhook
    // anywhere from the streamer's computer (§11). What runs is the saved rule, stored headers and all.
    if (device && 'rule' in input && !(saved && isTheSavedRule(input.rule, saved)))
      return sendError(
        res,
        'forbidden',
        saved
          ? `A paired device tests only saved rules, and rule "${id}" differs from the saved one: save it first`
          : `A paired device tests only saved rules, and none has the id "${id}": save it first`,
      );
    const rule = device || 'ruleId' in input ? saved : input.rule;
    if (!rule) return sendError(res, 'not_found', `No saved rule has the id "${id}"`);
    if (device) ctx.deviceAccess?.noteForAudit(req, `rule "${rule.name || rule.id}" (${rule.id})`);
    const event = sampleEvent(rule);
    let fired: FiredAction[];
    try {
      fired = fireRule(rule, event);
    } catch (err) {
      return sendError(res, 'bad_request', `rule: ${errorMessage(err)}`);
    }
    // A chat action shows what it would send; the test sends none.
    const chat: ChatPreview[] = [];
    for (const action of fired)
      if (action.kind === 'chat' && !action.preview) {
        chat.push(...ctx.actions.previewChat(action));
        action.preview = true;
      }
    const done = await ctx.actions.test(fired, RULE_TEST_WAIT_MS);
    const outcomes = deviceAsks(req) ? outcomesForDevice(done) : done;
    sendJson(res, 200, {
      event,
      outcomes,
      unfinished: fired.length - outcomes.length,
      ...(chat.length > 0 ? { chat } : {}),
    } satisfies RuleTestResult);
  });
}
