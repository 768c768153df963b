// Widget packages (decisions-4 §14): the streamer's own HTML, CSS and JS with StreamElements' fields,
// as stored, imported, edited and listed. One schema per boundary; the limits are the contract's.
import * as v from 'valibot';
import { shortText, Uuid } from './primitives.js';

export const WIDGET_CODE_MAX_BYTES = 256 * 1024;
export const WIDGET_JSON_MAX_BYTES = 64 * 1024;
export const WIDGET_PACKAGES_MAX = 100;
export const WIDGET_ARCHIVE_MAX_BYTES = 8 * 1024 * 1024;
export const WIDGET_ARCHIVE_UNPACKED_MAX_BYTES = 32 * 1024 * 1024;
export const WIDGET_ARCHIVE_MAX_ENTRIES = 200;

/** UTF-8 bytes of a text, counted without Node or DOM (this zone has neither). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}
const jsonBytes = (value: unknown) => utf8Bytes(JSON.stringify(value) ?? '');

/** A code pane, at most 256 KiB of UTF-8; `file` names it in the refusal. */
const codeText = (file: string) =>
  v.pipe(
    v.string(),
    v.maxBytes(WIDGET_CODE_MAX_BYTES, `${file} may be at most ${WIDGET_CODE_MAX_BYTES} bytes (256 KiB)`),
  );

/** One field of StreamElements' fields format, kept verbatim: only `type` is read here (a text when absent). */
export const WidgetField = v.looseObject({
  type: v.optional(v.pipe(v.string(), v.maxLength(64))),
  label: v.optional(v.unknown()),
  value: v.optional(v.unknown()),
});
export type WidgetField = v.InferOutput<typeof WidgetField>;

const jsonObjectOf = <S extends v.GenericSchema>(file: string, entry: S) =>
  v.pipe(
    // A record would take an array as an object of its indices: a list is not a fields file.
    v.custom<Record<string, unknown>>(
      (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
      'must be a JSON object (field key → field)',
    ),
    v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), entry),
    v.check(
      (value) => jsonBytes(value) <= WIDGET_JSON_MAX_BYTES,
      `${file} may be at most ${WIDGET_JSON_MAX_BYTES} bytes (64 KiB)`,
    ),
  );

/** fields.json: field key → field, as StreamElements writes them. */
export const WidgetFields = jsonObjectOf('fields.json', WidgetField);
export type WidgetFields = v.InferOutput<typeof WidgetFields>;

/** data.json: field key → value. */
export const WidgetData = jsonObjectOf('data.json', v.unknown());
export type WidgetData = v.InferOutput<typeof WidgetData>;

const packageName = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100));

/** manifest.json of a package. */
export const WidgetManifest = v.object({
  formatVersion: v.literal(1),
  id: v.pipe(Uuid, v.toLowerCase()),
  name: packageName,
  version: v.pipe(v.string(), v.minLength(1), v.maxLength(40)),
  author: v.optional(shortText),
  description: v.optional(v.pipe(v.string(), v.maxLength(2000))),
  compat: v.literal('se'),
});
export type WidgetManifest = v.InferOutput<typeof WidgetManifest>;

/** A manifest as an archive carries it: its id is replaced by the one given at import. */
export const ImportedWidgetManifest = v.object({
  ...WidgetManifest.entries,
  id: v.optional(v.unknown()),
});

/** `GET` / `PUT /api/widgets/:id`: the package whole. */
export const WidgetPackage = v.object({
  manifest: WidgetManifest,
  html: codeText('widget.html'),
  css: codeText('widget.css'),
  js: codeText('widget.js'),
  fields: WidgetFields,
  data: WidgetData,
});
export type WidgetPackage = v.InferOutput<typeof WidgetPackage>;

/** `POST /api/widgets/import` with a JSON body: the five panes pasted. */
export const PastedWidget = v.object({
  name: packageName,
  html: codeText('widget.html'),
  css: codeText('widget.css'),
  js: codeText('widget.js'),
  fields: v.optional(WidgetFields),
  data: v.optional(WidgetData),
});
export type PastedWidget = v.InferOutput<typeof PastedWidget>;

/** One row of `GET /api/widgets`. */
export const WidgetSummary = v.object({
  id: Uuid,
  name: v.string(),
  version: v.string(),
  compat: v.literal('se'),
  /** The overlays that place it (a widget of `type: "custom"` naming it). */
  usedBy: v.array(Uuid),
});
export type WidgetSummary = v.InferOutput<typeof WidgetSummary>;

/** `201` of an import: the new package's id and name, its kind of archive and the media files it brought. */
export const WidgetImported = v.object({
  id: Uuid,
  name: v.string(),
  version: v.string(),
  compat: v.literal('se'),
  /** Which shape was read: our package, a widget.io export, the public collections' folder, pasted panes. */
  source: v.picklist(['package', 'widget-io', 'folder', 'pasted']),
  /** Files besides the five, now media names under `widgets/<id>/`. */
  media: v.array(v.string()),
  /** Files of the archive that were left out (not media), by name. */
  skipped: v.array(v.string()),
});
export type WidgetImported = v.InferOutput<typeof WidgetImported>;

/** The values a package starts with: each field's `value`, then what data.json says. */
export function widgetDefaults(fields: WidgetFields, data: WidgetData = {}): WidgetData {
  const values: WidgetData = {};
  for (const [key, field] of Object.entries(fields)) if (field.value !== undefined) values[key] = field.value;
  return { ...values, ...data };
}

/** The package as exported or published: fields of type `secret` carry no value anywhere. */
export function withoutSecretValues(pkg: WidgetPackage): WidgetPackage {
  const fields: WidgetFields = {};
  const data: WidgetData = { ...pkg.data };
  for (const [key, field] of Object.entries(pkg.fields)) {
    if (field.type === 'secret') {
      const { value: _value, ...rest } = field;
      fields[key] = rest;
      delete data[key];
    } else fields[key] = field;
  }
  return { ...pkg, fields, data };
}
