// One error type with a stable code; the app's onError turns it into the common error body (decisions §1).
import { ERROR_STATUS, type ErrorCode, errorBody } from '../../shared/protocol/index.js';

export class ApiError extends Error {
  readonly status: (typeof ERROR_STATUS)[ErrorCode];
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export function errorResponse(error: ApiError): Response {
  return Response.json(errorBody(error.code, error.message), {
    status: error.status,
    headers: error.headers,
  });
}

/** A handler for the other methods of a route: 405 with the `Allow` header (RFC 9110 §15.5.6). */
export function methodNotAllowed(allow: string) {
  return (): never => {
    throw new ApiError('method_not_allowed', `Use ${allow}`, { Allow: allow });
  };
}
