// Every schema issue of a value by dotted field path, in plain words, so each invalid field can show its
// own message ("must not be empty", not "Invalid length: Expected >=1 but received 0").
import * as v from 'valibot';

/** Valibot's own wording, which a schema's custom message never starts with. */
const SCHEMA_WORDING = /^Invalid [\w ]+: Expected /;

/** An issue as the person filling the form should read it, beside the field it names. */
export function plainWords(issue: v.BaseIssue<unknown>): string {
  if (!SCHEMA_WORDING.test(issue.message)) return issue.message;
  const { input, requirement } = issue;
  const text = typeof input === 'string';
  switch (issue.type) {
    case 'min_length':
    case 'non_empty':
      if (requirement === 1 || requirement === undefined) return 'must not be empty';
      return `must be at least ${requirement} ${text ? 'characters' : 'items'}`;
    case 'max_length':
      return `must be at most ${requirement} ${text ? 'characters' : 'items'}`;
    case 'min_value':
      return `must be at least ${requirement}`;
    case 'max_value':
      return `must be at most ${requirement}`;
    case 'integer':
    case 'safe_integer':
      return 'must be a whole number';
    case 'number':
      return input === undefined ? 'is required' : 'must be a number';
    case 'url':
      return 'must be a full web address (http://… or https://…)';
    case 'string':
    case 'object':
      return input === undefined ? 'is required' : 'is not valid';
    case 'picklist':
    case 'literal':
    case 'variant':
    case 'union':
      return input === undefined || input === '' ? 'choose one' : 'is not one of the choices';
    default:
      return 'is not valid';
  }
}

export function fieldIssues(schema: v.GenericSchema, input: unknown): Map<string, string> {
  const issues = new Map<string, string>();
  const result = v.safeParse(schema, input);
  if (result.success) return issues;
  for (const issue of result.issues) {
    const path = v.getDotPath(issue) ?? '';
    if (!issues.has(path)) issues.set(path, plainWords(issue));
  }
  return issues;
}
