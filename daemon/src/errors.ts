// The readable message of anything thrown, for log lines and one-line CLI errors.
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
