// Which overlays are published: one publisher per public overlay while the daemon is Premium; `unpublish`
// when an overlay stops being public, is deleted or the streamer signs out; every publisher closed on a lapse.
import type { LicenceStatus, Overlay } from '../../../shared/protocol/index.js';
import type { RelayStatus } from '../../../shared/protocol/relay.js';
import { decodeJwtPayload } from '../licence/jwt-payload.js';
import type { Timers } from '../timers.js';
import { Publisher, type Takeover, takenOverStatus } from './publisher.js';
import { RelayMedia } from './relay-media.js';

/** What the relay needs of the licence (licence/licence-manager.ts). */
export interface RelayLicence {
  status(): LicenceStatus;
  /** The stored licence; its `token` is the JWT the relay checks. */
  record(): { token: string } | undefined;
  refresh(): Promise<unknown>;
  /**
   * The licence to open a socket again with after the relay closed one that had `used` at its `exp`: the one
   * held when it is newer with time left, else a fresh one (licence-manager.ts); absent: always a refresh.
   */
  renewed?(used: string | undefined): Promise<unknown>;
  on(event: 'change', listener: (status: LicenceStatus) => void): unknown;
  off(event: 'change', listener: (status: LicenceStatus) => void): unknown;
}

/** What taking an overlay back answers: the overlay's relay entry now (`taken`: it had been taken over). */
export type TakeBack =
  | { ok: true; taken: boolean; status: RelayStatus }
  | { ok: false; code: 'not_found' | 'conflict'; message: string };

export type OverlayChange = { type: 'changed'; overlay: Overlay } | { type: 'removed'; overlayId: string };

export interface RelayServiceOptions {
  /** Absent: nothing is published (no licence to publish with); public overlays show `off`. */
  licence?: RelayLicence | undefined;
  /** The Gatekeeper's origin, the one the licence is validated with. */
  gatekeeperUrl?: string | undefined;
  overlays: {
    list(): Overlay[];
    get(id: string): Overlay | undefined;
    subscribe(listener: (change: OverlayChange) => void): () => void;
  };
  hub: {
    onPageMessage(overlayId: string, listener: (text: string) => void): () => void;
    keptSince(overlayId: string, from: number): { texts: string[]; gap: boolean };
  };
  mediaDir: string;
  timers: Timers;
  random?: () => number;
  /** How often the licence is looked at between its own changes (the first load at start, a grace period running out): 5 s. */
  checkIntervalMs?: number;
  log: (line: string) => void;
}

const CHECK_INTERVAL_MS = 5000;

/** `ws(s)://` of the Gatekeeper's origin. */
function publishUrl(base: string, overlayId: string): string {
  return `${base.replace(/^http/i, 'ws')}/relay/publish/${overlayId}`;
}

export class RelayService {
  readonly #options: RelayServiceOptions;
  readonly #publishers = new Map<string, Publisher>();
  /** Overlays another daemon took over (4409): left alone until taken back, `public` changes or a restart. */
  readonly #replaced = new Map<string, Takeover>();
  /** Publishers telling the relay to stop: closed at shutdown if they are still at it. */
  readonly #leaving = new Set<Publisher>();
  readonly #media: RelayMedia | undefined;
  readonly #unsubscribe: () => void;
  readonly #onLicence = () => this.sync();
  #check: ReturnType<Timers['setTimeout']> | undefined;
  /** The member the publishers publish as: a sign-in as someone else starts them again with that licence. */
  #member: string | undefined;
  #closed = false;

