// A local stand-in for OBS Studio's obs-websocket v5 server, speaking its real protocol: Hello (with the
// authentication challenge when a password is set), Identify, Identified, Request → RequestResponse with
// `requestStatus`, close code 4009 for a wrong password. It keeps the little state the daemon's
// requests touch (the program scene, scene items, input mutes, filters) and records every request.
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

interface ObsRequest {
  requestType: string;
  requestData: Record<string, unknown>;
}

export interface FakeObs {
  url: string;
  requests: ObsRequest[];
  /** Told of each request as it arrives (the benchmark times event → OBS with it). */
  onRequest?: (request: ObsRequest) => void;
  scene: string;
  /** `<scene>/<source>` → enabled. */
  items: Map<string, boolean>;
  mutes: Map<string, boolean>;
  filters: Map<string, boolean>;
  /** Clients identified now. */
  readonly clients: number;
  /** Connections opened since the start (a reconnect opens one more). */
  readonly connections: number;
  /** OBS hung: requests are recorded but never answered (identifying still works). */
  silent: boolean;
  /** Bytes of padding added to every answer (a reply far larger than any real one). */
  replyPadding: number;
  /** Drops every client (OBS quitting), keeps listening. */
  dropClients(): void;
  close(): Promise<void>;
}

const sha256base64 = (text: string) => createHash('sha256').update(text).digest('base64');

export async function startFakeObs(options: { password?: string; port?: number } = {}): Promise<FakeObs> {
  // OBS answers in JSON for the `obswebsocket.json` subprotocol (msgpack is the other one).
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: options.port ?? 0,
    handleProtocols: (protocols) => (protocols.has('obswebsocket.json') ? 'obswebsocket.json' : false),
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const identified = new Set<WebSocket>();
  let connections = 0;
  const fake: FakeObs = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    requests: [],
    scene: 'Main',
    items: new Map([['Main/Gift camera', false]]),
    mutes: new Map([['Mic', false]]),
    filters: new Map([['Camera/Blur', false]]),
    get clients() {
      return identified.size;
    },
    get connections() {
      return connections;
    },
    silent: false,
    replyPadding: 0,
    dropClients() {
      for (const ws of wss.clients) ws.terminate();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve());
      }),
  };
  const itemIds = new Map([['Main/Gift camera', 7]]);

  wss.on('connection', (ws) => {
    connections++;
    const challenge = randomBytes(16).toString('base64');
    const salt = randomBytes(16).toString('base64');
    const send = (op: number, d: unknown) => ws.send(JSON.stringify({ op, d }));
    send(0, {
      obsWebSocketVersion: '5.5.0',
      rpcVersion: 1,
      ...(options.password ? { authentication: { challenge, salt } } : {}),
    });
    ws.on('close', () => identified.delete(ws));
    ws.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { op: number; d: Record<string, unknown> };
      if (message.op === 1) {
        if (options.password) {
          const expected = sha256base64(sha256base64(options.password + salt) + challenge);
          if (message.d.authentication !== expected) return ws.close(4009, 'Authentication failed.');
        }
        identified.add(ws);
        return send(2, { negotiatedRpcVersion: 1 });
      }
      if (message.op !== 6 || !identified.has(ws)) return;
      const requestType = String(message.d.requestType);
      const requestData = (message.d.requestData ?? {}) as Record<string, unknown>;
      fake.requests.push({ requestType, requestData });
      fake.onRequest?.({ requestType, requestData });
      if (fake.silent) return;
      const respond = (responseData?: unknown, code = 100, comment?: string) =>
        send(7, {
          requestType,
          requestId: message.d.requestId,
          requestStatus: { result: code === 100, code, ...(comment ? { comment } : {}) },
          ...(responseData ? { responseData } : {}),
          ...(fake.replyPadding > 0 ? { padding: 'x'.repeat(fake.replyPadding) } : {}),
        });
      const key = (a: unknown, b: unknown) => `${String(a)}/${String(b)}`;
      switch (requestType) {
        case 'GetVersion':
          // The fields of obs-websocket 5's GetVersion that the daemon reads.
          return respond({
            obsVersion: '30.2.3',
            obsWebSocketVersion: '5.5.2',
            rpcVersion: 1,
            availableRequests: [],
            supportedImageFormats: [],
            platform: 'ubuntu',
            platformDescription: 'Ubuntu 24.04',
          });
        case 'GetCurrentProgramScene':
          return respond({ currentProgramSceneName: fake.scene, sceneName: fake.scene });
        case 'SetCurrentProgramScene':
          fake.scene = String(requestData.sceneName);
          return respond();
        case 'GetSceneItemId': {
          const id = itemIds.get(key(requestData.sceneName, requestData.sourceName));
          return id === undefined
            ? respond(undefined, 600, 'No scene items were found')
            : respond({ sceneItemId: id });
        }
        case 'GetSceneItemEnabled':
        case 'SetSceneItemEnabled': {
          const entry = [...itemIds].find(
            ([k, id]) => id === requestData.sceneItemId && k.startsWith(`${requestData.sceneName}/`),
          );
          if (!entry) return respond(undefined, 600, 'No scene items were found');
          if (requestType === 'SetSceneItemEnabled')
            fake.items.set(entry[0], requestData.sceneItemEnabled === true);
          return respond(
            requestType === 'GetSceneItemEnabled'
              ? { sceneItemEnabled: fake.items.get(entry[0]) }
              : undefined,
          );
        }
        case 'GetInputMute':
          return respond({ inputMuted: fake.mutes.get(String(requestData.inputName)) ?? false });
        case 'SetInputMute':
          fake.mutes.set(String(requestData.inputName), requestData.inputMuted === true);
          return respond();
        case 'ToggleInputMute': {
          const muted = !(fake.mutes.get(String(requestData.inputName)) ?? false);
          fake.mutes.set(String(requestData.inputName), muted);
          return respond({ inputMuted: muted });
        }
        case 'GetSourceFilter':
          return respond({
            filterEnabled: fake.filters.get(key(requestData.sourceName, requestData.filterName)) ?? false,
          });
        case 'SetSourceFilterEnabled':
          fake.filters.set(
            key(requestData.sourceName, requestData.filterName),
            requestData.filterEnabled === true,
          );
          return respond();
        case 'TriggerHotkeyByName':
          return respond();
        default:
          return respond(undefined, 204, 'Unknown request type');
      }
    });
  });
  return fake;
}
