// Injecting globals into the compiled overlay page, the same way for the daemon's page and the Gatekeeper's
// viewer page: script-safe JSON, placed right after the opening <head> so they exist before any module runs.

/** Strings that JSON.stringify leaves as they are and that hold nothing scriptSafeJson would escape. */
const PLAIN_STRING = /^[A-Za-z0-9_.:-]*$/;

/** JSON that is safe inside a <script> element: no `</script>`, no `<!--`, no line separators. */
export function scriptSafeJson(value: unknown): string {
  // The globals are a UUID, a port and a base64url token on every load: skip five scans that cannot match.
  if (typeof value === 'string' && PLAIN_STRING.test(value)) return `"${value}"`;
  if (typeof value === 'number') return JSON.stringify(value);
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A page cut where the globals go: right after the opening <head> tag, or at the very start without one. */
export interface SplitPage {
  before: string;
  after: string;
}

export function splitAtHead(html: string): SplitPage {
  const head = /<head[^>]*>/i.exec(html);
  if (!head) return { before: '', after: html };
  const at = head.index + head[0].length;
  return { before: html.slice(0, at), after: html.slice(at) };
}
