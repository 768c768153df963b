// The control API of widget packages (decisions-4 §14): list, import (a zip of one of three shapes, or the
// five panes pasted), read, replace with If-Match, delete (refused while an overlay places it), export.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { zipSync } from 'fflate';
import type { Polka, Request } from 'polka';
import {
  PastedWidget,
  parseWith,
  Uuid,
  WIDGET_ARCHIVE_MAX_BYTES,
  type WidgetImported,
  WidgetPackage,
  withoutSecretValues,
} from '../../../shared/protocol/index.js';
import { errorMessage } from '../errors.js';
import type { DataDir } from '../store/data-dir.js';
import { importArchive, importPasted, type WidgetDraft } from '../widgets/importers.js';
import { fileOf, WidgetPackageStore } from '../widgets/package-store.js';
import { WidgetRefused } from '../widgets/zip-reader.js';
import { readBytes, readJson } from './body.js';
import { etagOf, ifMatchHolds, sendPreconditionFailed } from './etag.js';
import { sendError, sendJson, sendNoContent } from './responses.js';

/** A package as JSON: three code panes of 256 KiB and two JSON files of 64 KiB, with room for escapes. */
const PACKAGE_JSON_MAX_BYTES = 4 * 1024 * 1024;

function packageIdParam(req: Request): string | undefined {
  const id = req.params.id ?? '';
  return parseWith(Uuid, id).ok ? id.toLowerCase() : undefined;
}

/** A package or pasted panes as JSON: refusals name the file a field is kept in. */
const readPackageJson = <S extends typeof WidgetPackage | typeof PastedWidget>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: S,
) => readJson(req, res, schema, { maxBytes: PACKAGE_JSON_MAX_BYTES, describe: fileOf });

function sendRefusal(res: ServerResponse, err: WidgetRefused): void {
  const code =
    err.code === 'payload_too_large'
      ? 'payload_too_large'
      : err.code === 'conflict'
        ? 'conflict'
        : 'bad_request';
  sendError(res, code, err.message);
}

/** A file name for the export: the package's name in letters, digits and dashes. */
function exportName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .toLowerCase();
  return `${slug || 'widget'}.zip`;
}

export function mountWidgetRoutes(app: Polka, dirs: DataDir): void {
  const store = new WidgetPackageStore(dirs);

  app.get('/api/widgets', async (_req, res) =>
    sendJson(res, 200, await store.list(), { 'Cache-Control': 'no-cache' }),
  );

  app.post('/api/widgets/import', async (req, res) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    let draft: WidgetDraft;
    try {
      if (type === 'application/zip' || type === 'application/x-zip-compressed') {
        const body = await readBytes(req, WIDGET_ARCHIVE_MAX_BYTES);
        if (!body.ok)
          return sendError(
            res,
            'payload_too_large',
            `a widget archive may be at most ${WIDGET_ARCHIVE_MAX_BYTES} bytes (8 MiB)`,
            { Connection: 'close' },
          );
        draft = await importArchive(body.bytes);
      } else if (type === 'application/json') {
        const pasted = await readPackageJson(req, res, PastedWidget);
        if (!pasted) return;
        draft = importPasted(pasted);
      } else
        return sendError(
          res,
          'bad_request',
          'Content-Type must be application/zip (an archive) or application/json (the five panes pasted)',
        );
      const saved = await store.create(draft);
      if (!saved.ok) return sendError(res, 'unavailable', saved.message);
      const { id, name, version, compat } = saved.value.manifest;
      sendJson(
        res,
        201,
        {
          id,
          name,
          version,
          compat,
          source: draft.source,
          media: draft.media.map((file) => file.name),
          skipped: draft.skipped,
        } satisfies WidgetImported,
        { Location: `/api/widgets/${id}` },
      );
    } catch (err) {
      if (err instanceof WidgetRefused) return sendRefusal(res, err);
      sendError(res, 'internal', `the widget could not be imported: ${errorMessage(err)}`);
    }
  });

  app.get('/api/widgets/:id', async (req, res) => {
    const id = packageIdParam(req);
    const pkg = id ? await store.get(id) : undefined;
    if (!pkg) return sendError(res, 'not_found', 'No widget package has that id');
    sendJson(res, 200, pkg, { ETag: etagOf(pkg), 'Cache-Control': 'no-cache' });
  });

  app.put('/api/widgets/:id', async (req, res) => {
    const id = packageIdParam(req);
    if (!id || !(await store.get(id))) return sendError(res, 'not_found', 'No widget package has that id');
    const input = await readPackageJson(req, res, WidgetPackage);
    if (!input) return;
    // Checked after the body is read, against the package in force now.
    const inForce = await store.get(id);
    if (!inForce) return sendError(res, 'not_found', 'No widget package has that id');
    if (!ifMatchHolds(req, etagOf(inForce))) return sendPreconditionFailed(res, etagOf(inForce));
    try {
      const saved = await store.replace(id, input);
      if (saved.ok) return sendJson(res, 200, saved.value, { ETag: etagOf(saved.value) });
      sendError(res, saved.reason === 'missing' ? 'not_found' : 'unavailable', saved.message);
    } catch (err) {
      if (err instanceof WidgetRefused) return sendRefusal(res, err);
      throw err;
    }
  });

  app.delete('/api/widgets/:id', async (req, res) => {
    const id = packageIdParam(req);
    if (!id || !(await store.ids()).includes(id))
      return sendError(res, 'not_found', 'No widget package has that id');
    const placed = (await store.usage()).get(id) ?? [];
    if (placed.length > 0)
      return sendError(
        res,
        'conflict',
        `The widget package is placed on ${placed.length === 1 ? 'an overlay' : `${placed.length} overlays`}: ${placed
          .map((o) => `"${o.name}" (${o.id})`)
          .join(', ')}; take it off ${placed.length === 1 ? 'it' : 'them'} first`,
      );
    if (!(await store.remove(id))) return sendError(res, 'not_found', 'No widget package has that id');
    sendNoContent(res);
  });

  app.get('/api/widgets/:id/export', async (req, res) => {
    const id = packageIdParam(req);
    const stored = id ? await store.get(id) : undefined;
    if (!id || !stored) return sendError(res, 'not_found', 'No widget package has that id');
    // Values of `secret` fields (an API key the streamer typed) stay on this machine.
    const pkg = withoutSecretValues(stored);
    const text = (value: string) => new TextEncoder().encode(value);
    const json = (value: unknown) => text(`${JSON.stringify(value, null, 2)}\n`);
    const files: Record<string, Uint8Array> = {
      'manifest.json': json(pkg.manifest),
      'widget.html': text(pkg.html),
      'widget.css': text(pkg.css),
      'widget.js': text(pkg.js),
      'fields.json': json(pkg.fields),
      'data.json': json(pkg.data),
    };
    for (const file of await store.media(id)) files[file.name] = file.bytes;
    const zip = Buffer.from(zipSync(files, { level: 6 }));
    res.writeHead(200, {
      'Content-Type': 'application/zip',
      'Content-Length': zip.length,
      'Content-Disposition': `attachment; filename="${exportName(pkg.manifest.name)}"`,
      'Cache-Control': 'no-store',
    });
    res.end(zip);
  });
}
