// `overlay-daemon event <type> …`: sends a test stream event to the running daemon and says which rules fired.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { describeEvent } from '../../../shared/describe-event.js';
import {
  parseWith,
  STREAM_EVENT_TYPES,
  StreamEvent,
  type StreamEventType,
  TestChatAnswer,
} from '../../../shared/protocol/index.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../daemon.js';
import { errorMessage } from '../errors.js';
import { dataDirPaths } from '../store/data-dir.js';
import { locateDaemon } from './locate.js';
import { describeParseError, UsageError, usageLine } from './usage-error.js';

export const EVENT_HELP = `Usage: overlay-daemon event <type> [options]

Sends a stream event to the overlay server running on this machine, as if it came from the
live stream: it reaches every overlay and runs the rules. Prints the rules it fired.
<type> is one of: ${STREAM_EVENT_TYPES.join(', ')}.

Options:
  --user ID          the sender's uniqueId (default "tester")
  --nickname NAME    the sender's display name (default: the --user value, or "Tester")
  --gift NAME        gift: the gift's name (default "Rose")
  --count N          gift: how many were sent (default 1)
  --diamonds N       gift: diamonds one gift is worth (default 1, as in the dashboard's test panel)
  --likes N          like: new likes (default 1)
  --comment TEXT     chat: the message (default "Hello!")
  --viewers N        viewer: viewers watching (default 100)
  --port N           the server's port (default: where the daemon of --data-dir listens, else $OVERLAY_PORT or ${DEFAULT_PORT})
  --host ADDR        the server's address (default ${DEFAULT_HOST}; the control API answers loopback only)
  --data-dir DIR     the server's data directory, for its admin.key (default ~/.overlay-daemon, or $OVERLAY_DATA_DIR)
  -h, --help         show this help

Exit status: 0 sent, 1 the server could not be reached or refused it, 2 bad usage.
Example: overlay-daemon event gift --user alice --nickname Alice --gift Rose --count 5
`;

interface EventCliIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Which options fill which event field, so a mistake names the option the user typed. */
const FIELD_OPTIONS: Record<string, string> = {
  'user.uniqueId': '--user',
  'user.nickname': '--nickname',
  'data.giftName': '--gift',
  'data.repeatCount': '--count',
  'data.diamondCount': '--diamonds',
  'data.likeCount': '--likes',
  'data.comment': '--comment',
  'data.viewerCount': '--viewers',
};

/** Options that only make sense for one event type. */
const TYPE_OPTIONS: Record<string, StreamEventType> = {
  gift: 'gift',
  count: 'gift',
  diamonds: 'gift',
  likes: 'like',
  comment: 'chat',
  viewers: 'viewer',
};

/** Options that take a number: `--count -5` is read as the value -5 (and refused in words), not as an option. */
const NUMBER_OPTIONS = new Set(['--count', '--diamonds', '--likes', '--viewers', '--port']);

