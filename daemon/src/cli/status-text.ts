// `overlay-daemon status` in words: the shared status lines (the dashboard's Status view shows the same), aligned.
import type { DaemonStatus } from '../../../shared/protocol/index.js';
import { runningLine, statusLines } from '../../../shared/status-text.js';

export function describeDaemonStatus(status: DaemonStatus, baseUrl: string, now: Date = new Date()): string {
  const lines = [runningLine(baseUrl)];
  for (const line of statusLines(status, now)) lines.push(`  ${`${line.label}:`.padEnd(14)} ${line.text}`);
  lines.push('  (--json for the full answer of GET /status)');
  return `${lines.join('\n')}\n`;
}
