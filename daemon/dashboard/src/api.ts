// Client of the daemon's local control API (decisions §3): Bearer admin key, JSON bodies, typed refusals.
import * as v from 'valibot';
import {
  ErrorBody,
  type Overlay,
  type OverlayInput,
  Overlay as OverlaySchema,
  parseWith,
  type StreamEvent,
} from '../../../shared/protocol/index.js';
import { type RuleList, RuleList as RuleListSchema } from '../../../shared/rules.js';

/** A refusal by the daemon (or a network failure, status 0), with the field the server named. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The dotted path before the first ": " of a `bad_request` message, e.g. `0.actions.0.widgetId`. */
    readonly field?: string,
  ) {
    super(message);
  }
}

/** The server words a bad field as `<field>: <reason>` (decisions §1); split it for display beside the field. */
export function fieldOf(message: string): string | undefined {
  const match = /^([A-Za-z0-9_$.[\]-]+): /.exec(message);
  return match?.[1];
}

export const MediaItem = v.object({
  name: v.string(),
  size: v.optional(v.number()),
  type: v.optional(v.string()),
});
export type MediaItem = v.InferOutput<typeof MediaItem>;

// Accept a bare array or an object wrapping it: the list is the contract, the envelope is not.
const MediaListBody = v.union([
  v.array(
    v.union([
      MediaItem,
      v.pipe(
        v.string(),
        v.transform((name) => ({ name })),
      ),
    ]),
  ),
  v.pipe(
    v.object({ media: v.array(MediaItem) }),
    v.transform((b) => b.media),
  ),
]);
const OverlayListBody = v.union([
  v.array(OverlaySchema),
  v.pipe(
    v.object({ overlays: v.array(OverlaySchema) }),
    v.transform((b) => b.overlays),
  ),
]);
const RulesBody = v.union([
  RuleListSchema,
  v.pipe(
    v.object({ rules: RuleListSchema }),
    v.transform((b) => b.rules),
  ),
]);
const OverlayBody = v.union([
  OverlaySchema,
  v.pipe(
    v.object({ overlay: OverlaySchema }),
    v.transform((b) => b.overlay),
  ),
]);

/** Free-form JSON object (GET /status, GET /api/clients, the 202 body of POST /api/events). */
export const JsonRecord = v.record(v.string(), v.unknown());
export type JsonRecord = v.InferOutput<typeof JsonRecord>;

export interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: Blob;
  contentType?: string;
}

export class ControlApi {
  /** Called on every 401 so the shell can say the key was refused. */
  onUnauthorized: (error: ApiError) => void = () => {};

  constructor(private readonly key: string | undefined) {}

  async request(path: string, options: RequestOptions = {}): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (this.key) headers.Authorization = `Bearer ${this.key}`;
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.body) {
      headers['Content-Type'] = options.contentType || 'application/octet-stream';
      body = options.body;
    }
    let response: Response;
    try {
      response = await fetch(path, { method: options.method ?? 'GET', headers, body, cache: 'no-store' });
    } catch {
      throw new ApiError(
        0,
        'network',
        'The overlay daemon is not reachable. Is overlay-daemon still running?',
      );
    }
    const text = await response.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!response.ok) {
      const parsed = parseWith(ErrorBody, data);
      const code = parsed.ok ? parsed.value.error.code : `http_${response.status}`;
      const message = parsed.ok ? parsed.value.error.message : `${response.status} ${response.statusText}`;
      const error = new ApiError(response.status, code, message, fieldOf(message));
      if (response.status === 401) this.onUnauthorized(error);
      throw error;
    }
    return data;
  }

  private async typed<S extends v.GenericSchema>(schema: S, path: string, options?: RequestOptions) {
    const data = await this.request(path, options);
    const parsed = parseWith(schema, data);
    if (!parsed.ok)
      throw new ApiError(0, 'unexpected_response', `Unexpected answer from ${path}: ${parsed.error}`);
    return parsed.value;
  }

  status(): Promise<JsonRecord> {
    return this.typed(JsonRecord, '/status');
  }
  clients(): Promise<unknown> {
    return this.request('/api/clients');
  }

  listOverlays(): Promise<Overlay[]> {
    return this.typed(OverlayListBody, '/api/overlays');
  }
  createOverlay(input: OverlayInput): Promise<Overlay> {
    return this.typed(OverlayBody, '/api/overlays', { method: 'POST', json: input });
  }
  saveOverlay(overlay: Overlay): Promise<Overlay> {
    const { id, ...input } = overlay;
    return this.typed(OverlayBody, `/api/overlays/${encodeURIComponent(id)}`, {
      method: 'PUT',
      json: input,
    }).catch((err: unknown) => {
      // A PUT that answers 204 or an empty body still saved what was sent.
      if (err instanceof ApiError && err.code === 'unexpected_response') return overlay;
      throw err;
    });
  }
  async deleteOverlay(id: string): Promise<void> {
    await this.request(`/api/overlays/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }

  listRules(): Promise<RuleList> {
    return this.typed(RulesBody, '/api/rules');
  }
  async saveRules(rules: RuleList): Promise<void> {
    await this.request('/api/rules', { method: 'PUT', json: rules });
  }

  listMedia(): Promise<MediaItem[]> {
    return this.typed(MediaListBody, '/api/media');
  }
  async uploadMedia(name: string, file: Blob): Promise<void> {
    await this.request(`/api/media/${encodeURIComponent(name)}`, {
      method: 'PUT',
      body: file,
      contentType: file.type,
    });
  }
  async deleteMedia(name: string): Promise<void> {
    await this.request(`/api/media/${encodeURIComponent(name)}`, { method: 'DELETE' });
  }

  /** 202 once accepted; the body, when there is one, may say which rules fired. */
  sendEvent(event: StreamEvent): Promise<unknown> {
    return this.request('/api/events', { method: 'POST', json: event });
  }
}
