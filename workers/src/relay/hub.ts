// The hub of one published overlay (one object per member and overlay): it holds the publisher's socket,
// the latest snapshot and the recent messages in its SQLite storage, admits viewers to its shards and sends
// each batch of messages once to each shard that has viewers. The daemon sends each message once, whatever
// the number of viewers; the shards write it to their viewers. Its parts: what it keeps (hub-store.ts), the
// publisher's protocol (publisher.ts), viewer admission (admission.ts), the kept messages for resumes
// (resume-buffer.ts), the batches to the shards (batches.ts) and the alarm (hub-alarm.ts).
import { DurableObject } from 'cloudflare:workers';
import { RELAY_CLOSE, RELAY_LIMITS } from '../../../shared/protocol/index.js';
import type { GatekeeperEnv } from '../env.js';
import { memberEpoch, readMember } from '../membership/member-store.js';
import { deriveSubdomain } from '../tunnels/subdomain.js';
import { notPublished, ViewerAdmission } from './admission.js';
import { ShardBatches } from './batches.js';
import { HubAlarm } from './hub-alarm.js';
import { HubStore, KEY } from './hub-store.js';
import { safeClose } from './names.js';
import { PublisherLink } from './publisher.js';
import { ResumeBuffer } from './resume-buffer.js';

/** What a joining viewer gets first (its `init`, then what it missed), and where live messages take over. */
export interface JoinAnswer {
  frames: string[];
  pos: number;
}

export class OverlayRelay extends DurableObject<GatekeeperEnv> {
  readonly #store: HubStore;
  readonly #buffer: ResumeBuffer;
  readonly #batches: ShardBatches;
  readonly #publisher: PublisherLink;
  readonly #admission: ViewerAdmission;
  readonly #alarm: HubAlarm;

