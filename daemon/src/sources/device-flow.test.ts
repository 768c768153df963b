import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../test/support/fake-timers.js';
import { DaemonError } from '../errors.js';
import { type DeviceFlowErrorCode, pollDeviceToken, SIGN_IN_CANCELLED } from './device-flow.js';

class SignInError extends DaemonError {
  constructor(code: DeviceFlowErrorCode, message: string) {
    super(code, message);
    this.name = 'SignInError';
  }
}

type Refusal = { ok: false; status: number; error: string };
/** One answer of the token endpoint: the tokens, a refusal (`status error`), or no answer at all. */
type Answer = 'granted' | 'unreachable' | `${number} ${string}`;

/** Lets the poll's promises settle. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(answers: Answer[], device = { intervalS: 5, expiresInS: 1800 }) {
  const clock = new FakeTimers();
  /** When each token request was made, on the clock. */
  const polls: number[] = [];
  const abort = new AbortController();
  const done = pollDeviceToken({
    ...device,
    timers: clock,
    signal: abort.signal,
    requestToken: async () => {
      polls.push(clock.now());
      const answer = answers.shift() ?? '400 authorization_pending';
      if (answer === 'granted') return { ok: true as const, value: 'the tokens' };
      if (answer === 'unreachable') throw new SignInError('unreachable', 'could not reach the platform');
      const [status, error = ''] = answer.split(' ');
      return { ok: false as const, status: Number(status), error } satisfies Refusal;
    },
    errorOf: (reply) => reply.error,
    errorClass: SignInError,
    words: {
      expired: 'the code expired',
      denied: 'the sign-in was refused',
      refused: (reply) => `refused (HTTP ${reply.status}: ${reply.error})`,
    },
  });
  const outcome = done.then(
    (value) => ({ value }),
    (err: unknown) => ({ err }),
  );
  let ended = false;
  void outcome.then(() => {
    ended = true;
  });
  /** Moves the clock from one wait to the next until the poll ends; resolves with how it ended. */
  async function run() {
    await settle();
    while (!ended) {
      const next = clock.nextDelay();
      if (next === undefined) break;
      clock.advance(next);
      await settle();
    }
    return outcome;
  }
  return { clock, polls, abort, run };
}

describe('device code poll (RFC 8628)', () => {
  it('waits the interval asked, goes on while pending, 5 s longer after slow_down, and gives the tokens', async () => {
    const { polls, run } = setup([
      '400 authorization_pending',
      '400 slow_down',
      '400 authorization_pending',
      'granted',
    ]);
    expect(await run()).toEqual({ value: 'the tokens' });
    expect(polls).toEqual([5000, 10_000, 20_000, 30_000]);
  });

  it('ends when the code runs out on the clock, though the platform still says pending', async () => {
    const { polls, run } = setup([], { intervalS: 5, expiresInS: 12 });
    const { err } = (await run()) as { err: SignInError };
    expect(err).toBeInstanceOf(SignInError);
    expect(err).toMatchObject({ code: 'expired', message: 'the code expired' });
    expect(polls).toEqual([5000, 10_000]);
  });

  it('says which way the platform ended it: expired_token, access_denied, any other refusal', async () => {
    expect((await setup(['400 expired_token']).run()) as object).toEqual({
      err: expect.objectContaining({ code: 'expired', message: 'the code expired' }),
    });
    expect((await setup(['403 access_denied']).run()) as object).toEqual({
      err: expect.objectContaining({ code: 'denied', message: 'the sign-in was refused' }),
    });
    expect((await setup(['401 invalid_client']).run()) as object).toEqual({
      err: expect.objectContaining({ code: 'rejected', message: 'refused (HTTP 401: invalid_client)' }),
    });
  });

  it('lets two network failures or 5xx answers in a row pass, not a third', async () => {
    const passes = setup([
      '500 server_error',
      'unreachable',
      '400 authorization_pending',
      '503 server_error',
      'unreachable',
      'granted',
    ]);
    expect(await passes.run()).toEqual({ value: 'the tokens' });
    expect(passes.polls).toHaveLength(6);

    const down = setup(['500 server_error', '502 bad_gateway', '503 server_error']);
    expect((await down.run()) as object).toEqual({
      err: expect.objectContaining({ code: 'rejected', message: 'refused (HTTP 503: server_error)' }),
    });
    expect(down.polls).toHaveLength(3);

    const offline = setup(['unreachable', 'unreachable', 'unreachable', 'granted']);
    expect((await offline.run()) as object).toEqual({
      err: expect.objectContaining({ code: 'unreachable', message: 'could not reach the platform' }),
    });
    expect(offline.polls).toHaveLength(3);
  });

  it('stops at once when cancelled during a wait: no poll is sent, no timer is left', async () => {
    const { clock, polls, abort, run } = setup(['granted']);
    await settle();
    expect(clock.size).toBe(1);
    abort.abort();
    expect((await run()) as object).toEqual({
      err: expect.objectContaining({ code: 'aborted', message: SIGN_IN_CANCELLED }),
    });
    expect(clock.size).toBe(0);
    expect(polls).toEqual([]);
  });
});
