// The daemon's errors: one list of stable codes that every error class carries, and the readable
// message of anything thrown. Code that decides what to do next reads `code`; people read the message.

/**
 * Every code a daemon error may carry. A new failure reuses a code when one fits; the codes shared with
 * the Gatekeeper's error bodies (`not_found`, `forbidden`, `rate_limited`, `upstream_error`) mean the same.
 */
export const DAEMON_ERROR_CODES = [
  // An outbound HTTP request (fetchJson) and what its answer's status says.
  /** No answer in time. */
  'timeout',
  /** No connection: the name does not resolve, the connection is refused or reset. */
  'unreachable',
  /** Cancelled by the caller: the daemon is stopping, a sign-in was cancelled. */
  'aborted',
  /** A 3xx: redirects are not followed. */
  'redirected',
  /** 401, or a credential refused (an API key, a sign-in). */
  'unauthorized',
  /** 403. */
  'forbidden',
  /** 404, or the thing asked for does not exist. */
  'not_found',
  /** 409. */
  'conflict',
  /** 429, or a platform asking to slow down. */
  'rate_limited',
  /** Any other 4xx: the request was refused. */
  'rejected',
  /** A 5xx: the other side failed. */
  'upstream_error',
  /** The answer is not JSON, not the documented shape, or too large. */
  'bad_response',
  // Platforms and sign-ins.
  /** No sign-in to use. */
  'signed_out',
  /** The sign-in lacks a scope a request needs. */
  'missing_scope',
  /** A code or sign-in ran out before it was used. */
  'expired',
  /** The streamer declined. */
  'denied',
  /** A platform's daily quota is used up. */
  'quota_exceeded',
  /** A live chat is over. */
  'chat_ended',
  /** A credential the daemon needs (a client id) is not configured. */
  'not_configured',
  /** The platform's live stream is not on. */
  'offline',
  // This machine.
  /** The command line is wrong. */
  'usage',
  /** An address or setting is not valid. */
  'invalid_config',
  /** A file the daemon keeps cannot be read or does not parse. */
  'unreadable',
  /** A write failed for want of space. */
  'disk_full',
  /** A write failed otherwise; nothing of it is in force. */
  'write_failed',
  /** The data directory cannot be used. */
  'data_dir',
  /** A body or archive is larger than allowed. */
  'payload_too_large',
  /** A path resolves outside the folder it must stay in. */
  'outside_folder',
  /** A backup archive cannot be made or restored. */
  'backup_failed',
  /** A tunnel command cannot go on (not signed in, not allowed). */
  'tunnel_failed',
  /** An executable the daemon runs is not on this machine. */
  'missing_executable',
  /** Signing in to the Gatekeeper failed. */
  'login_failed',
  /** Anything else. */
  'internal',
] as const;
export type DaemonErrorCode = (typeof DAEMON_ERROR_CODES)[number];

/** The base of the daemon's error classes: a message for people and a stable `code` for code. */
export class DaemonError extends Error {
  constructor(
    readonly code: DaemonErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The stable code of anything thrown: its own when it is a DaemonError, `internal` otherwise. */
export function errorCode(err: unknown): DaemonErrorCode {
  return err instanceof DaemonError ? err.code : 'internal';
}

// The readable message of anything thrown, for log lines and one-line CLI errors.
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
