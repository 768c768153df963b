// The built-in chat commands (decisions-3 §12), settings.json `commands`: a chat message whose first word is
// a command's trigger (any case) is answered in the chat it came from with a `chat` action, run by the
// action runner like a rule's (queued, kept to the platform's send limit, logged). The answer's text is a
// template with the rule placeholders plus `{points}` (the viewer's all-time points on that platform) and
// `{top}` (the first three of the session leaderboard by points, "name (points), …"). Each command waits
// `cooldownMs` between two answers, and `userCooldownMs` between two answers to one viewer.
import type { Platform, StreamEvent, TestChatAnswer } from '../../../shared/protocol/index.js';
import type { ChatCommandSettings, CommandsSettings } from '../../../shared/settings.js';
import { type FiredAction, templateContext } from '../rules/engine.js';
import { compileTemplate, parseTemplate, type TemplateContext } from '../rules/template.js';

export const COMMAND_NAMES = ['points', 'top'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** How many viewers `{top}` names. */
export const TOP_COUNT = 3;
/** What `{top}` says while nobody has points in the session. */
export const NO_TOP = 'no one yet';
/** Viewers remembered for per-viewer cooldowns; the oldest are forgotten past this. */
const MAX_VIEWER_COOLDOWNS = 10_000;

/** Where the answers' figures come from (the journal: `journalFigures`). */
export interface CommandFigures {
  /** A viewer's points on one platform across every session. */
  points(platform: Platform, uniqueId: string): number;
  /** The viewers with the most points in the session, best first, at most `limit`. */
  top(limit: number): readonly { nickname: string; points: number }[];
}

/** The figures as the journal keeps them (journal/journal.ts). */
export function journalFigures(journal: {
  viewerPoints(platform: Platform, uniqueId: string): number;
  leaderboard(scope: 'session', metric: 'points', limit: number): { nickname: string; points: number }[];
}): CommandFigures {
  return {
    points: (platform, uniqueId) => journal.viewerPoints(platform, uniqueId),
    top: (limit) => journal.leaderboard('session', 'points', limit),
  };
}

/** `{top}`: "Ann (120), Bob (80), Cy (5)". */
export function topText(top: readonly { nickname: string; points: number }[]): string {
  return top.length === 0 ? NO_TOP : top.map((v) => `${v.nickname} (${v.points})`).join(', ');
}

interface ChatCommandsOptions {
  settings: () => CommandsSettings;
  figures: CommandFigures;
  /** Milliseconds; cooldowns are measured on it. */
  now?: () => number;
}

/** A command's text compiled once (again when the settings change it), and which figures it reads. */
interface CompiledText {
  text: string;
  render: (context: TemplateContext) => string;
  points: boolean;
  top: boolean;
}

function compile(text: string): CompiledText {
  const parts = parseTemplate(text);
  const uses = (name: string) => parts.some((p) => typeof p !== 'string' && p.length === 1 && p[0] === name);
  return { text, render: compileTemplate(text), points: uses('points'), top: uses('top') };
}

/** The first word of a chat message, lowercased (as a rule's `command` condition reads it). */
function firstWord(comment: string): string {
  return comment.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? '';
}

export class ChatCommands {
  readonly #options: ChatCommandsOptions;
  readonly #now: () => number;
  readonly #compiled = new Map<CommandName, CompiledText>();
  /** When each command last answered. */
  readonly #lastAnswer = new Map<CommandName, number>();
  /** When each (command, platform, viewer) was last answered; in insertion order, oldest first. */
  readonly #lastAnswerTo = new Map<string, number>();

  constructor(options: ChatCommandsOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * The `chat` action answering `event`, when it is a chat message starting with an enabled command's
   * trigger and neither cooldown holds it back; otherwise undefined. Reads the figures only then.
   */
  answer(event: StreamEvent): FiredAction | undefined {
    const found = this.#command(event);
    if (!found) return undefined;
    const { name, command } = found;
    const now = this.#now();
    const last = this.#lastAnswer.get(name);
    if (command.cooldownMs > 0 && last !== undefined && now - last < command.cooldownMs) return undefined;
    const viewerKey = `${name}\u0000${event.platform}\u0000${event.user.uniqueId.toLowerCase()}`;
    const lastTo = this.#lastAnswerTo.get(viewerKey);
    if (command.userCooldownMs > 0 && lastTo !== undefined && now - lastTo < command.userCooldownMs)
      return undefined;
    const text = this.#render(name, command, event);
    this.#lastAnswer.set(name, now);
    if (command.userCooldownMs > 0) this.#remember(viewerKey, now);
    return {
      ruleId: `command:${name}`,
      ruleName: `chat command ${command.trigger}`,
      index: 0,
      kind: 'chat',
      text,
      platform: 'same',
      from: event.platform,
    };
  }

  /**
   * What a command would answer to a test event (the test panel, the `event` command): shown there, never
   * sent. Cooldowns neither hold it back nor start, so a test does not keep a viewer's answer waiting.
   */
  testAnswer(event: StreamEvent): TestChatAnswer | undefined {
    const found = this.#command(event);
    if (!found) return undefined;
    const { name, command } = found;
    return { command: command.trigger, platform: event.platform, text: this.#render(name, command, event) };
  }

  /** The enabled command a chat message asks for with its first word, if any. */
  #command(event: StreamEvent): { name: CommandName; command: ChatCommandSettings } | undefined {
    if (event.type !== 'chat') return undefined;
    const word = firstWord(event.data.comment);
    if (word === '') return undefined;
    const commands = this.#options.settings();
    const name = COMMAND_NAMES.find((n) => commands[n].enabled && commands[n].trigger.toLowerCase() === word);
    return name ? { name, command: commands[name] } : undefined;
  }

  #render(name: CommandName, command: ChatCommandSettings, event: StreamEvent): string {
    let compiled = this.#compiled.get(name);
    if (compiled?.text !== command.text) {
      compiled = compile(command.text);
      this.#compiled.set(name, compiled);
    }
    const { figures } = this.#options;
    const context: Record<string, unknown> = { ...templateContext(event) };
    if (compiled.points) context.points = figures.points(event.platform, event.user.uniqueId);
    if (compiled.top) context.top = topText(figures.top(TOP_COUNT));
    return compiled.render(context);
  }

  #remember(key: string, now: number): void {
    this.#lastAnswerTo.delete(key);
    this.#lastAnswerTo.set(key, now);
    while (this.#lastAnswerTo.size > MAX_VIEWER_COOLDOWNS) {
      const oldest = this.#lastAnswerTo.keys().next().value;
      if (oldest === undefined) break;
      this.#lastAnswerTo.delete(oldest);
    }
  }
}
