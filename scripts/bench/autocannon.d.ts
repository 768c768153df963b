// Types for the part of autocannon's programmatic API the benchmarks use (the package ships none).
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    max: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }
  /** Without a callback: a promise of the result that is also an event emitter. */
  interface Run extends Promise<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number) => void): this;
  }
  function autocannon(options: Options): Run;
  export default autocannon;
}
