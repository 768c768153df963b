// Viewer sockets of the relay as the viewer page opens them (Origin of the Gatekeeper, `init`, the
// overlay's `init`), each bound to a loopback address of its own block, which Miniflare hands the Worker
// as `CF-Connecting-IP`. Every `stream-event` they get is timed against the moment it was published.
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';

/** Sockets per source address: the relay's own limit per address and overlay (docs/relay.md). */
export const VIEWERS_PER_ADDRESS = 5;

/** Source address of viewer `index` in block `block` (127.<block>.a.b), five viewers each. */
export function viewerAddress(block: number, index: number): string {
  const ip = Math.floor(index / VIEWERS_PER_ADDRESS);
  return `127.${block}.${Math.floor(ip / 250)}.${(ip % 250) + 1}`;
}

/** `event.data.seq` of a `stream-event`, parsed as the page parses every frame (JSON), or undefined. */
function streamEventSeq(text: string): number | undefined {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null) return undefined;
  const { type, event } = message as { type?: unknown; event?: { data?: { seq?: unknown } } };
  const seq = event?.data?.seq;
  return type === 'stream-event' && typeof seq === 'number' ? seq : undefined;
}

interface Track {
  sentAt: number;
  received: number;
  done: () => void;
}

export interface RelayTarget {
  /** The viewer socket's address on workerd's entry socket. */
  url: string;
  /** Sent with the upgrade: the Gatekeeper's own Origin, or the Host that routes to the baseline. */
  headers: Record<string, string>;
  overlayId: string;
}

export class RelayViewers {
  readonly sockets: WebSocket[] = [];
  readonly #events = new Map<number, Track>();
  latencies: number[] = [];
  recording = false;
  /** Viewers opened so far in this block (their addresses). */
  #opened = 0;

  constructor(
    readonly target: RelayTarget,
    readonly block: number,
  ) {}

  get count(): number {
    return this.sockets.length;
  }

  /**
   * Opens `count` viewers, `concurrency` at a time; each counts once its `init` came (with `resumeFrom`,
   * once its `resumed` came, after the replay). Resolves to the seconds it took.
   */
  async add(count: number, concurrency: number, resumeFrom?: number): Promise<number> {
    const started = performance.now();
    let left = count;
    const worker = async () => {
      while (left > 0) {
        left--;
        this.sockets.push(await this.#open(this.#opened++, resumeFrom));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    return (performance.now() - started) / 1000;
  }

  #open(index: number, resumeFrom: number | undefined): Promise<WebSocket> {
    const { url, headers, overlayId } = this.target;
    const ws = new WebSocket(url, {
      headers,
      localAddress: viewerAddress(this.block, index),
      perMessageDeflate: false,
    });
    const until = resumeFrom === undefined ? '"type":"init"' : '"type":"resumed"';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`viewer ${index} got no ${until} within 30 s`));
      }, 30_000);
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      ws.once('error', fail);
      ws.once('unexpected-response', (_req, res) =>
        fail(new Error(`viewer ${index} (${viewerAddress(this.block, index)}) answered ${res.statusCode}`)),
      );
      ws.once('open', () =>
        ws.send(
          JSON.stringify({ action: 'init', overlayId, ...(resumeFrom === undefined ? {} : { resumeFrom }) }),
        ),
      );
      const joining = (data: unknown) => {
        if (!String(data).includes(until)) return;
        clearTimeout(timer);
        ws.off('message', joining);
        ws.off('error', fail);
        ws.on('error', () => {});
        ws.on('message', (frame) => this.#onMessage(String(frame)));
        resolve(ws);
      };
      ws.on('message', joining);
    });
  }

  #onMessage(text: string): void {
    const at = performance.now();
    const seq = streamEventSeq(text);
    if (seq === undefined) return;
    const track = this.#events.get(seq);
    if (!track) return;
    if (this.recording) this.latencies.push(at - track.sentAt);
    track.received++;
    if (track.received >= this.sockets.length) {
      this.#events.delete(seq);
      track.done();
    }
  }

  /** Starts timing event `seq` now (call just before publishing it); resolves once every viewer has it. */
  expect(seq: number, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const got = this.#events.get(seq)?.received ?? 0;
        this.#events.delete(seq);
        reject(new Error(`relayed event ${seq} reached ${got} of ${this.sockets.length} viewers`));
      }, timeoutMs);
      this.#events.set(seq, {
        sentAt: performance.now(),
        received: 0,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async close(): Promise<void> {
    const closed = this.sockets.map(
      (ws) =>
        new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : ws.once('close', resolve))),
    );
    for (const ws of this.sockets) ws.terminate();
    await Promise.all(closed);
    this.sockets.length = 0;
  }
}
