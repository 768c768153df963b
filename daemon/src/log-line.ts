// The daemon's log is one line per thing that happened. Platform strings (a channel name, a chat message,
// an error a server sent) land in it, so control characters are written out as escapes: a `\n` in a
// nickname cannot forge a second line, an ANSI escape cannot recolour or erase the terminal.

/** C0 and C1 controls, DEL, the line and paragraph separators, and the bidirectional overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One log line with every control character written as an escape (`\n`, `\x1b`, `\u2028`). */
export function safeLogLine(line: string): string {
  return line.replace(CONTROL, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** A log function that writes every line through safeLogLine. */
export function safeLog(log: (line: string) => void): (line: string) => void {
  return (line) => log(safeLogLine(String(line)));
}
