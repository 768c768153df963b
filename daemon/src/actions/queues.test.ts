import { describe, expect, it } from 'vitest';
import type { Executed } from './kinds/types.js';
import { MAX_WAITING, Queues } from './queues.js';

/** A promise and the function that settles it. */
function deferred<T = void>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const failures: unknown[] = [];
  const dropped: string[] = [];
  const queues = new Queues({ failed: (err) => failures.push(err) });
  const started: string[] = [];
  /** Enqueues a job that runs until its `finish` is called. */
  const job = (queue: string, name: string) => {
    const finish = deferred<Executed | undefined>();
    const done = queues.enqueue(
      queue,
      () => {
        started.push(name);
        return finish.promise;
      },
      (message) => dropped.push(message),
    );
    return { finish: finish.resolve, done };
  };
  return { queues, started, failures, dropped, job };
}

describe('named queues', () => {
  it('run one at a time, in arrival order; separate queues do not wait for each other', async () => {
    const { queues, started, job } = setup();
    const a = job('camera', 'a');
    job('camera', 'b');
    job('sound', 'c');
    expect(started).toEqual(['a', 'c']);
    expect(queues.list()).toEqual([
      { name: 'camera', running: true, waiting: 1 },
      { name: 'sound', running: true, waiting: 0 },
    ]);
    a.finish(undefined);
    await a.done;
    await tick();
    expect(started).toEqual(['a', 'c', 'b']);
  });

  it('hold until what an action left behind ended (an OBS change reverted)', async () => {
    const { started, job } = setup();
    const reverted = deferred();
    const a = job('obs', 'a');
    job('obs', 'b');
    a.finish({ ended: reverted.promise });
    await tick();
    expect(started).toEqual(['a']);
    reverted.resolve();
    await a.done;
    await tick();
    expect(started).toEqual(['a', 'b']);
  });

  it('skip moves on without waiting for the running one; clear drops the waiting ones', async () => {
    const { queues, started, job } = setup();
    const a = job('q', 'a');
    job('q', 'b');
    const c = job('q', 'c');
    expect(queues.skip('q')).toEqual({ name: 'q', running: true, waiting: 1 });
    await a.done; // let go at once
    expect(started).toEqual(['a', 'b']);
    expect(queues.clear('q')).toEqual({ name: 'q', running: true, waiting: 0 });
    await c.done;
    expect(started).toEqual(['a', 'b']);
    expect(queues.skip('nothing')).toBeUndefined();
    expect(queues.clear('nothing')).toBeUndefined();
  });

  it(`hold at most ${MAX_WAITING} waiting: the oldest waiting is dropped, and said so`, async () => {
    const { queues, started, dropped, job } = setup();
    job('flood', 'running');
    const first = job('flood', 'w0');
    for (let i = 1; i <= MAX_WAITING; i++) job('flood', `w${i}`);
    await first.done;
    expect(dropped).toEqual([`dropped: queue "flood" had more than ${MAX_WAITING} waiting`]);
    expect(queues.list()).toEqual([{ name: 'flood', running: true, waiting: MAX_WAITING }]);
    expect(started).toEqual(['running']);
  });

  it('a job that fails is reported and the queue goes on', async () => {
    const { queues, failures } = setup();
    const next: string[] = [];
    const failed = queues.enqueue(
      'q',
      () => Promise.reject(new Error('boom')),
      () => {},
    );
    const after = queues.enqueue(
      'q',
      async () => {
        next.push('ran');
        return undefined;
      },
      () => {},
    );
    await failed;
    await after;
    expect(failures).toEqual([new Error('boom')]);
    expect(next).toEqual(['ran']);
    expect(queues.list()).toEqual([]);
  });

  it('close lets every waiting action go and starts nothing more', async () => {
    const { queues, started, job } = setup();
    const a = job('q', 'a');
    const b = job('q', 'b');
    queues.close();
    await b.done;
    a.finish(undefined);
    await a.done;
    await tick();
    expect(started).toEqual(['a']);
  });
});
