// Entity tags for the documents the dashboard edits ("No lost edits"): a PUT with
// `If-Match` is refused with 412 when the document changed since the client read it.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody, type Overlay } from '../../../shared/protocol/index.js';
import { sendJson } from './responses.js';

/** A strong ETag of a JSON document: a digest of its serialised form. */
export function etagOf(document: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(document)).digest('base64url').slice(0, 27)}"`;
}

/**
 * An overlay's tag covers what a person edits. Widget state the daemon keeps from stream events
 * (goal progress, counter values, the top-gifters list) is left out: likes arriving during a stream
 * must not make every save in the dashboard a conflict.
 */
export function overlayEtag(overlay: Overlay): string {
  const widgets = overlay.widgets.map((widget) => {
    switch (widget.type) {
      case 'goal': {
        const { current: _current, ...edited } = widget;
        return edited;
      }
      case 'counter': {
        const { value: _value, ...edited } = widget;
        return edited;
      }
      case 'top-gifters': {
        const { entries: _entries, ...edited } = widget;
        return edited;
      }
      default:
        return widget;
    }
  });
  return etagOf({ ...overlay, widgets });
}

/**
 * Whether a PUT may go ahead: no `If-Match` (scripts keep working), `*`, or one of the listed tags
 * equal to the current one (RFC 9110 §13.1.1, strong comparison).
 */
export function ifMatchHolds(req: IncomingMessage, current: string): boolean {
  const header = req.headers['if-match'];
  if (header === undefined) return true;
  const tags = header.split(',').map((tag) => tag.trim());
  return tags.includes('*') || tags.includes(current);
}

/** 412 with the common body, code `conflict`, and the tag now in force. */
export function sendPreconditionFailed(res: ServerResponse, etag: string): void {
  sendJson(
    res,
    412,
    errorBody('conflict', 'It changed since you loaded it (edited by hand or in another tab); load it again'),
    { ETag: etag },
  );
}
