// Building blocks shared by the schemas of every topic.
import * as v from 'valibot';

export const Uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
export const finite = v.pipe(v.number(), v.finite());
export const nonNegativeInt = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
export const positiveInt = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
export const shortText = v.pipe(v.string(), v.maxLength(200));
export const colour = v.pipe(v.string(), v.maxLength(64));
/** A file name inside the data directory's media/ folder, as served at /assets/<name>. */
export const MediaPath = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(255),
  v.regex(/^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._ /-]*$/, 'must be a media file name without ..'),
);

/** A voice of the speech engine: espeak-ng's `en-us`, macOS's `Samantha`, Windows's `Microsoft Zira Desktop`. */
export const VoiceId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9 _+().-]{0,99}$/, 'must be a voice name (letters, digits, spaces, _+().-)'),
);

/** A video of the media library: an mp4 or webm file, which every browser source plays. */
export const VideoPath = v.pipe(MediaPath, v.regex(/\.(mp4|webm)$/i, 'must be an .mp4 or .webm file'));
