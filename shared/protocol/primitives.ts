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
