// The relay benchmark's baseline in the same workerd: one bare Durable Object holding every viewer's
// hibernating socket, reached through a bare Worker, that writes each publisher frame to all of them.
// No admission, no shards, no storage, no batching: what workerd itself costs per socket and per frame.
// Plain JavaScript, loaded by Miniflare as it is.
import { DurableObject } from 'cloudflare:workers';

const INIT = JSON.stringify({
  type: 'init',
  overlay: { name: 'bench', width: 1920, height: 1080 },
  widgets: [],
});

export class BareRoom extends DurableObject {
  async fetch(request) {
    const { 0: client, 1: server } = new WebSocketPair();
    const publisher = new URL(request.url).pathname === '/publish';
    this.ctx.acceptWebSocket(server, [publisher ? 'publisher' : 'viewer']);
    return new Response(null, { status: 101, webSocket: client });
  }

  async webSocketMessage(ws, message) {
    if (this.ctx.getTags(ws).includes('publisher')) {
      for (const viewer of this.ctx.getWebSockets('viewer')) {
        try {
          viewer.send(message);
        } catch {
          // closing
        }
      }
      return;
    }
    // A viewer's `init`: the overlay's init, once.
    ws.send(INIT);
  }

  async webSocketClose(ws, code) {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, 'bye');
    } catch {
      // closed already
    }
  }
}

export default {
  fetch(request, env) {
    return env.BARE_ROOM.get(env.BARE_ROOM.idFromName('room')).fetch(request);
  },
};
