// Errors (decisions §1): the codes, their HTTP statuses and the common error body.
import * as v from 'valibot';

export const ERROR_STATUS = {
  bad_request: 400,
  invalid_state: 400,
  invalid_code: 400,
  unauthenticated: 401,
  invalid_token: 401,
  forbidden: 403,
  premium_required: 403,
  membership_inactive: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
  /** Something the daemon needs is missing on this machine (e.g. a speech engine). */
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export const ErrorBody = v.object({
  error: v.object({
    code: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]*$/)),
    message: v.string(),
  }),
});
export type ErrorBody = v.InferOutput<typeof ErrorBody>;

export const errorBody = (code: ErrorCode, message: string): ErrorBody => ({
  error: { code, message },
});
