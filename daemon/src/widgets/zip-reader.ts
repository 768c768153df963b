// Reads an imported widget archive (a zip, in memory) with yauzl and refuses a hostile one in words before
// any byte of it is written: too many entries, names that lead outside the package (.., absolute paths,
// drive letters, backslashes, encoded forms), links and devices, encrypted entries, and entries that
// declare or inflate to more than allowed (a zip bomb stops at the limit, it is never inflated whole).
import * as yauzl from 'yauzl';
import {
  WIDGET_ARCHIVE_MAX_ENTRIES,
  WIDGET_ARCHIVE_UNPACKED_MAX_BYTES,
} from '../../../shared/protocol/index.js';
import { DaemonError, errorMessage } from '../errors.js';
import { safeLogLine } from '../log-line.js';

/**
 * An import or save refused: 400 naming the file, 413 for the archive's size (`payload_too_large`),
 * 409 when there are as many packages as allowed (`conflict`).
 */
export class WidgetRefused extends DaemonError {
  constructor(message: string, code: 'rejected' | 'payload_too_large' | 'conflict' = 'rejected') {
    super(code, message);
  }
}

/** One file of the archive, checked from the central directory. */
export interface ArchiveFile {
  /** Its path inside the archive, `/`-separated. */
  name: string;
  /** The size its headers declare. */
  declaredSize: number;
  /** Its bytes, inflated under `maxBytes` (declared and actual sizes both checked). */
  read(maxBytes: number, tooLarge: () => WidgetRefused): Promise<Buffer>;
}

/** A name as it may be printed in an answer: control characters escaped, at most 200 characters. */
export function shownName(name: string): string {
  const escaped = safeLogLine(name);
  return escaped.length > 200 ? `${escaped.slice(0, 200)}…` : escaped;
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/** Why a name cannot be a path inside the package; undefined when it can. */
function badName(name: string): string | undefined {
  if (name.length === 0 || name.length > 255) return 'has no usable name';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'has control characters in its name';
  if (name.includes('\\')) return 'has a backslash in its name (a Windows path that may lead outside)';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'is an absolute path';
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {}
  for (const form of [name, decoded])
    if (form.split(/[\\/]/).some((part) => part === '..')) return 'points outside the package (..)';
  if (decoded !== name && (decoded.includes('\\') || decoded.startsWith('/') || decoded.includes('\0')))
    return 'points outside the package (an encoded path)';
  return undefined;
}

function openZip(buffer: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(
      buffer,
      // Names are decoded and checked here, in words; sizes are checked against what inflates.
      { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true },
      (err, zip) => (err || !zip ? reject(err) : resolve(zip)),
    ),
  );
}

/**
 * Every file of the archive (folders left out), after the checks that need no inflating. The caller
 * reads the files it wants through `read`; `close` when done.
 */
export async function readArchive(buffer: Buffer): Promise<{ files: ArchiveFile[]; close(): void }> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(buffer);
  } catch (err) {
    throw new WidgetRefused(`the archive is not a readable zip (${errorMessage(err)})`);
  }
  // The count is in the central directory's end record: a 10,000-entry archive stops before any entry.
  if (zip.entryCount > WIDGET_ARCHIVE_MAX_ENTRIES) {
    zip.close();
    throw new WidgetRefused(
      `the archive holds ${zip.entryCount} entries, more than the ${WIDGET_ARCHIVE_MAX_ENTRIES} allowed`,
    );
  }
  const entries: yauzl.Entry[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        entries.push(entry);
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', reject);
      zip.readEntry();
    });
  } catch (err) {
    zip.close();
    throw new WidgetRefused(`the archive is not a readable zip (${errorMessage(err)})`);
  }
  const files: ArchiveFile[] = [];
  const seen = new Set<string>();
  let declaredTotal = 0;
  let inflatedTotal = 0;
  try {
    for (const entry of entries) {
      const raw = entry.fileName as unknown as Buffer;
      // Bit 11: the name is UTF-8; otherwise it is CP437, of which the ASCII part is all a path here needs.
      const name =
        (entry.generalPurposeBitFlag & 0x800 ? raw.toString('utf8') : raw.toString('latin1')) || '';
      const shown = shownName(name);
      const problem = badName(name);
      if (problem) throw new WidgetRefused(`the entry "${shown}" ${problem}`);
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (mode === S_IFLNK) throw new WidgetRefused(`the entry "${shown}" is a symbolic link, not a file`);
      const folder = name.endsWith('/') || mode === S_IFDIR;
      if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR)
        throw new WidgetRefused(`the entry "${shown}" is a device or other special file, not a file`);
      if (entry.isEncrypted()) throw new WidgetRefused(`the entry "${shown}" is encrypted`);
      if (folder) continue;
      if (seen.has(name)) throw new WidgetRefused(`the entry "${shown}" is there twice`);
      seen.add(name);
      declaredTotal += entry.uncompressedSize;
      if (declaredTotal > WIDGET_ARCHIVE_UNPACKED_MAX_BYTES)
        throw new WidgetRefused(
          `the archive unpacks to more than ${WIDGET_ARCHIVE_UNPACKED_MAX_BYTES} bytes (32 MiB)`,
          'payload_too_large',
        );
      files.push({
        name,
        declaredSize: entry.uncompressedSize,
        read: (maxBytes, tooLarge) => {
          if (entry.uncompressedSize > maxBytes) return Promise.reject(tooLarge());
          return inflate(zip, entry, shown, maxBytes, tooLarge, (n) => {
            inflatedTotal += n;
            return inflatedTotal <= WIDGET_ARCHIVE_UNPACKED_MAX_BYTES;
          });
        },
      });
    }
    // A name that is a file and a folder at once ("a.png" and "a.png/b.png") cannot be written.
    for (const file of files) {
      const parts = file.name.split('/');
      for (let i = 1; i < parts.length; i++) {
        const parent = parts.slice(0, i).join('/');
        if (seen.has(parent))
          throw new WidgetRefused(`"${shownName(parent)}" is both a file and a folder in the archive`);
      }
    }
  } catch (err) {
    zip.close();
    throw err;
  }
  return { files, close: () => zip.close() };
}

/** Inflates one entry, counting what comes out: past `maxBytes` (or the archive's total) it stops. */
function inflate(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  shown: string,
  maxBytes: number,
  tooLarge: () => WidgetRefused,
  countTotal: (bytes: number) => boolean,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream)
        return reject(new WidgetRefused(`the entry "${shown}" cannot be read (${errorMessage(err)})`));
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const fail = (error: WidgetRefused) => {
        if (done) return;
        done = true;
        stream.destroy();
        reject(error);
      };
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return fail(tooLarge());
        if (!countTotal(chunk.length))
          return fail(
            new WidgetRefused(
              `the archive unpacks to more than ${WIDGET_ARCHIVE_UNPACKED_MAX_BYTES} bytes (32 MiB)`,
              'payload_too_large',
            ),
          );
        chunks.push(chunk);
      });
      stream.on('error', (error) =>
        fail(
          new WidgetRefused(
            `the entry "${shown}" inflates to other than the size it declares, a zip bomb's trick (${errorMessage(error)})`,
          ),
        ),
      );
      stream.on('end', () => {
        if (done) return;
        done = true;
        resolve(Buffer.concat(chunks));
      });
    });
  });
}
