// A hub's viewer admission (relay/hub.ts): how often an address may open a viewer socket, which shard
// takes it, and the viewers the hub believes each shard holds, set right by the shards' own counts.
import { errorBody, RELAY_LIMITS } from '../../../shared/protocol/index.js';
import type { HubStore, Publication } from './hub-store.js';
import { hubName, RELAY_HEADER, shardLayout, shardOrder } from './names.js';

/** Viewer sockets one address may open on one overlay per minute (each one joins once). */
export const OPENS_PER_IP_PER_MINUTE = 30;
const OPEN_WINDOW_MS = 60_000;
/** Past this many addresses in the window, the ones whose window ended are let go (memory). */
const OPEN_WINDOW_ADDRESSES = 10_000;
/** A full relay tells the page when to try again (it also backs off on its own, with jitter). */
const FULL_RETRY_AFTER_SECONDS = 10;

export class ViewerAdmission {
  /** Viewer sockets each address opened in the current minute (memory: an evicted hub had none). */
  readonly #opens = new Map<string, { since: number; count: number }>();
  /**
   * Per shard: admissions under way, and a count of admissions and leaves seen, so a shard's count
   * taken while one of those happened is not trusted over the hub's own.
   */
  readonly #admitting = new Map<number, number>();
  readonly #changes = new Map<number, number>();

  /** `countChanged`: the hub's viewer count may have changed (the publisher is told, paced). */
  constructor(
    readonly store: HubStore,
    readonly countChanged: () => void,
  ) {}

  /**
   * A viewer goes to the first shard with room in its address's own order of the shards (names.ts), so
   * the shard holding an address's sockets can count them: it refuses the sixth (429) and, full, says
   * so (503) with the address's sockets there, which the next shard adds to its own count.
   */
  async admit(request: Request, publication: Publication): Promise<Response> {
    const ip = request.headers.get(RELAY_HEADER.ip) ?? 'unknown';
    const retryAfter = this.#openedTooOften(ip, Date.now());
    if (retryAfter !== undefined) {
      return Response.json(
        errorBody(
          'rate_limited',
          `At most ${OPENS_PER_IP_PER_MINUTE} viewer sockets a minute per address per overlay`,
        ),
        { status: 429, headers: { 'Retry-After': String(retryAfter) } },
      );
    }
    const { shards, shardSize } = shardLayout(this.store.env, RELAY_LIMITS);
    const believed = new Map(this.store.shardRows().map((r) => [r.idx, r.viewers]));
    // Full everywhere as far as the hub knows: refused without asking (a full relay's pages retry).
    const order = shardOrder(ip, shards);
    if (order.every((shard) => (believed.get(shard) ?? 0) >= shardSize)) return relayFull();
    const hub = hubName(publication.subdomain, publication.overlayId);
    let elsewhere = 0;
    for (const shard of order) {
      const headers = new Headers(request.headers);
      headers.set(RELAY_HEADER.ip, ip);
      headers.set(RELAY_HEADER.hub, hub);
      headers.set(RELAY_HEADER.shard, String(shard));
      headers.set(RELAY_HEADER.ipElsewhere, String(elsewhere));
      const response = await this.#offer(shard, hub, new Request(request.url, { headers }));
      if (response.status === 101) {
        this.countChanged();
        return response;
      }
      this.store.table('UPDATE shards SET viewers = MAX(viewers - 1, 0) WHERE idx = ?', shard);
      if (response.status !== 503) return response;
      // Full by its own count: the hub believes it, and the address's sockets there count at the next.
      await response.body?.cancel();
      this.store.table('UPDATE shards SET viewers = ? WHERE idx = ?', shardSize, shard);
      elsewhere += Number(response.headers.get(RELAY_HEADER.ipViewers)) || 0;
    }
    this.countChanged();
    return relayFull();
  }

  /** A shard's viewer left (closed, refused, or dropped for a bad frame): its place is free again. */
  left(shard: number): void {
    this.#changed(shard);
    // The row stays until a count from the shard says it is empty: batches go on reaching it.
    this.store.table('UPDATE shards SET viewers = MAX(viewers - 1, 0) WHERE idx = ?', shard);
    this.countChanged();
  }

  /**
   * Takes each shard's own count of its viewers (every minute, with the member re-check), so a leave
   * report that never arrived does not keep a place taken for good. A count taken while a viewer of
   * that shard was being admitted or reported gone is not trusted; the next minute's is.
   */
  async reconcile(): Promise<void> {
    if (this.store.publication() === undefined) return;
    const rows = this.store.shardRows();
    await Promise.all(
      rows.map(async ({ idx, viewers }) => {
        const before = this.#changes.get(idx) ?? 0;
        const counted = await this.store.ask(idx, (shard) => shard.viewerCount(), undefined);
        if (counted === undefined || (this.#changes.get(idx) ?? 0) !== before) return;
        // Admissions still under way (begun before the count was asked for) are not in it yet.
        const believed = counted + (this.#admitting.get(idx) ?? 0);
        if (believed === 0) this.store.table('DELETE FROM shards WHERE idx = ?', idx);
        else if (believed !== viewers)
          this.store.table('UPDATE shards SET viewers = ? WHERE idx = ?', believed, idx);
      }),
    );
    this.countChanged();
  }

  /** Hands the viewer's request to one shard, counted there before it answers. */
  async #offer(shard: number, hub: string, request: Request): Promise<Response> {
    // Counted before the shard answers, so concurrent viewers spread over the shards.
    this.#changed(shard);
    this.#admitting.set(shard, (this.#admitting.get(shard) ?? 0) + 1);
    this.store.table(
      'INSERT INTO shards (idx, viewers) VALUES (?, 1) ON CONFLICT (idx) DO UPDATE SET viewers = viewers + 1',
      shard,
    );
    try {
      return await this.store.shard(shard).fetch(request);
    } catch (err) {
      console.error(`relay ${hub}: shard ${shard} refused a viewer:`, err);
      return Response.json(errorBody('internal', 'Internal error'), { status: 500 });
    } finally {
      this.#changed(shard);
      this.#admitting.set(shard, (this.#admitting.get(shard) ?? 1) - 1);
    }
  }

  /** Counts a socket this address opens; the seconds until it may open another when over the limit. */
  #openedTooOften(ip: string, now: number): number | undefined {
    if (this.#opens.size > OPEN_WINDOW_ADDRESSES) {
      for (const [key, window] of this.#opens) {
        if (now - window.since >= OPEN_WINDOW_MS) this.#opens.delete(key);
      }
    }
    let window = this.#opens.get(ip);
    if (!window || now - window.since >= OPEN_WINDOW_MS || now < window.since) {
      window = { since: now, count: 0 };
      this.#opens.set(ip, window);
    }
    if (window.count >= OPENS_PER_IP_PER_MINUTE) {
      return Math.max(1, Math.ceil((window.since + OPEN_WINDOW_MS - now) / 1000));
    }
    window.count += 1;
    return undefined;
  }

  /** Something changed the viewers of this shard as the hub counts them (see reconcile). */
  #changed(shard: number): void {
    this.#changes.set(shard, (this.#changes.get(shard) ?? 0) + 1);
  }
}

function relayFull(): Response {
  return Response.json(
    errorBody('unavailable', 'This overlay has all the viewers it can hold; try again later'),
    {
      status: 503,
      headers: { 'Retry-After': String(FULL_RETRY_AFTER_SECONDS) },
    },
  );
}

/** A viewer's answer for an overlay not published. */
export function notPublished(): Response {
  return Response.json(errorBody('not_found', 'This overlay is not published'), { status: 404 });
}
