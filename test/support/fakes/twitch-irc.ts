// A local stand-in for Twitch chat, speaking its real protocol: IRC over WebSocket (one IRC line per
// frame, CRLF-terminated), the IRCv3 capability handshake (twitch.tv/tags, commands, membership),
// anonymous `justinfan` logins, JOIN answered with NAMES and the full ROOMSTATE, PING/PONG, and the
// messages a channel sends: PRIVMSG with tags (including `bits`) and USERNOTICE for subs, gifted subs
// and raids. Tag values are escaped as IRCv3 says (`\s`, `\:`, `\\`, `\r`, `\n`).
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

const CAPS = 'twitch.tv/tags twitch.tv/commands twitch.tv/membership';

export interface ChatUserTags {
  login: string;
  displayName?: string;
  userId?: string;
}

export interface FakeTwitchIrc {
  /** `ws://127.0.0.1:PORT`: what OVERLAY_TWITCH_IRC_URL is set to. */
  url: string;
  /** Channels (without `#`) some client has joined, in order. */
  readonly joined: string[];
  /** Clients connected now. */
  readonly clients: number;
  /** Every line received from clients. */
  readonly received: string[];
  /** Resolves once some client has joined `#channel`. */
  waitForJoin(channel: string, timeoutMs?: number): Promise<void>;
  /** A chat message; returns its `id` tag. */
  privmsg(channel: string, user: ChatUserTags, text: string, extra?: Record<string, string>): string;
  /** A USERNOTICE (`msg-id` sub, resub, subgift, submysterygift, raid…); returns its `id` tag. */
  usernotice(
    channel: string,
    msgId: string,
    user: ChatUserTags,
    params: Record<string, string>,
    text?: string,
  ): string;
  /** Sends one raw line to every client (a malformed line, or a message sent twice). */
  raw(line: string): void;
  /** Drops every client, keeps listening (Twitch restarting its chat servers). */
  dropClients(): void;
  close(): Promise<void>;
}

/** IRCv3 message-tag escaping. */
function escapeTag(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\:')
    .replace(/ /g, '\\s')
    .replace(/\r/g, '\\r')
    .replace(/\n/g, '\\n');
}

function tagString(tags: Record<string, string>): string {
  return Object.entries(tags)
    .map(([k, v]) => `${k}=${escapeTag(v)}`)
    .join(';');
}

function userTags(channelId: string, user: ChatUserTags, id: string): Record<string, string> {
  return {
    'badge-info': '',
    badges: '',
    color: '#1E90FF',
    'display-name': user.displayName ?? user.login,
    emotes: '',
    flags: '',
    id,
    mod: '0',
    'room-id': channelId,
    subscriber: '0',
    'tmi-sent-ts': String(Date.now()),
    turbo: '0',
    'user-id': user.userId ?? String(100000 + ((user.login.length * 7919) % 90000)),
    'user-type': '',
  };
}

