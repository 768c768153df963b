// What the platforms' boxes share: a button's action that is busy while it runs and says why it failed,
// and how often a sign-in or link under way is asked about.

/** How often a sign-in under way is asked about: the person is typing a code elsewhere. */
export const SIGN_IN_POLL_MS = 2000;

/**
 * A button's action: busy while it runs, the last problem cleared first and set, in words, if it fails.
 */
export function busyAction(
  setBusy: (busy: boolean) => void,
  setProblem: (problem: string | undefined) => void,
  describe: (err: unknown) => string,
) {
  return async (run: () => Promise<void>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await run();
    } catch (err) {
      setProblem(describe(err));
    } finally {
      setBusy(false);
    }
  };
}
