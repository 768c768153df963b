// Viewer sockets of the overlay relay, as a viewer page holds them: Origin the Gatekeeper's own, `init` first,
// then only listening. Each keeps what a test checks (the messages with their seq, the close code), not the bytes.
import { WebSocket } from 'ws';

export interface ViewerMessage {
  type: string;
  seq?: number;
  replayed?: true;
  /** The chat comment or the gift sender of a stream event, to tell the test's events apart. */
  mark?: string;
  gap?: boolean;
  from?: number;
  to?: number;
  count?: number;
}

export interface Viewer {
  ws: WebSocket;
  /** Everything received, in order (`init` included). */
  messages: ViewerMessage[];
  /** The close code once closed. */
  closeCode?: number;
}

interface ViewerOptions {
  /** `ws://127.0.0.1:<port>/v/<subdomain>/<overlayId>/ws` */
  url: string;
  origin: string;
  overlayId: string;
  /**
   * The viewer's address: its socket's source (127.x.y.z) and its `CF-Connecting-IP`. Under `wrangler dev` a
   * client's own CF-Connecting-IP reaches the Worker as sent, and without one the socket's source address is used:
   * both say the same here, so the per-address limit counts the same whichever the Worker sees.
   */
  ip: string;
  resumeFrom?: number;
  timeoutMs?: number;
}

function summarise(text: string): ViewerMessage {
  const msg = JSON.parse(text) as Record<string, unknown> & {
    event?: { user?: { nickname?: string }; data?: { comment?: string } };
  };
  const out: ViewerMessage = { type: String(msg.type) };
  if (typeof msg.seq === 'number') out.seq = msg.seq;
  if (msg.replayed === true) out.replayed = true;
  if (msg.type === 'stream-event') out.mark = msg.event?.data?.comment ?? msg.event?.user?.nickname;
  if (msg.type === 'resumed') {
    Object.assign(out, { gap: msg.gap, from: msg.from, to: msg.to, count: msg.replayed });
  }
  return out;
}

/** Opens one viewer socket and resolves once its `init` arrived; rejects with the HTTP status or close code otherwise. */
export function openViewer(options: ViewerOptions): Promise<Viewer> {
  const ws = new WebSocket(options.url, {
    localAddress: options.ip,
    headers: { Origin: options.origin, 'CF-Connecting-IP': options.ip },
    perMessageDeflate: false,
  });
  const viewer: Viewer = { ws, messages: [] };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`viewer ${options.ip}: no init within ${options.timeoutMs ?? 15_000} ms`));
    }, options.timeoutMs ?? 15_000);
    ws.on('open', () => {
      const init = { action: 'init', overlayId: options.overlayId, resumeFrom: options.resumeFrom };
      ws.send(JSON.stringify(init));
    });
    ws.on('message', (data) => {
      const msg = summarise(String(data));
      viewer.messages.push(msg);
      if (msg.type === 'init') {
        clearTimeout(timer);
        resolve(viewer);
      }
    });
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`viewer ${options.ip}: HTTP ${res.statusCode}`));
      ws.terminate();
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`viewer ${options.ip}: ${err.message}`));
    });
    ws.on('close', (code) => {
      viewer.closeCode = code;
      clearTimeout(timer);
      reject(new Error(`viewer ${options.ip}: closed ${code} before init`));
    });
  });
}

/** The address of viewer `i` when `perIp` viewers share one: 127.1.0.1, 127.1.0.2, … (never 127.0.0.1). */
export function viewerIp(i: number, perIp: number): string {
  const k = Math.floor(i / perIp) + 1;
  return `127.1.${Math.floor(k / 256)}.${k % 256}`;
}

/** Opens `count` viewers, `concurrency` at a time; every one must get its `init`. */
export async function openViewers(
  count: number,
  concurrency: number,
  options: (i: number) => ViewerOptions,
): Promise<Viewer[]> {
  const viewers: Viewer[] = [];
  for (let start = 0; start < count; start += concurrency) {
    const batch = [];
    for (let i = start; i < Math.min(count, start + concurrency); i++) batch.push(openViewer(options(i)));
    const settled = await Promise.allSettled(batch);
    for (const s of settled) if (s.status === 'fulfilled') viewers.push(s.value);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      for (const v of viewers) v.ws.terminate();
      throw new Error(`${viewers.length} of ${count} viewers opened; then ${String(failed.reason)}`);
    }
  }
  return viewers;
}
