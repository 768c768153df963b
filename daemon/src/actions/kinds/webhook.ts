// `webhook`: an HTTP request to another tool, to the origin of the rule's own URL only.
import type { ExecutorFactory, OutboundCall } from './types.js';

export const webhook: ExecutorFactory<'webhook'> = (services) => (action) => {
  // Turned away before anything is built while the address holds too many unanswered requests.
  const refused = services.refusal(action.origin);
  if (refused !== undefined) return { refused };
  // The URL with the event filled in must still go where the rule's own URL goes.
  let origin: string;
  try {
    origin = new URL(action.url).origin;
  } catch {
    return Promise.reject(new Error('the URL with the event filled in is not a valid URL'));
  }
  if (origin !== action.origin)
    return Promise.reject(
      new Error(`refused: the URL with the event filled in goes to ${origin}, not ${action.origin}`),
    );
  const call: OutboundCall = { method: action.method, headers: { ...action.headers } };
  // Text is sent as filled in; anything else as JSON (with its content type unless a header names one).
  if (action.method !== 'GET' && action.body !== undefined) {
    if (typeof action.body === 'string') call.body = action.body;
    else call.json = action.body;
  }
  return services.request(action.url, call).then(() => undefined);
};
