// Every schema issue of a value by dotted field path, so each invalid field can show its own message.
import * as v from 'valibot';

export function fieldIssues(schema: v.GenericSchema, input: unknown): Map<string, string> {
  const issues = new Map<string, string>();
  const result = v.safeParse(schema, input);
  if (result.success) return issues;
  for (const issue of result.issues) {
    const path = v.getDotPath(issue) ?? '';
    if (!issues.has(path)) issues.set(path, issue.message);
  }
  return issues;
}
