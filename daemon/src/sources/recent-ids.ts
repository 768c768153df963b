// A bounded least-recently-used set of message ids, so that every source lets a message through once
// however often it arrives: TikTok's push messages, Twitch's chat and EventSub (delivered at least once),
// YouTube's live-chat pages, and Kick's, which its chat socket and the Gatekeeper's feed may both bring.

export class RecentIds {
  private readonly ids = new Map<string, true>();

  constructor(private readonly capacity = 5000) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('capacity must be ≥ 1');
  }

  /** True when `id` was seen before; otherwise remembers it (evicting the oldest) and returns false. */
  seen(id: string): boolean {
    if (this.ids.has(id)) {
      // Refresh its place: a duplicate that keeps coming back stays remembered.
      this.ids.delete(id);
      this.ids.set(id, true);
      return true;
    }
    this.ids.set(id, true);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.keys().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
    return false;
  }

  get size(): number {
    return this.ids.size;
  }
}
