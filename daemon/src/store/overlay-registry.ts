// The overlays in force, by id: the last good state of each file.
import type { Overlay } from '../../../shared/protocol/index.js';

export class OverlayRegistry {
  readonly #overlays = new Map<string, Overlay>();

  constructor(overlays: Iterable<Overlay> = []) {
    for (const overlay of overlays) this.#overlays.set(overlay.id, overlay);
  }

  get(id: string): Overlay | undefined {
    return this.#overlays.get(id);
  }

  set(overlay: Overlay): void {
    this.#overlays.set(overlay.id, overlay);
  }

  delete(id: string): boolean {
    return this.#overlays.delete(id);
  }

  list(): Overlay[] {
    return [...this.#overlays.values()];
  }
}
