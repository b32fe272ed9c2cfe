// Which lane a render process pulls its next job from: weighted deficit round robin over the
// workspaces that have work, and within a workspace its lanes in priority order (single
// generations before batch items). Pure bookkeeping, no I/O: the puller (fair-puller.ts) tells
// it what it learns about the lanes and asks it where to pull next.
//
// A lane is `ready` when it is believed to hold a deliverable job: a publish into it was seen,
// or the stream listed messages in it and the last look found it empty long enough ago (its
// messages may be in flight elsewhere, or naked with a delay, or waiting out a dead worker's
// ack_wait: looks back off 1, 2, 4 s so idle processes do not hammer in-flight-only lanes).
//
// Deficit round robin with a cost of one job: when the round reaches a workspace it is
// credited its weight, and it is served while its credit lasts (so weight 3 gets three jobs
// for every one of a weight-1 workspace while both have work). A workspace that runs out of
// ready lanes leaves the round and loses its credit; one that gets work again joins at the end
// of the round, so it waits at most one round: the jobs of the workspaces ahead of it.

export interface LaneKey<L extends string = string> {
  tenant: string;
  lane: L;
}

/** A lane chosen by next(), with the count of publishes seen into it when it was chosen. */
export interface LaneLook<L extends string = string> extends LaneKey<L> {
  publishes: number;
}

interface LaneState {
  ready: boolean;
  /** Empty looks in a row (backs the next look off). */
  emptyStreak: number;
  /** When the lane may be looked at again after an empty look, if the stream still lists it. */
  retryAt: number;
  /** Publishes seen into the lane (markReady calls): a look's answer predates any made since. */
  publishes: number;
}

interface TenantState<L extends string> {
  tenant: string;
  credit: number;
  lanes: Map<L, LaneState>;
  inRound: boolean;
}

export interface FairSchedulerOptions<L extends string> {
  /** A tenant's lanes, highest priority first. */
  lanes: readonly L[];
  /** A tenant's weight (jobs per round); read when the round reaches it. Whole numbers >= 1. */
  weightOf: (tenant: string) => number;
  /** Back-off after 1, 2, 3… empty looks at a lane the stream still lists. Default 1, 2, 4 s. */
  emptyBackoffMs?: readonly number[];
}

export class FairScheduler<L extends string = string> {
  private readonly tenants = new Map<string, TenantState<L>>();
  /** The round: tenants with a ready lane, in turn order; `cursor` is whose turn it is. */
  private round: TenantState<L>[] = [];
  private cursor = 0;
  private readonly options: FairSchedulerOptions<L>;
  private readonly backoff: readonly number[];

  constructor(options: FairSchedulerOptions<L>) {
    this.options = options;
    this.backoff = options.emptyBackoffMs ?? [1_000, 2_000, 4_000];
  }

  /** A job was published into the lane (or it surely holds one): look there. */
  markReady(key: LaneKey<L>): void {
    const lane = this.lane(key);
    lane.publishes++;
    lane.ready = true;
    lane.emptyStreak = 0;
    this.join(this.tenant(key.tenant));
  }

  /**
   * The stream lists messages in the lane. Ready unless a look found it empty too recently
   * (its messages are then most likely in flight elsewhere).
   */
  markListed(key: LaneKey<L>, now: number): void {
    const lane = this.lane(key);
    if (lane.ready || now < lane.retryAt) return;
    lane.ready = true;
    this.join(this.tenant(key.tenant));
  }

  /**
   * A look found nothing deliverable: back off until a publish or a later listing. Unless a
   * publish was seen since the look was chosen (`look` from next()): the answer may predate
   * that job (the server answers the pull and announces the publish on separate paths), so
   * the lane stays ready.
   */
  markEmpty(key: LaneKey<L> | LaneLook<L>, now: number): void {
    const lane = this.lane(key);
    if (this.publishedSince(lane, key)) return;
    lane.ready = false;
    lane.emptyStreak++;
    lane.retryAt = now + this.backoff[Math.min(lane.emptyStreak, this.backoff.length) - 1]!;
  }

  /**
   * A look delivered a job. `more` is whether the lane still holds undelivered jobs: if not,
   * it rests until a publish or the next listing a moment later (no look wasted on it).
   */
  markDelivered(key: LaneKey<L> | LaneLook<L>, more: boolean, now: number): void {
    const lane = this.lane(key);
    lane.emptyStreak = 0;
    // "None left" counted when the job was delivered; a publish seen since is one more.
    if (!more && !this.publishedSince(lane, key)) {
      lane.ready = false;
      lane.retryAt = now + this.backoff[0]!;
    }
  }

