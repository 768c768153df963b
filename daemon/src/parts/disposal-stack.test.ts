import { describe, expect, it } from 'vitest';
import { DisposalStack, startPart } from './disposal-stack.js';

describe('DisposalStack', () => {
  it('closes in the reverse of the order things started', async () => {
    const closed: string[] = [];
    const stack = new DisposalStack(() => {});
    stack.push(() => void closed.push('lock'));
    stack.push(async () => void closed.push('stores'));
    stack.push(() => void closed.push('http'));
    await stack.closeAll();
    expect(closed).toEqual(['http', 'stores', 'lock']);
  });

  it('logs a close that fails and still runs the others', async () => {
    const closed: string[] = [];
    const lines: string[] = [];
    const stack = new DisposalStack((line) => lines.push(line));
    stack.push(() => void closed.push('lock'));
    stack.push(() => {
      throw new Error('disk gone');
    }, 'the journal');
    stack.push(async () => {
      throw new Error('busy');
    }, 'the server');
    await stack.closeAll();
    expect(closed).toEqual(['lock']);
    expect(lines).toEqual([
      '[daemon] closing the server failed: busy',
      '[daemon] closing the journal failed: disk gone',
    ]);
  });

  it('closes once, however often it is asked', async () => {
    let count = 0;
    const stack = new DisposalStack(() => {});
    stack.push(() => void count++);
    await Promise.all([stack.closeAll(), stack.closeAll()]);
    await stack.closeAll();
    expect(count).toBe(1);
  });
});

describe('startPart', () => {
  it('closes what a part started before it failed, and passes the error on', async () => {
    const closed: string[] = [];
    await expect(
      startPart(
        () => {},
        (stack) => {
          stack.push(() => void closed.push('watcher'));
          stack.push(() => void closed.push('timer'));
          throw new Error('cannot read rules.json');
        },
      ),
    ).rejects.toThrow('cannot read rules.json');
    expect(closed).toEqual(['timer', 'watcher']);
  });

  it('offers what the part made with one close for all of it', async () => {
    const closed: string[] = [];
    const part = await startPart(
      () => {},
      (stack) => {
        stack.push(() => void closed.push('a'));
        stack.push(() => void closed.push('b'));
        return { value: 42 };
      },
    );
    expect(part.value).toBe(42);
    expect(closed).toEqual([]);
    await part.close();
    expect(closed).toEqual(['b', 'a']);
  });
});
