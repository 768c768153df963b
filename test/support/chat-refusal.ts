// What a chat send that must fail failed with: the sender's ChatSendError, which the platform suites read.
import { expect } from 'vitest';
import { ChatSendError } from '../../daemon/src/chat/types.js';

/** The ChatSendError `promise` rejects with; the test fails when it resolves or rejects with anything else. */
export async function sendRefusal(promise: Promise<unknown>): Promise<ChatSendError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChatSendError);
  return err as ChatSendError;
}
