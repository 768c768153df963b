import { describe, expect, it } from 'vitest';
import { type HeldSocket, QUIET_MS, WriteTurns } from './write-turns.js';

/** A socket that records what reached "the wire": writes while uncorked go at once, corked ones on uncork. */
function fakeSocket(name: string, wire: string[]) {
  let corks = 0;
  const pending: string[] = [];
  const held: HeldSocket & { write(text: string): void } = {
    corked: false,
    socket: {
      cork: () => {
        corks++;
      },
      uncork: () => {
        corks--;
        if (corks === 0) wire.push(...pending.splice(0).map((text) => `${name}:${text}`));
      },
    },
    write(text) {
      if (corks > 0) pending.push(text);
      else wire.push(`${name}:${text}`);
    },
  };
  return held;
}

/** Ends the current turn of the event loop (the check phase runs what setImmediate queued). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What the hub does for one message: one decision, then each socket held (if gathering) and written. */
function send(turns: WriteTurns, sockets: ReturnType<typeof fakeSocket>[], text: string): void {
  const gather = turns.gather();
  for (const socket of sockets) {
    if (gather) turns.hold(socket);
    socket.write(text);
  }
}

describe('write turns', () => {
  it('writes the first message of a quiet daemon at once, to every socket', () => {
    const wire: string[] = [];
    const sockets = [fakeSocket('a', wire), fakeSocket('b', wire)];
    send(new WriteTurns(), sockets, 'gift');
    expect(wire).toEqual(['a:gift', 'b:gift']);
  });

  it('gathers what follows in the same turn into one write per socket, in order, at the end of the turn', async () => {
    const wire: string[] = [];
    const turns = new WriteTurns();
    const sockets = [fakeSocket('a', wire), fakeSocket('b', wire)];
    send(turns, sockets, '1');
    send(turns, sockets, '2');
    send(turns, sockets, '3');
    expect(wire).toEqual(['a:1', 'b:1']);
    await nextTurn();
    expect(wire).toEqual(['a:1', 'b:1', 'a:2', 'a:3', 'b:2', 'b:3']);
    for (const socket of sockets) expect(socket.corked).toBe(false);
  });

  it('keeps gathering through a burst while the daemon does not wait between turns, however long they take, and writes at once after a pause', async () => {
    const wire: string[] = [];
    // How long the event loop has waited for work: only a pause moves it, never work.
    let idle = 1000;
    const turns = new WriteTurns(() => idle);
    const socket = fakeSocket('a', wire);
    // Two messages in one turn: the second waits for the turn's end, and a burst is under way.
    send(turns, [socket], '1');
    send(turns, [socket], '2');
    await nextTurn();
    expect(wire).toEqual(['a:1', 'a:2']);
    // The next turn comes after a short wait: still the burst, so this one waits for its turn's end.
    idle += QUIET_MS / 2;
    send(turns, [socket], '3');
    expect(wire).toEqual(['a:1', 'a:2']);
    await nextTurn();
    expect(wire).toEqual(['a:1', 'a:2', 'a:3']);
    // A turn after long work (a hundred rules) but no wait: still the burst.
    send(turns, [socket], '4');
    expect(wire).toEqual(['a:1', 'a:2', 'a:3']);
    await nextTurn();
    expect(wire).toEqual(['a:1', 'a:2', 'a:3', 'a:4']);
    // The loop waited for work: the burst is over, straight again.
    idle += QUIET_MS;
    send(turns, [socket], '5');
    expect(wire).toEqual(['a:1', 'a:2', 'a:3', 'a:4', 'a:5']);
  });

  it('writes a lone message at once when the turn before sent only one, however short the pause between them', async () => {
    const wire: string[] = [];
    let idle = 1000;
    const turns = new WriteTurns(() => idle);
    const socket = fakeSocket('a', wire);
    // A paced series: each event posted as soon as the last one arrived, the loop waiting a fraction of
    // QUIET_MS in between, or not at all.
    for (const [i, pause] of [0, QUIET_MS / 4, QUIET_MS / 10, 0].entries()) {
      idle += pause;
      send(turns, [socket], String(i));
      expect(wire.at(-1)).toBe(`a:${i}`);
      await nextTurn();
    }
    expect(wire).toEqual(['a:0', 'a:1', 'a:2', 'a:3']);
  });

  it('corks a socket once per turn however many messages it gets', async () => {
    const wire: string[] = [];
    const turns = new WriteTurns();
    let corks = 0;
    const socket = fakeSocket('a', wire);
    const cork = socket.socket.cork;
    (socket.socket as { cork(): void }).cork = () => {
      corks++;
      cork();
    };
    send(turns, [socket], '1');
    for (let i = 2; i <= 10; i++) send(turns, [socket], String(i));
    expect(corks).toBe(1);
    await nextTurn();
    expect(wire).toHaveLength(10);
    expect(wire.at(-1)).toBe('a:10');
  });
});
