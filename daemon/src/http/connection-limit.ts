// Counts open connections (HTTP requests in flight and WebSockets) per client IP (interface §8, decisions §3).

export class ConnectionLimiter {
  readonly #open = new Map<string, number>();

  constructor(readonly maxPerIp: number) {}

  /**
   * Takes a slot for `ip`; false when the IP is at its limit. The caller gives it back exactly once with
   * `give` (the front door when a request ends, the hub when a subscribed connection closes).
   */
  take(ip: string): boolean {
    const count = this.#open.get(ip) ?? 0;
    if (count >= this.maxPerIp) return false;
    this.#open.set(ip, count + 1);
    return true;
  }

  give(ip: string): void {
    const left = (this.#open.get(ip) ?? 1) - 1;
    if (left <= 0) this.#open.delete(ip);
    else this.#open.set(ip, left);
  }

  openFor(ip: string): number {
    return this.#open.get(ip) ?? 0;
  }
}