  constructor(ctx: DurableObjectState, env: GatekeeperEnv) {
    super(ctx, env);
    this.#store = new HubStore(ctx, env);
    this.#buffer = new ResumeBuffer(this.#store);
    this.#batches = new ShardBatches(this.#store);
    const hub = {
      relay: (text: string, kept?: { seq: number; replayText: string }) => this.#relay(text, kept),
      forget: (reason: string) => this.#forget(reason),
      arm: () => this.#alarm.arm(),
    };
    this.#publisher = new PublisherLink(this.#store, hub);
    const countChanged = () => this.#publisher.countChanged();
    this.#admission = new ViewerAdmission(this.#store, countChanged);
    this.#alarm = new HubAlarm(this.#store, {
      forget: hub.forget,
      recheck: () => this.#recheck(),
      reconcile: () => this.#admission.reconcile(),
      countChanged,
    });
  }

  // --- RPC for the rest of the Worker -------------------------------------------------------------

  /** A snapshot is held and the member was Premium at the last check (re-checked here if that is overdue). */
  async published(): Promise<boolean> {
    if (this.#store.snapshot() === undefined) return false;
    // The alarm ends a publication nobody came back to; a page asking first does not wait for it.
    if (this.#alarm.abandoned(Date.now())) {
      await this.#forget('the publisher did not come back after its licence expired');
      return false;
    }
    if (await this.#moved()) return false;
    const checkedAt = this.#store.get<number>(KEY.checkedAt) ?? 0;
    if (Date.now() - checkedAt > RELAY_LIMITS.lapseCheckMs) await this.#recheck();
    return this.#store.snapshot() !== undefined;
  }

  /** The member is no longer Premium (or logged out): viewers are closed (4403) and everything is forgotten. */
  async unpublishMember(reason: string): Promise<void> {
    for (const ws of this.#store.publisherSockets()) safeClose(ws, RELAY_CLOSE.notPublished, reason);
    await this.#forget(reason);
  }

  /**
   * A shard's viewer sent `init`: its `init`, what it missed after `resumeFrom` (resume-buffer.ts), and
   * `resumed`. Null when unpublished.
   */
  join(resumeFrom?: number): JoinAnswer | null {
    const snapshot = this.#store.snapshot();
    if (snapshot === undefined) return null;
    const frames = [snapshot];
    if (resumeFrom !== undefined) frames.push(...this.#buffer.replay(resumeFrom));
    return { frames, pos: this.#store.stream().pos };
  }

  /** A shard's viewer left (closed, refused, or dropped for a bad frame): its place is free again. */
  viewerLeft(shard: number): void {
    this.#admission.left(shard);
  }

  // --- Requests the Worker forwards, the publisher's socket, the alarm --------------------------------

  override async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path.startsWith('/relay/publish/')) return this.#publisher.accept(request, path);
    if (!(await this.published())) return notPublished();
    const publication = this.#store.publication();
    if (!publication) return notPublished();
    return this.#admission.admit(request, publication);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.#publisher.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // A publisher that merely disconnects does not unpublish: viewers keep the last snapshot.
    safeClose(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  override async webSocketError(_ws: WebSocket, error: unknown): Promise<void> {
    console.error('relay publisher socket error:', error);
  }

  override async alarm(): Promise<void> {
    await this.#alarm.run();
  }

  // --- The publication ------------------------------------------------------------------------------

  /**
   * Hands the frame a position, keeps it for resumes when it is numbered, and sends it with the next
   * batch (at most one batch per 50 ms).
   */
  #relay(text: string, kept?: { seq: number; replayText: string }): void {
    this.#store.ensureSchema(); // before the stream is read, as in join
    const stream = this.#store.stream();
    stream.pos += 1;
    if (kept) this.#buffer.keep(stream, stream.pos, kept.seq, kept.replayText);
    this.#store.put(KEY.stream, stream);
    this.#batches.push({ pos: stream.pos, text });
  }

  /**
   * The member's viewer address is no longer this hub's (SUBDOMAIN_SECRET changed): its old address ends
   * like an unpublished one, and the publisher reconnects (4401) to the hub of the new address.
   */
  async #moved(): Promise<boolean> {
    const publication = this.#store.publication();
    if (!publication) return false;
    const subdomain = await deriveSubdomain(this.env.SUBDOMAIN_SECRET, publication.member);
    if (subdomain === publication.subdomain) return false;
    console.log(
      `relay ${publication.subdomain}/${publication.overlayId}: the member's address is now ${subdomain}`,
    );
    for (const ws of this.#store.publisherSockets()) {
      safeClose(ws, RELAY_CLOSE.licenceExpired, 'the viewer address changed; connect again');
    }
    await this.#forget('this overlay moved to another address');
    return true;
  }

  /** The member's stored verdict and licence epoch: Free or signed out ends the publication. */
  async #recheck(): Promise<void> {
    const publication = this.#store.publication();
    if (!publication) return;
    if (await this.#moved()) return;
    const member = await readMember(this.env, publication.member);
    if (member?.tier === 'free' || memberEpoch(member) > publication.epoch) {
      console.log(`relay ${publication.subdomain}/${publication.overlayId}: the member is no longer Premium`);
      await this.unpublishMember('the membership is no longer Premium');
      return;
    }
    this.#store.put(KEY.checkedAt, Date.now());
  }

  /** Closes every viewer (4403) and forgets the snapshot, the buffer and the viewers: new viewers get 404. */
  async #forget(reason: string): Promise<void> {
    const store = this.#store;
    const publication = store.publication();
    // Never published (or forgotten already with nobody connected): nothing to forget, nothing written.
    if (publication === undefined && store.snapshot() === undefined) return;
    // The shards' names need the publication, which may be forgotten below.
    const live = store.shardRows().map(({ idx }) => ({ idx, shard: store.shard(idx) }));
    this.#batches.clear();
    this.#buffer.clear();
    store.table('DELETE FROM shards');
    for (const key of [KEY.snapshot, KEY.countDueAt]) store.delete(key);
    if (publication && store.publishers().length === 0) store.delete(KEY.publication);
    this.#publisher.countChanged();
    this.#alarm.arm();
    await Promise.all(
      live.map(({ idx, shard }) =>
        shard
          .closeAll(RELAY_CLOSE.notPublished, reason)
          .catch((err: unknown) => console.error(`relay: shard ${idx} could not close its viewers:`, err)),
      ),
    );
  }
}
