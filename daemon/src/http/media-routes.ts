// The media library of the control API: list, upload (at most 20 MiB, image, audio or video) and delete
// under media/, every name checked so no path leads outside it.
import { realpath, rm } from 'node:fs/promises';
import type { Polka, Request } from 'polka';
import type { MediaSaved } from '../../../shared/protocol/index.js';
import {
  checkMediaName,
  listMedia,
  MEDIA_MAX_BYTES,
  MediaOutside,
  mediaType,
  PayloadTooLarge,
  realMediaFile,
  writeMedia,
} from '../media/media.js';
import { sendError, sendJson, sendNoContent } from './responses.js';

/** The media name after /api/media/, decoded once; undefined when it is not a valid media path. */
function mediaNameParam(req: Request, mediaDir: string): string | undefined {
  const raw = req.path.slice('/api/media/'.length);
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return checkMediaName(mediaDir, name).ok ? name : undefined;
}

export function mountMediaRoutes(app: Polka, ctx: { mediaDir: string }): void {
  app.get('/api/media', async (_req, res) => sendJson(res, 200, await listMedia(ctx.mediaDir)));

  app.put('/api/media/*', async (req, res) => {
    const name = mediaNameParam(req, ctx.mediaDir);
    if (name === undefined)
      return sendError(
        res,
        'bad_request',
        'name: must be a media file name (letters, digits, . _ - space /), without ..',
      );
    const type = mediaType(name);
    if (!type)
      return sendError(
        res,
        'bad_request',
        'name: the extension must be that of an image, audio or video file',
      );
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MEDIA_MAX_BYTES) {
      return sendError(res, 'payload_too_large', 'media files are limited to 20 MiB', {
        Connection: 'close',
      });
    }
    const checked = checkMediaName(ctx.mediaDir, name);
    if (!checked.ok) return sendError(res, 'bad_request', 'name: not allowed');
    try {
      const { replaced, size } = await writeMedia(ctx.mediaDir, checked.path, req);
      sendJson(res, replaced ? 200 : 201, { name, size, type } satisfies MediaSaved);
    } catch (err) {
      if (err instanceof MediaOutside) {
        return sendError(res, 'forbidden', 'name: the folder leads outside media/', { Connection: 'close' });
      }
      if (err instanceof PayloadTooLarge) {
        return sendError(res, 'payload_too_large', 'media files are limited to 20 MiB', {
          Connection: 'close',
        });
      }
      // Bad names are the client's, never a 500.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENAMETOOLONG')
        return sendError(res, 'bad_request', 'name: too long for the file system', { Connection: 'close' });
      if (code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOTEMPTY')
        return sendError(
          res,
          'conflict',
          'name: a folder has that name, or a file stands where a folder should',
          {
            Connection: 'close',
          },
        );
      throw err;
    }
  });

  app.delete('/api/media/*', async (req, res) => {
    const name = mediaNameParam(req, ctx.mediaDir);
    const checked = name === undefined ? undefined : checkMediaName(ctx.mediaDir, name);
    if (!checked?.ok || name === undefined) return sendError(res, 'not_found', 'No media file has that name');
    // The real path, so a symlinked folder inside media/ cannot lead the delete outside it.
    const file = await realMediaFile(name, checked.path, () => realpath(ctx.mediaDir));
    if (!file.ok) {
      return file.status === 403
        ? sendError(res, 'forbidden', 'name: the path leads outside media/')
        : sendError(res, 'not_found', 'No media file has that name');
    }
    try {
      await rm(file.path);
    } catch {
      return sendError(res, 'not_found', 'No media file has that name');
    }
    sendNoContent(res);
  });
}