  /** Lanes the stream no longer lists are forgotten (bounded memory over 10,000 workspaces). */
  forgetExcept(listed: ReadonlySet<string>, keyOf: (key: LaneKey<L>) => string): void {
    for (const [tenant, state] of this.tenants) {
      for (const [lane, laneState] of state.lanes)
        if (!laneState.ready && !listed.has(keyOf({ tenant, lane }))) state.lanes.delete(lane);
      if (state.lanes.size === 0 && !state.inRound) this.tenants.delete(tenant);
    }
  }

  /**
   * The lane to pull the next job from, charged one job to its tenant; undefined when no lane
   * is ready. Give the charge back with refund() when the pull finds nothing. A ready lane
   * that is not `pullable` (the puller has as many pulls on its way there as it knows jobs)
   * is passed over without a charge.
   */
  next(pullable: (key: LaneKey<L>) => boolean = () => true): LaneLook<L> | undefined {
    // Each pass either serves or drops a tenant without ready lanes, passes over one whose
    // ready lanes may not be pulled now, or credits one that ran out: at most two looks per
    // tenant.
    for (let looks = 0; this.round.length > 0 && looks <= 2 * this.round.length; looks++) {
      if (this.cursor >= this.round.length) this.cursor = 0;
      const state = this.round[this.cursor]!;
      const ready = this.options.lanes.filter((l) => state.lanes.get(l)?.ready);
      if (ready.length === 0) {
        this.leave(this.cursor);
        continue;
      }
      const lane = ready.find((l) => pullable({ tenant: state.tenant, lane: l }));
      if (lane === undefined) {
        // Its jobs are being pulled already: its turn passes, its credit stays.
        this.cursor++;
        continue;
      }
      if (state.credit < 1) state.credit += Math.max(1, Math.floor(this.options.weightOf(state.tenant)));
      state.credit -= 1;
      if (state.credit < 1) this.cursor++;
      return { tenant: state.tenant, lane, publishes: state.lanes.get(lane)!.publishes };
    }
    return undefined;
  }

  /**
   * The lane of the first tenant in turn order that `accept`s and has a ready lane, charging
   * nothing and leaving the round as it is: for the reserve slots (fair-puller.ts), which pull
   * outside the round for tenants that hold no job in the process.
   */
  nextAmong(
    accept: (tenant: string) => boolean,
    pullable: (key: LaneKey<L>) => boolean = () => true,
  ): LaneLook<L> | undefined {
    const n = this.round.length;
    for (let i = 0; i < n; i++) {
      const state = this.round[(this.cursor + i) % n]!;
      if (!accept(state.tenant)) continue;
      const lane = this.options.lanes.find(
        (l) => state.lanes.get(l)?.ready && pullable({ tenant: state.tenant, lane: l }),
      );
      if (lane !== undefined) return { tenant: state.tenant, lane, publishes: state.lanes.get(lane)!.publishes };
    }
    return undefined;
  }

  /** The pull charged by next() found nothing: the tenant keeps that job's credit. */
  refund(tenant: string): void {
    const state = this.tenants.get(tenant);
    if (state?.inRound) state.credit += 1;
  }

  /** Whether the lane is believed to hold a deliverable job. */
  isReady(key: LaneKey<L>): boolean {
    return this.tenants.get(key.tenant)?.lanes.get(key.lane)?.ready ?? false;
  }

  /** Tenants with a ready lane, in turn order (for tests and diagnostics). */
  readyTenants(): string[] {
    return this.round.map((t) => t.tenant);
  }

  /** The lane states (for the metrics: how many lanes are known). */
  get knownLanes(): number {
    let n = 0;
    for (const t of this.tenants.values()) n += t.lanes.size;
    return n;
  }

  private tenant(tenant: string): TenantState<L> {
    let state = this.tenants.get(tenant);
    if (!state) {
      state = { tenant, credit: 0, lanes: new Map(), inRound: false };
      this.tenants.set(tenant, state);
    }
    return state;
  }

  private publishedSince(lane: LaneState, key: LaneKey<L> | LaneLook<L>): boolean {
    return 'publishes' in key && lane.publishes !== key.publishes;
  }

  private lane(key: LaneKey<L>): LaneState {
    const tenant = this.tenant(key.tenant);
    let lane = tenant.lanes.get(key.lane);
    if (!lane) {
      lane = { ready: false, emptyStreak: 0, retryAt: 0, publishes: 0 };
      tenant.lanes.set(key.lane, lane);
    }
    return lane;
  }

  /** Joins at the end of the round: just before whoever's turn it is. */
  private join(state: TenantState<L>): void {
    if (state.inRound) return;
    state.inRound = true;
    state.credit = 0;
    if (this.cursor >= this.round.length) this.cursor = 0;
    this.round.splice(this.cursor, 0, state);
    this.cursor++;
  }

  private leave(index: number): void {
    const [state] = this.round.splice(index, 1);
    if (state) {
      state.inRound = false;
      state.credit = 0;
    }
    if (this.cursor > index) this.cursor--;
  }
}
