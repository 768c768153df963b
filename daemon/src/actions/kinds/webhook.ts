// `webhook`: an HTTP request to another tool, to the origin of the rule's own URL only.
import type { ExecutorFactory } from './types.js';

export const webhook: ExecutorFactory<'webhook'> = (services) => async (action) => {
  services.admit(action.origin);
  // The URL with the event filled in must still go where the rule's own URL goes.
  let origin: string;
  try {
    origin = new URL(action.url).origin;
  } catch {
    throw new Error('the URL with the event filled in is not a valid URL');
  }
  if (origin !== action.origin)
    throw new Error(`refused: the URL with the event filled in goes to ${origin}, not ${action.origin}`);
  const body =
    action.method === 'GET' || action.body === undefined
      ? undefined
      : typeof action.body === 'string'
        ? action.body
        : JSON.stringify(action.body);
  const headers: Record<string, string> = { ...action.headers };
  if (body !== undefined && typeof action.body !== 'string' && !hasHeader(headers, 'content-type'))
    headers['Content-Type'] = 'application/json';
  await services.request(action.url, {
    method: action.method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  return undefined;
};

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}
