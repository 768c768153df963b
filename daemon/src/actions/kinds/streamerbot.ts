// `streamerbot`: one Streamer.bot action through its HTTP server (`POST <url>/DoAction`).
import type { ExecutorFactory } from './types.js';

/** The default for Streamer.bot's HTTP server. */
export const DEFAULT_STREAMERBOT_URL = 'http://127.0.0.1:7474';

export const streamerbot: ExecutorFactory<'streamerbot'> = (services) => async (action) => {
  const base = (services.streamerbotUrl?.() ?? DEFAULT_STREAMERBOT_URL).replace(/\/+$/, '');
  await services.request(`${base}/DoAction`, {
    method: 'POST',
    json: { action: { name: action.action }, args: action.args },
  });
  return undefined;
};
