// Kick as one of the daemon's sources: chat, hosts and subscriptions over Kick's Pusher socket.
export { KICK_EVENTS, type KickMapResult, mapKickEvent } from './map.js';
export { PusherSocket, pusherSocketUrl } from './pusher.js';
export { type KickIds, KickSource, type KickSourceOptions } from './source.js';
