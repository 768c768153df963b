// Which uploads the dashboard accepts, by extension and size (checked again by the daemon).
const IMAGE_EXTENSIONS = ['png', 'jpg', 'jpeg', 'gif', 'webp', 'svg', 'avif'] as const;
const AUDIO_EXTENSIONS = ['mp3', 'ogg', 'oga', 'wav', 'm4a'] as const;
/** Videos for alerts; webm may hold sound alone too, and plays in a video element either way. */
const VIDEO_EXTENSIONS = ['mp4', 'webm'] as const;
/** Per-file limit: alerts are short clips and images; larger files belong in OBS itself. */
export const MAX_MEDIA_BYTES = 20 * 1024 * 1024;

const extension = (name: string) => name.toLowerCase().split('.').pop() ?? '';
const has = (list: readonly string[], name: string) => list.includes(extension(name));

export const isImage = (name: string) => has(IMAGE_EXTENSIONS, name);
export const isAudio = (name: string) => has(AUDIO_EXTENSIONS, name);
export const isVideo = (name: string) => has(VIDEO_EXTENSIONS, name);

/** A name the MediaPath schema accepts: letters, digits, dot, dash, underscore, space; no `..`. */
export function safeMediaName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? name;
  return base
    .replace(/[^A-Za-z0-9._ -]/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 255);
}

/** Why a file cannot be uploaded, or undefined when it can. */
export function uploadProblem(file: { name: string; size: number }): string | undefined {
  if (!isImage(file.name) && !isAudio(file.name) && !isVideo(file.name)) {
    return `“${file.name}” is not an image (${IMAGE_EXTENSIONS.join(', ')}), a sound (${AUDIO_EXTENSIONS.join(', ')}) or a video (${VIDEO_EXTENSIONS.join(', ')}).`;
  }
  if (file.size > MAX_MEDIA_BYTES) {
    return `“${file.name}” is ${(file.size / 1048576).toFixed(1)} MiB; the limit is ${MAX_MEDIA_BYTES / 1048576} MiB.`;
  }
  if (file.size === 0) return `“${file.name}” is empty.`;
  return undefined;
}
