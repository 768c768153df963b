// The one error a command throws for a wrong command line: printed with a pointer to --help, exit status 2.
export class UsageError extends Error {}

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
