// Bounded polling for effects that have no event to await: one poller for every suite under test/.

/** Polls `probe` until it returns a value (not `undefined`), and returns it; throws after `timeoutMs`. */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 8000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls until `check` returns true, bounded in time. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 3000,
  what = 'condition',
): Promise<void> {
  await until(async () => ((await check()) ? true : undefined), what, timeoutMs);
}
