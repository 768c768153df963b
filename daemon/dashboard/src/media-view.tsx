// Media library: upload images and sounds (checked here first), list them, delete them.
import { useState } from 'preact/hooks';
import { MediaPath, parseWith } from '../../../shared/protocol/index.js';
import { assetUrl } from './editor/widget-preview.js';
import { isAudio, isImage, isVideo, MAX_MEDIA_BYTES, safeMediaName, uploadProblem } from './media-kinds.js';
import type { Shared } from './shared-data.js';
import { ConfirmButton, describeError, Notice } from './ui.js';

const sizeText = (bytes: number | undefined) =>
  bytes === undefined
    ? ''
    : bytes < 1024 * 1024
      ? `${Math.ceil(bytes / 1024)} KiB`
      : `${(bytes / 1048576).toFixed(1)} MiB`;

export function MediaView(props: { shared: Shared }) {
  const { shared } = props;
  const [message, setMessage] = useState<{ kind: 'error' | 'ok'; text: string } | undefined>();
  const [busy, setBusy] = useState(false);

  const upload = async (files: FileList | null) => {
    if (!files || files.length === 0) return;
    setBusy(true);
    const done: string[] = [];
    try {
      for (const file of Array.from(files)) {
        const problem = uploadProblem(file);
        if (problem) throw new Error(problem);
        const name = safeMediaName(file.name);
        const valid = parseWith(MediaPath, name);
        if (!valid.ok) throw new Error(`“${file.name}”: ${valid.error}`);
        await shared.api.uploadMedia(name, file);
        done.push(name);
      }
      setMessage({ kind: 'ok', text: `Uploaded ${done.join(', ')}.` });
    } catch (err) {
      const prefix = done.length ? `Uploaded ${done.join(', ')}; then: ` : '';
      setMessage({ kind: 'error', text: prefix + describeError(err) });
    } finally {
      setBusy(false);
      await shared.reloadMedia().catch(() => {});
    }
  };

  const remove = async (name: string) => {
    try {
      await shared.api.deleteMedia(name);
      setMessage({ kind: 'ok', text: `Deleted ${name}.` });
    } catch (err) {
      setMessage({ kind: 'error', text: describeError(err) });
    }
    await shared.reloadMedia().catch(() => {});
  };

  return (
    <section aria-labelledby="media-title">
      <div class="section-head">
        <h1 id="media-title" tabIndex={-1}>
          Media
        </h1>
      </div>
      <div class="card">
        <label class="upload">
          Upload images, sounds or videos (up to {MAX_MEDIA_BYTES / 1048576} MiB each)
          <input
            type="file"
            multiple
            accept="image/*,audio/*,video/mp4,video/webm"
            disabled={busy}
            onChange={(e) => {
              const input = e.currentTarget;
              void upload(input.files).then(() => {
                input.value = '';
              });
            }}
          />
        </label>
        <p class="muted">
          Files are served to overlays at <code>/assets/&lt;name&gt;</code>.
        </p>
        {message && <Notice kind={message.kind}>{message.text}</Notice>}
      </div>
      {shared.media.length === 0 ? (
        <Notice kind="info">No media yet.</Notice>
      ) : (
        <ul class="media-grid">
          {shared.media.map((m) => (
            <li key={m.name} class="card media-item" data-media-name={m.name}>
              {isImage(m.name) && <img src={assetUrl(m.name)} alt={m.name} loading="lazy" />}
              {isAudio(m.name) && (
                // biome-ignore lint/a11y/useMediaCaption: sound effects for alerts have no speech to caption
                <audio controls preload="none" src={assetUrl(m.name)} />
              )}
              {isVideo(m.name) && <video controls muted preload="metadata" src={assetUrl(m.name)} />}
              <span class="media-name">{m.name}</span>
              <span class="muted">{sizeText(m.size)}</span>
              <ConfirmButton
                label="Delete"
                question={`Delete ${m.name}?`}
                onConfirm={() => void remove(m.name)}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
