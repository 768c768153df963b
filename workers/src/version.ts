// The Gatekeeper's version is the package's version (interface §9.1); esbuild inlines only this field.
import { version } from '../../package.json';

export const VERSION: string = version;
