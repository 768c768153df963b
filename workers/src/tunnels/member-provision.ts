// A member's tunnel provisions, one at a time in the member's Durable Object (membership/member-object.ts),
// so a failed provision's rollback never deletes a tunnel that a concurrent one handed out.
import type { ErrorCode, ProvisionResponse } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { ApiError } from '../errors.js';
import { memberObject } from '../membership/member-object.js';
import { tunnelService } from './service.js';

/** The lane of the member's object that provisions run in. */
export const PROVISIONS = 'tunnel-provision';

/** A provision's answer across the object's boundary: errors keep their code and headers. */
export type ProvisionOutcome =
  | { ok: true; created: boolean; response: ProvisionResponse }
  | { ok: false; code: ErrorCode; message: string; headers: Record<string, string> };

/** Provisions the member's tunnel; run inside the member's object, in the PROVISIONS lane. */
export async function provisionInMemberObject(env: GatekeeperEnv, userId: string): Promise<ProvisionOutcome> {
  try {
    return { ok: true, ...(await tunnelService(env).provision(userId)) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { ok: false, code: err.code, message: err.message, headers: err.headers };
  }
}

/** Provisions the member's tunnel after any provision of theirs in progress has ended. */
export async function serialisedProvision(
  env: GatekeeperEnv,
  userId: string,
): Promise<{ created: boolean; response: ProvisionResponse }> {
  const outcome = await memberObject(env, userId).provision(userId);
  if (!outcome.ok) throw new ApiError(outcome.code, outcome.message, outcome.headers);
  return { created: outcome.created, response: outcome.response };
}
