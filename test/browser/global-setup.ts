// Fails the browser project at once, with the fix, when Chromium is not installed.
import { CHROMIUM_MISSING_MESSAGE, chromiumAvailable } from '../support/chromium.js';

export default function setup(): void {
  if (!chromiumAvailable()) throw new Error(CHROMIUM_MISSING_MESSAGE);
}
