// The one error a command throws for a wrong command line: printed with a pointer to --help, exit status 2.
import { DaemonError } from '../errors.js';

export class UsageError extends DaemonError {
  constructor(message: string) {
    super('usage', message);
  }
}

/**
 * A whole-number option or variable (`label` as the person wrote it: `--port`, `$OVERLAY_PORT`) from
 * `min` to `max`; undefined when absent or empty.
 */
export function wholeNumberIn(
  label: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw new UsageError(`${label} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** The first line of a command's help, `Usage: overlay-daemon …`. */
export function usageLine(help: string): string {
  return help.split('\n').find((line) => line.startsWith('Usage:')) ?? help.split('\n')[0] ?? '';
}

/** Edits (insert, delete, substitute, swap two neighbours) from one word to another. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * What `parseArgs` threw, in a sentence naming the option (and the nearest known one when it looks like
 * a typo): `unknown option --prot (did you mean --port?)`. Undefined for anything else it may throw.
 */
export function describeParseError(err: unknown, known: readonly string[]): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1] ?? 'given';
    const bare = option.replace(/^-+/, '');
    const near = known
      .map((name) => ({ name, distance: editDistance(bare, name) }))
      .filter((n) => n.distance <= Math.min(2, Math.floor(bare.length / 2)))
      .sort((x, y) => x.distance - y.distance)[0];
    return `unknown option ${option}${near ? ` (did you mean --${near.name}?)` : ''}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /'(--?[^' ]+)/.exec(message)?.[1] ?? 'an option';
    return /does not take/.test(message) ? `${option} takes no value` : `${option} needs a value`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return message;
  return undefined;
}
