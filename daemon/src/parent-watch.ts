// Ends with the process that started this one: `npx overlay-daemon` and `npm run …` run under `npm` and
// `sh -c`, and a SIGTERM to npm ends both without passing it on, which would leave this process (and
// what it started) running with no one to stop it. When the parent goes away the process is reparented,
// so a changed `process.ppid` says so. (Started by init or a service manager, the parent does not change.)

/** Calls `gone` once when the parent process has gone; returns a function that stops watching. */
export function whenParentGone(gone: () => void, intervalMs = 500): () => void {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    gone();
  }, intervalMs);
  watch.unref();
  return () => clearInterval(watch);
}
