// Parsing untrusted data: a result, never an exception (STYLE: parse functions do not throw).
import * as v from 'valibot';

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string; field?: string };

/** Validates untrusted data against a schema. Unknown object keys are dropped (decisions §1). */
export function parseWith<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
): ParseResult<v.InferOutput<S>> {
  const result = v.safeParse(schema, input);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const field = v.getDotPath(issue) ?? undefined;
  return {
    ok: false,
    error: field ? `${field}: ${issue.message}` : issue.message,
    ...(field ? { field } : {}),
  };
}

/** The error of a text that is not JSON at all (no field is at fault). */
export const NOT_JSON = 'body is not valid JSON';

/** Parses JSON text, then validates it; non-JSON is a rejection like any other. */
export function parseJsonWith<S extends v.GenericSchema>(
  schema: S,
  text: string,
): ParseResult<v.InferOutput<S>> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, error: NOT_JSON };
  }
  return parseWith(schema, data);
}