export async function startFakeTwitchIrc(): Promise<FakeTwitchIrc> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const joined: string[] = [];
  const received: string[] = [];
  const joinWaiters: { channel: string; resolve: () => void }[] = [];
  /** Each client's channels. */
  const memberships = new Map<WebSocket, Set<string>>();
  const channelIds = new Map<string, string>();
  const channelId = (channel: string) => {
    let id = channelIds.get(channel);
    if (!id) {
      id = String(500000 + channelIds.size);
      channelIds.set(channel, id);
    }
    return id;
  };

  const send = (ws: WebSocket, line: string) => {
    if (ws.readyState === ws.OPEN) ws.send(`${line}\r\n`);
  };
  const toChannel = (channel: string, line: string) => {
    for (const [ws, channels] of memberships) if (channels.has(channel)) send(ws, line);
  };

  wss.on('connection', (ws) => {
    memberships.set(ws, new Set());
    let nick = '';
    ws.on('close', () => memberships.delete(ws));
    ws.on('message', (data) => {
      for (const line of data.toString().split(/\r?\n/)) {
        if (!line) continue;
        received.push(line);
        const [command = '', ...rest] = line.split(' ');
        const args = rest.join(' ');
        switch (command.toUpperCase()) {
          case 'CAP': {
            if (/^LS/i.test(args)) send(ws, `:tmi.twitch.tv CAP * LS :${CAPS}`);
            else if (/^REQ/i.test(args))
              send(ws, `:tmi.twitch.tv CAP * ACK :${args.replace(/^REQ :?/i, '')}`);
            break;
          }
          case 'PASS':
            break;
          case 'NICK': {
            nick = args.trim().toLowerCase();
            if (!/^justinfan\d+$/.test(nick) && !received.some((l) => l.startsWith('PASS oauth:'))) {
              send(ws, ':tmi.twitch.tv NOTICE * :Login authentication failed');
              ws.close();
              break;
            }
            send(ws, `:tmi.twitch.tv 001 ${nick} :Welcome, GLHF!`);
            send(ws, `:tmi.twitch.tv 002 ${nick} :Your host is tmi.twitch.tv`);
            send(ws, `:tmi.twitch.tv 003 ${nick} :This server is rather new`);
            send(ws, `:tmi.twitch.tv 004 ${nick} :-`);
            send(ws, `:tmi.twitch.tv 375 ${nick} :-`);
            send(ws, `:tmi.twitch.tv 372 ${nick} :You are in a maze of twisty passages, all alike.`);
            send(ws, `:tmi.twitch.tv 376 ${nick} :>`);
            break;
          }
          case 'USER':
            break;
          case 'JOIN': {
            for (const target of args.split(',')) {
              const channel = target.trim().replace(/^#/, '').toLowerCase();
              if (!channel) continue;
              memberships.get(ws)?.add(channel);
              joined.push(channel);
              send(ws, `:${nick}!${nick}@${nick}.tmi.twitch.tv JOIN #${channel}`);
              send(ws, `:${nick}.tmi.twitch.tv 353 ${nick} = #${channel} :${nick}`);
              send(ws, `:${nick}.tmi.twitch.tv 366 ${nick} #${channel} :End of /NAMES list`);
              send(
                ws,
                `@emote-only=0;followers-only=-1;r9k=0;room-id=${channelId(channel)};slow=0;subs-only=0 :tmi.twitch.tv ROOMSTATE #${channel}`,
              );
              for (const waiter of joinWaiters.filter((w) => w.channel === channel)) waiter.resolve();
            }
            break;
          }
          case 'PART': {
            const channel = args.trim().replace(/^#/, '').toLowerCase();
            memberships.get(ws)?.delete(channel);
            send(ws, `:${nick}!${nick}@${nick}.tmi.twitch.tv PART #${channel}`);
            break;
          }
          case 'PING':
            send(ws, `:tmi.twitch.tv PONG tmi.twitch.tv ${args.startsWith(':') ? args : `:${args}`}`);
            break;
          default:
            send(ws, `:tmi.twitch.tv 421 ${nick} ${command} :Unknown command`);
        }
      }
    });
  });

  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    joined,
    received,
    get clients() {
      return memberships.size;
    },
    waitForJoin(channel, timeoutMs = 5000) {
      const name = channel.replace(/^#/, '').toLowerCase();
      if ([...memberships.values()].some((set) => set.has(name))) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no client joined #${name} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        joinWaiters.push({
          channel: name,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    privmsg(channel, user, text, extra = {}) {
      const name = channel.replace(/^#/, '').toLowerCase();
      const id = extra.id ?? randomUUID();
      const tags = { ...userTags(channelId(name), user, id), ...extra };
      toChannel(
        name,
        `@${tagString(tags)} :${user.login}!${user.login}@${user.login}.tmi.twitch.tv PRIVMSG #${name} :${text}`,
      );
      return id;
    },
    usernotice(channel, msgId, user, params, text) {
      const name = channel.replace(/^#/, '').toLowerCase();
      const id = params.id ?? randomUUID();
      const tags: Record<string, string> = {
        ...userTags(channelId(name), user, id),
        login: user.login,
        'msg-id': msgId,
        'system-msg': `${user.displayName ?? user.login} did ${msgId}`,
      };
      for (const [k, v] of Object.entries(params)) if (k !== 'id') tags[k] = v;
      toChannel(name, `@${tagString(tags)} :tmi.twitch.tv USERNOTICE #${name}${text ? ` :${text}` : ''}`);
      return id;
    },
    raw(line) {
      for (const ws of memberships.keys()) send(ws, line);
    },
    dropClients() {
      for (const ws of wss.clients) ws.terminate();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve());
      }),
  };
}
