// Files of the data directory a person may edit by hand (rules.json, settings.json): whether the one on
// disk reads, so a view can say so when it opens rather than when a save is refused.
import * as v from 'valibot';

/** `GET /api/rules/problem`, `GET /api/settings/problem`: `null` when the file reads (or is absent). */
export const FileProblem = v.object({ problem: v.nullable(v.string()) });
export type FileProblem = v.InferOutput<typeof FileProblem>;
