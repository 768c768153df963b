// A token bucket: the publisher's pace, kept under the relay's limit of frames per second.

export class TokenBucket {
  #tokens: number;
  #last: number;

  /** `rate` tokens a second, at most `capacity` saved up; `now` in milliseconds. */
  constructor(
    readonly rate: number,
    readonly capacity: number,
    readonly now: () => number,
  ) {
    this.#tokens = capacity;
    this.#last = now();
  }

  /** Takes one token and returns 0, or returns how many ms until one is there (and takes none). */
  take(): number {
    const now = this.now();
    this.#tokens = Math.min(this.capacity, this.#tokens + ((now - this.#last) * this.rate) / 1000);
    this.#last = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.#tokens) * 1000) / this.rate));
  }
}