function joinNegativeNumbers(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (NUMBER_OPTIONS.has(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

function parse(argv: string[]) {
  return parseArgs({
    args: joinNegativeNumbers(argv),
    allowPositionals: true,
    strict: true,
    options: {
      user: { type: 'string' },
      nickname: { type: 'string' },
      gift: { type: 'string' },
      count: { type: 'string' },
      diamonds: { type: 'string' },
      likes: { type: 'string' },
      comment: { type: 'string' },
      viewers: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

type Values = ReturnType<typeof parse>['values'];

/** What each number option means and its smallest value, for messages a person understands. */
const NUMBER_LIMITS: Record<string, { min: number; what: string }> = {
  count: { min: 1, what: 'how many gifts were sent' },
  diamonds: { min: 0, what: 'diamonds one gift is worth' },
  likes: { min: 1, what: 'how many new likes' },
  viewers: { min: 0, what: 'viewers watching' },
};

function wholeNumber(option: string, value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${option} must be a whole number, got "${value}"`);
  const n = Number(value);
  const limit = NUMBER_LIMITS[option];
  if (limit && n < limit.min)
    throw new UsageError(`--${option} (${limit.what}) must be at least ${limit.min}, got ${value}`);
  return n;
}

function isEventType(value: string): value is StreamEventType {
  return (STREAM_EVENT_TYPES as readonly string[]).includes(value);
}

/** The event as the options describe it, not yet validated. */
function buildEvent(type: StreamEventType, values: Values): unknown {
  for (const [option, forType] of Object.entries(TYPE_OPTIONS)) {
    if (values[option as keyof Values] !== undefined && forType !== type)
      throw new UsageError(`--${option} applies to ${forType} events, not ${type}`);
  }
  const uniqueId = values.user ?? 'tester';
  const user = { uniqueId, nickname: values.nickname ?? values.user ?? 'Tester' };
  switch (type) {
    case 'gift': {
      // Like the dashboard's test panel: a gift is worth something, so diamond goals and top gifters count it.
      const diamondCount = wholeNumber('diamonds', values.diamonds, 1);
      return {
        type,
        user,
        data: {
          giftName: values.gift ?? 'Rose',
          repeatCount: wholeNumber('count', values.count, 1),
          ...(diamondCount !== undefined ? { diamondCount } : {}),
        },
      };
    }
    case 'like':
      return { type, user, data: { likeCount: wholeNumber('likes', values.likes, 1) } };
    case 'chat':
      return { type, user, data: { comment: values.comment ?? 'Hello!' } };
    case 'viewer':
      return { type, user, data: { viewerCount: wholeNumber('viewers', values.viewers, 100) } };
    default:
      return { type, user, data: {} };
  }
}

const AcceptedBody = v.object({
  firedRules: v.optional(v.array(v.string()), []),
  chatAnswers: v.optional(v.array(TestChatAnswer), []),
});
/** What `GET /api/rules` gives that the output needs: each rule's id and name. */
const RuleNames = v.array(v.object({ id: v.string(), name: v.optional(v.string()) }));

/**
 * The fired rules by name (a rule without one by its id), as the dashboard names them; their ids when
 * the rules cannot be read.
 */
async function ruleNames(baseUrl: string, key: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return ids;
  try {
    const res = await fetch(`${baseUrl}/api/rules`, {
      headers: { Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(5000),
    });
    const rules = parseWith(RuleNames, await res.json());
    if (!res.ok || !rules.ok) return ids;
    const names = new Map(rules.value.map((r) => [r.id, r.name?.trim() || r.id]));
    return ids.map((id) => names.get(id) ?? id);
  } catch {
    return ids;
  }
}
const ErrorBody = v.object({ error: v.object({ code: v.string(), message: v.string() }) });

async function send(event: StreamEvent, values: Values, io: EventCliIo): Promise<number> {
  // The daemon of this data directory (daemon.json), unless --port or --host say where.
  const { baseUrl, dataDir } = await locateDaemon(values);
  const keyFile = dataDirPaths(dataDir).adminKeyFile;
  let key: string;
  try {
    key = (await readFile(keyFile, 'utf8')).trim();
  } catch {
    io.err(
      `overlay-daemon event: cannot read ${keyFile}; start the server once with this data directory (or pass --data-dir)\n`,
    );
    return 1;
  }
  const url = `${baseUrl}/api/events`;
  let res: Response;
  try {
    // A test event: marked in the journal, counted in no total (History can remove it).
    res = await fetch(`${url}?test=true`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(event),
      signal: AbortSignal.timeout(5000),
    });
  } catch {
    io.err(`overlay-daemon event: no overlay server is answering at ${url}\n`);
    return 1;
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (res.status !== 202) {
    const error = parseWith(ErrorBody, body);
    const why = error.ok ? `${error.value.error.code}: ${error.value.error.message}` : text.slice(0, 200);
    const hint = res.status === 401 ? ' (is --data-dir the one the server uses?)' : '';
    io.err(`overlay-daemon event: the server answered ${res.status} ${why}${hint}\n`);
    return 1;
  }
  const accepted = parseWith(AcceptedBody, body);
  const fired = await ruleNames(baseUrl, key, accepted.ok ? accepted.value.firedRules : []);
  io.out(`sent ${event.type} event: ${describeEvent(event)}\n`);
  io.out(
    fired.length === 0
      ? 'no rule fired\n'
      : `fired ${fired.length} rule${fired.length === 1 ? '' : 's'}: ${fired.join(', ')}\n`,
  );
  // A test posts nothing to the chat: a chat command's answer is printed here instead.
  for (const answer of accepted.ok ? accepted.value.chatAnswers : [])
    io.out(`chat command ${answer.command} answers (printed here only, not sent): "${answer.text}"\n`);
  return 0;
}

export async function runEventCommand(argv: string[], io: EventCliIo): Promise<number> {
  try {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (err) {
      // A typo (`--cuont`) is named in words, with the usage line.
      const known = [
        'user',
        'nickname',
        'gift',
        'count',
        'diamonds',
        'likes',
        'comment',
        'viewers',
        'port',
        'host',
        'data-dir',
        'help',
      ];
      throw new UsageError(
        `${describeParseError(err, known) ?? errorMessage(err)}\n${usageLine(EVENT_HELP)}`,
      );
    }
    const { values, positionals } = parsed;
    if (values.help) {
      io.out(EVENT_HELP);
      return 0;
    }
    const [type, extra] = positionals;
    if (type === undefined) throw new UsageError(`which event? one of ${STREAM_EVENT_TYPES.join(', ')}`);
    if (!isEventType(type))
      throw new UsageError(`unknown event type "${type}"; one of ${STREAM_EVENT_TYPES.join(', ')}`);
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    // The schema the server applies (decisions §1), checked here first so a mistake names its option.
    const checked = parseWith(StreamEvent, buildEvent(type, values));
    if (!checked.ok) {
      const option = checked.field ? FIELD_OPTIONS[checked.field] : undefined;
      throw new UsageError(option ? `${option} (${checked.error})` : checked.error);
    }
    return await send(checked.value, values, io);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`overlay-daemon event: ${err.message}\nRun "overlay-daemon event --help" for usage.\n`);
    return 2;
  }
}
