// The member's Durable Object as the Worker binds it (MEMBERSHIP_RECHECK, class MembershipRecheck): the
// member object of membership/ (the epoch, one operation at a time per lane) with the operations that
// tunnels/ and relay/ run in it, each through its own lane.
import { MemberObject } from './membership/member-object.js';
import { MEDIA_RESERVATIONS, type MediaReservation, mediaUsage, reserveMedia } from './relay/media-quota.js';
import { PROVISIONS, type ProvisionOutcome, provisionInMemberObject } from './tunnels/member-provision.js';

export class MembershipRecheck extends MemberObject {
  /** Provisions of this member waiting or running (the tunnel suites watch it). */
  get provisionsInFlight(): number {
    return this.lanes.inFlight(PROVISIONS);
  }

  /** Provisions the member's tunnel, one provision of theirs at a time (rollback included). */
  provision(userId: string): Promise<ProvisionOutcome> {
    return this.lanes.run(PROVISIONS, () => provisionInMemberObject(this.env, userId));
  }

  /** Reserves relay media bytes for the file `name` (media-quota.ts). */
  reserveMedia(name: string, bytes: number, limit: number): Promise<MediaReservation> {
    return this.lanes.run(MEDIA_RESERVATIONS, () => reserveMedia(this.ctx.storage.sql, name, bytes, limit));
  }

  /** Bytes of relay media reserved by the member. */
  mediaUsage(): number {
    return mediaUsage(this.ctx.storage.sql);
  }

  /** The media reservations stay as long as the files they count, which outlive the member's record. */
  protected override outlivesRecord(): boolean {
    return mediaUsage(this.ctx.storage.sql) > 0;
  }
}