  constructor(options: RelayServiceOptions) {
    this.#options = options;
    const { licence, gatekeeperUrl } = options;
    if (licence && gatekeeperUrl)
      this.#media = new RelayMedia({
        mediaDir: options.mediaDir,
        baseUrl: gatekeeperUrl,
        token: () => licence.record()?.token,
        log: options.log,
      });
    this.#unsubscribe = options.overlays.subscribe((change) => this.#onOverlay(change));
    licence?.on('change', this.#onLicence);
    this.sync();
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed || !this.#options.licence) return;
    this.#check = this.#options.timers.setTimeout(() => {
      this.sync();
      this.#schedule();
    }, this.#options.checkIntervalMs ?? CHECK_INTERVAL_MS);
  }

  /** Why nothing is published now, or undefined while the daemon may publish. */
  #notPublishing(): string | undefined {
    const { licence, gatekeeperUrl } = this.#options;
    if (!licence || !gatekeeperUrl) return 'this daemon runs without a licence';
    const status = licence.status();
    if (status.tier !== 'premium' || !licence.record())
      return `public overlays need Premium (licence ${status.state.replace('_', ' ')}, ${status.tier} tier)`;
    return undefined;
  }

  /** Brings the publishers in line with the overlays and the licence. */
  sync(): void {
    if (this.#closed) return;
    const why = this.#notPublishing();
    const publicIds = new Set(
      this.#options.overlays
        .list()
        .filter((o) => o.public)
        .map((o) => o.id),
    );
    const token = this.#options.licence?.record()?.token;
    const member = token ? decodeJwtPayload(token)?.sub : undefined;
    const otherMember = member !== this.#member;
    this.#member = member;
    for (const [id, publisher] of this.#publishers) {
      if (publicIds.has(id) && !why && !otherMember) continue;
      this.#publishers.delete(id);
      // Signed out: the relay is told to stop (the socket still holds the licence it opened with). A lapse
      // needs no word from here: the Gatekeeper closes the relay on its own.
      if (!publicIds.has(id) || this.#options.licence?.status().state === 'signed_out') {
        this.#leaving.add(publisher);
        void publisher.unpublish().then(() => this.#leaving.delete(publisher));
      } else publisher.close();
    }
    if (why) return;
    for (const id of publicIds) {
      if (this.#publishers.has(id) || this.#replaced.has(id)) continue;
      this.#publishers.set(id, this.#publisher(id));
    }
  }

  #publisher(overlayId: string): Publisher {
    const { licence, gatekeeperUrl, overlays, hub, timers, log } = this.#options;
    const media = this.#media;
    const publisher = new Publisher({
      overlayId,
      url: publishUrl(gatekeeperUrl ?? '', overlayId),
      token: () => licence?.record()?.token,
      refreshLicence: (used) => licence?.renewed?.(used) ?? licence?.refresh() ?? Promise.resolve(),
      overlay: () => overlays.get(overlayId),
      keptSince: (from) => hub.keptSince(overlayId, from),
      observe: (listener) => hub.onPageMessage(overlayId, listener),
      mediaName: (name) => media?.relayName(name) ?? Promise.resolve(undefined),
      timers,
      random: this.#options.random ?? Math.random,
      log,
      onReplaced: (takeover) => {
        this.#replaced.set(overlayId, takeover);
        if (this.#publishers.get(overlayId) === publisher) this.#publishers.delete(overlayId);
      },
    });
    publisher.start();
    return publisher;
  }

  #onOverlay(change: OverlayChange): void {
    const id = change.type === 'changed' ? change.overlay.id : change.overlayId;
    // Made public again (or deleted): a takeover by another daemon is forgotten.
    if (change.type === 'removed' || !change.overlay.public) this.#replaced.delete(id);
    this.sync();
  }

  /**
   * Publishes an overlay another daemon took over from here again (`POST /api/relay/:id/take-back`): the
   * relay then closes the other daemon's publisher with 4409, as it did this one's. An overlay published
   * from here already is left as it is.
   */
  takeBack(overlayId: string): TakeBack {
    const overlay = this.#options.overlays.get(overlayId);
    if (!overlay) return { ok: false, code: 'not_found', message: 'No overlay has that id' };
    if (!overlay.public)
      return {
        ok: false,
        code: 'conflict',
        message: 'This overlay is not public: make it public to publish it',
      };
    const why = this.#notPublishing();
    if (why) return { ok: false, code: 'conflict', message: `Nothing is published from here: ${why}` };
    const taken = this.#replaced.delete(overlayId);
    if (taken) {
      this.#options.log(`[relay] overlay ${overlayId}: taken back; publishing it from here again`);
      this.sync();
    }
    const entry = this.#entries().find((e) => e.overlayId === overlayId);
    return { ok: true, taken, status: entry ?? { overlayId, state: 'off', viewers: 0 } };
  }

  /** One entry per public overlay; undefined while none is public (the part is then left out of /status). */
  status(): RelayStatus[] | undefined {
    const entries = this.#entries();
    return entries.length === 0 ? undefined : entries;
  }

  #entries(): RelayStatus[] {
    const why = this.#notPublishing();
    return this.#options.overlays
      .list()
      .filter((overlay) => overlay.public)
      .map((overlay): RelayStatus => {
        const takeover = this.#replaced.get(overlay.id);
        if (takeover) return takenOverStatus(overlay.id, takeover);
        const publisher = this.#publishers.get(overlay.id);
        if (publisher) return publisher.status();
        return { overlayId: overlay.id, state: 'off', viewers: 0, detail: why ?? 'starting' };
      });
  }

  /** Shutdown: every publisher closes without unpublishing (viewers keep the last snapshot). */
  close(): void {
    this.#closed = true;
    if (this.#check) this.#options.timers.clearTimeout(this.#check);
    this.#unsubscribe();
    this.#options.licence?.off('change', this.#onLicence);
    for (const publisher of [...this.#publishers.values(), ...this.#leaving]) publisher.close();
    this.#publishers.clear();
    this.#leaving.clear();
  }
}
