// Times as a streamer reads them, in the computer's own time zone: the CLI and the dashboard say them alike.

const two = (n: number) => String(n).padStart(2, '0');

/**
 * A moment in local time: `23:15` when it falls on today's date, `2026-12-09 23:15` on any other day.
 * One style for every time the CLI and the dashboard show; `now` is passed in so tests pick "today".
 */
export function localTime(at: string | number | Date, now: Date = new Date()): string {
  const when = new Date(at);
  if (Number.isNaN(when.getTime())) return String(at);
  const clock = `${two(when.getHours())}:${two(when.getMinutes())}`;
  const sameDay =
    when.getFullYear() === now.getFullYear() &&
    when.getMonth() === now.getMonth() &&
    when.getDate() === now.getDate();
  return sameDay
    ? clock
    : `${when.getFullYear()}-${two(when.getMonth() + 1)}-${two(when.getDate())} ${clock}`;
}

/** How long until `at`, in whole minutes (at least 1 while it lies ahead), and when: "10 minutes, until 23:15". */
export function forAndUntil(at: string | number | Date, now: Date = new Date()): string {
  const ms = new Date(at).getTime() - now.getTime();
  const minutes = Math.max(ms > 0 ? 1 : 0, Math.round(ms / 60_000));
  return `${minutes} minute${minutes === 1 ? '' : 's'}, until ${localTime(at, now)}`;
}
