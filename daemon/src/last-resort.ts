// The last resort against an error that no chain of the daemon caught (a rule's actions, a source's
// handler, a timer): Node would end the process on it, taking every overlay off the stream. Instead it
// is logged in one line, with where it came from, and the daemon keeps serving.
import { errorMessage } from './errors.js';

/** Where an error was thrown: the first frame of its stack, when it has one. */
function thrownAt(err: unknown): string | undefined {
  if (!(err instanceof Error) || !err.stack) return undefined;
  return err.stack
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.startsWith('at '));
}

/**
 * Listens for uncaught exceptions and unhandled rejections while the daemon runs; the returned function
 * stops listening (the daemon's close).
 */
export function installLastResort(log: (line: string) => void): () => void {
  const handler = (err: unknown) => {
    const at = thrownAt(err);
    log(`[daemon] an error nothing handled, the daemon goes on: ${errorMessage(err)}${at ? ` (${at})` : ''}`);
  };
  process.on('uncaughtException', handler);
  process.on('unhandledRejection', handler);
  return () => {
    process.off('uncaughtException', handler);
    process.off('unhandledRejection', handler);
  };
}
