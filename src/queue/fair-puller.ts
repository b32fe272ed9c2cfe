// The render processes' fair puller: every render job waits in its workspace's lane
// (`<p>.render.ws.<ws>.<single|batch>`, one work-queue stream, one durable consumer per lane
// shared by all processes), and each process chooses the lane of its next job with the fair
// scheduler (fair-scheduler.ts). No leader: every process pulls for itself, and JetStream's
// per-consumer delivery keeps a job with one process at a time.
//
// How a process knows which lanes have work, without looking at 10,000 workspaces:
// - a plain NATS subscription to the lane subjects sees every publish (a JetStream publish is a
//   NATS message): the lane is ready at once;
// - every `reconcileMs` (1 s, while a slot is free; at least every 5 s otherwise) one
//   stream-info request with a subject filter lists the lanes that hold messages and how
//   many (only subjects with messages are listed: a few hundred, whatever the workspaces).
//   This finds what no publish announced: jobs queued before the process started, jobs naked
//   with a delay (retries), and jobs whose worker died (redelivered after ack_wait).
// A pull is one `no_wait` request for one message on the lane's consumer: a job or "none"
// at once, never a pull that waits on one lane while another has work. Except that a no_wait
// pull that reaches the server while the lane's last job is being delivered to another pull
// is answered only when a job comes or the pull expires (seen with nats-server 2.9): a slot
// would wait there instead of rendering. So a process has at most as many pulls on their way
// to a lane as it knows jobs there (the last delivery says how many are left, each publish
// seen adds one; one when unknown), and each pull expires after PULL_EXPIRES_MS for the race
// it cannot see, with another process's pull.
//
// Reserve slots: a process whose slots all hold a heavy workspace's jobs would make a light
// workspace's next job wait until one of them ends (a render or more, and every step of the
// job around it). So besides its `concurrency` slots a process keeps `reserveSlots` (1) that
// pull only for workspaces holding no job in this process: a heavy workspace, which holds
// jobs here the whole time it drains, never gets them, and a light workspace's job is pulled
// the moment it is published. What it then waits for is a page (render-slots.ts gives it the
// next one, ahead of the heavy workspace's jobs): at most one render. The reserve costs the
// heavy workspace nothing: it renders on the same pages, which are the limit.
//
// The stream of releases before the lanes (`<p>.render.jobs`) is one more lane, drained
// through its old consumer, so jobs queued before an upgrade still render.
import { NoRespondersError, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { deliveredMessage, type DeliveredMessage } from './pulled-message.ts';
import {
  jobErrorReporter,
  jobMessageHandler,
  sleep,
  stopWhenAborted,
  type ConsumeJobsResult,
  type JobContext,
} from './consume-jobs.ts';
import { FairScheduler, type LaneKey } from './fair-scheduler.ts';
import type { NatsQueue } from './jetstream.ts';
import {
  parseRenderLaneSubject,
  renderLaneConsumerName,
  renderLaneSubject,
  RENDER_LANES,
  type RenderLane,
} from './messages.ts';

/** The tenant name of the pre-lanes stream in the scheduler (no workspace id looks like it). */
export const LEGACY_TENANT = 'legacy';

export interface FairPullerOptions<T> {
  nats: NatsQueue;
  /** The lanes' stream and its wildcard subject. */
  lanesStream: string;
  lanesSubject: string;
  /** The stream and durable consumer of releases before the lanes (drained, not written). */
  legacy: { stream: string; consumer: string };
  /** Jobs handled at once in this process (reserve slots not counted). */
  concurrency: number;
  /**
   * Slots, besides `concurrency`, that pull only for workspaces holding no job in this process
   * (the header says why). Default 1.
   */
  reserveSlots?: number;
  /** ack_wait of every lane consumer. */
  ackWaitMs: number;
  maxAckPending: number;
  /** Lane consumers nobody pulled from for this long are deleted by the server. Default 1 h. */
  laneIdleMs?: number;
  handler: (job: JobContext<T>) => Promise<void>;
  /** Abort to stop: no further pulls; in-flight handlers may finish until stopTimeoutMs. */
  signal: AbortSignal;
  stopTimeoutMs: number;
  errorNakDelayMs?: number;
  /** The render weights of workspaces (`ws_…` → weight); missing ones weigh 1. */
  weights?: (workspaceIds: string[]) => Promise<Map<string, number>>;
  /** How long a workspace's weight is trusted before it is read again. Default 30 s. */
  weightTtlMs?: number;
  /** Listing interval while a slot is free. Default 1 s. */
  reconcileMs?: number;
  /** Each pull, with the lane it came from (queue-wait metrics). */
  onDelivered?: (lane: RenderLane, msg: DeliveredMessage) => void;
  onError?: (err: unknown) => void;
}

export interface FairPuller {
  /** Resolves when pulling stopped and in-flight handlers finished (or were abandoned). */
  readonly done: Promise<ConsumeJobsResult>;
  /** Messages in the lanes (and the pre-lanes stream), by the last listing. */
  lastListing(): ReadonlyMap<string, number>;
}

const laneKeyString = (key: LaneKey) => `${key.tenant}.${key.lane}`;

/** How long a pull that found the lane's jobs all taken may wait for one (module header). */
const PULL_EXPIRES_MS = 250;

export function startFairPuller<T>(opts: FairPullerOptions<T>): FairPuller {
  const { nats, signal } = opts;
  const nc: NatsConnection = nats.connection;
  const reconcileMs = opts.reconcileMs ?? 1_000;
  const weightTtlMs = opts.weightTtlMs ?? 30_000;
  const reportError = jobErrorReporter(opts.onError && ((err) => opts.onError!(err)));
  const { handle, running } = jobMessageHandler(
    { stream: opts.lanesStream, handler: opts.handler, errorNakDelayMs: opts.errorNakDelayMs },
    signal,
    reportError,
  );

  const weights = new Map<string, { weight: number; readAt: number }>();
  const scheduler = new FairScheduler<RenderLane>({
    lanes: RENDER_LANES,
    weightOf: (tenant) => weights.get(tenant)?.weight ?? 1,
  });
  let listing = new Map<string, number>();

  // Jobs each workspace holds in this process (the reserve slots pull for those holding none).
  const held = new Map<string, number>();
  const holdsNone = (tenant: string) => !held.has(tenant);
  // Pulls on their way to each lane, and the jobs known to wait there (module header).
  const pulling = new Map<string, number>();
  const knownJobs = new Map<string, number>();
  const pullable = (key: LaneKey) => {
    const k = laneKeyString(key);
    return (pulling.get(k) ?? 0) < Math.max(1, knownJobs.get(k) ?? 1);
  };

  // Slots with nothing to do wait for a wake-up: a publish seen wakes one (it announces one
  // job: waking every idle slot would send all but one on an empty look), a regular slot if
  // one is idle, else a reserve slot if the workspace holds no job here; a listing with work
  // or the stop wakes them all.
  const idle: (() => void)[] = [];
  const idleReserve: (() => void)[] = [];
  const wakeFor = (tenant: string) => {
    if (idle.length > 0) idle.shift()!();
    else if (holdsNone(tenant)) idleReserve.shift()?.();
  };
  const wakeAll = () => {
    for (const resolve of [...idle.splice(0), ...idleReserve.splice(0)]) resolve();
  };

  const notices: Subscription = nc.subscribe(opts.lanesSubject, {
    callback: (err, msg) => {
      if (err) return;
      const route = parseRenderLaneSubject(nats.prefix, msg.subject);
      if (!route) return;
      const key = { tenant: route.workspaceId, lane: route.lane };
      const k = laneKeyString(key);
      knownJobs.set(k, (knownJobs.get(k) ?? 0) + 1);
      scheduler.markReady(key);
      wakeFor(route.workspaceId);
    },
  });

  // ---- listing ------------------------------------------------------------------------------
  let lastReconcile = 0;
  let reconciling: Promise<void> | undefined;
  const reconcile = (): Promise<void> =>
    (reconciling ??= (async () => {
      try {
        const now = Date.now();
        const info = await nats.jsm.streams.info(opts.lanesStream, { subjects_filter: opts.lanesSubject });
        const counts = new Map<string, number>();
        for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
          const route = parseRenderLaneSubject(nats.prefix, subject);
          if (!route || count <= 0) continue;
          const key = { tenant: route.workspaceId, lane: route.lane };
          counts.set(laneKeyString(key), count);
          scheduler.markListed(key, now);
        }
        const legacy = (await nats.jsm.streams.info(opts.legacy.stream)).state.messages;
        if (legacy > 0) {
          const key = { tenant: LEGACY_TENANT, lane: 'single' as const };
          counts.set(laneKeyString(key), legacy);
          scheduler.markListed(key, now);
        }
        scheduler.forgetExcept(new Set(counts.keys()), laneKeyString);
        for (const k of knownJobs.keys()) if (!counts.has(k)) knownJobs.delete(k);
        listing = counts;
        lastReconcile = Date.now();
        await refreshWeights(counts);
        if (scheduler.readyTenants().length > 0) wakeAll();
      } catch (err) {
        reportError(err);
      } finally {
        reconciling = undefined;
      }
    })());

  async function refreshWeights(counts: Map<string, number>): Promise<void> {
    if (!opts.weights) return;
    const now = Date.now();
    const stale = new Set<string>();
    for (const key of counts.keys()) {
      const tenant = key.slice(0, key.lastIndexOf('.'));
      if (tenant === LEGACY_TENANT) continue;
      const known = weights.get(tenant);
      if (!known || now - known.readAt > weightTtlMs) stale.add(tenant);
    }
    if (stale.size === 0) return;
    const read = await opts.weights([...stale]);
    for (const tenant of stale) weights.set(tenant, { weight: read.get(tenant) ?? 1, readAt: now });
    // Forget weights of workspaces that left, so the map stays as small as the listing.
    if (weights.size > 4 * counts.size + 100)
      for (const tenant of weights.keys())
        if (!counts.has(`${tenant}.single`) && !counts.has(`${tenant}.batch`)) weights.delete(tenant);
  }

  const reconcileLoop = (async () => {
    while (!signal.aborted) {
      const stale = Date.now() - lastReconcile;
      if ((idle.length > 0 && stale >= reconcileMs) || stale >= 5 * reconcileMs) await reconcile();
      await sleep(Math.max(50, reconcileMs / 4), signal);
    }
  })();

  // ---- pulling ------------------------------------------------------------------------------
  const ensured = new Set<string>();
  async function ensureLane(key: LaneKey<RenderLane>): Promise<{ stream: string; consumer: string }> {
    if (key.tenant === LEGACY_TENANT) return opts.legacy;
    const route = { workspaceId: key.tenant, lane: key.lane };
    const consumer = renderLaneConsumerName(route);
    if (!ensured.has(consumer)) {
      await nats.ensureConsumer(opts.lanesStream, consumer, {
        ackWaitMs: opts.ackWaitMs,
        maxAckPending: opts.maxAckPending,
        filterSubject: renderLaneSubject(nats.prefix, route),
        inactiveThresholdMs: opts.laneIdleMs ?? 3_600_000,
      });
      ensured.add(consumer);
    }
    return { stream: opts.lanesStream, consumer };
  }

  /** One job from the lane, or null when it has none deliverable now. */
  async function pullOne(key: LaneKey<RenderLane>): Promise<DeliveredMessage | null> {
    for (let attempt = 0; ; attempt++) {
      const { stream, consumer } = await ensureLane(key);
      let reply: Msg;
      try {
        reply = await nc.request(
          `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
          JSON.stringify({ batch: 1, no_wait: true, expires: PULL_EXPIRES_MS * 1_000_000 }),
          // A delivery names the job's subject, not the inbox: the shared (muxed) request
          // inbox could not route it, so each pull gets an inbox of its own.
          { timeout: 5_000, noMux: true },
        );
      } catch (err) {
        // The consumer is gone (deleted after a long idle time, or by an operator): again.
        ensured.delete(consumer); // looked up again on the next pull, whatever went wrong
        if (err instanceof NoRespondersError && attempt === 0) continue;
        throw err;
      }
      const code = reply.headers?.code ?? 0;
      if (code === 404 || code === 408 || code === 409) return null;
      if (code !== 0 && reply.data.length === 0) {
        throw new Error(`pull from ${stream}/${consumer} answered ${code} ${reply.headers?.description ?? ''}`);
      }
      return deliveredMessage(reply, (subject, payload) => nc.publish(subject, payload));
    }
  }

  /** A pull came back: `left` jobs wait in the lane, by its answer. */
  const pullDone = (k: string, left: number) => {
    const n = pulling.get(k)! - 1;
    if (n > 0) pulling.set(k, n);
    else pulling.delete(k);
    if (left > 0) knownJobs.set(k, left);
    else knownJobs.delete(k);
  };

  /** A regular slot pulls in the round's order; a reserve slot only for workspaces holding none. */
  const slot = async (reserve: boolean): Promise<void> => {
    const waiting = reserve ? idleReserve : idle;
    let failures = 0;
    while (!signal.aborted) {
      const key = reserve ? scheduler.nextAmong(holdsNone, pullable) : scheduler.next(pullable);
      if (!key) {
        let resolve!: () => void;
        const woken = new Promise<void>((r) => (resolve = r));
        waiting.push(resolve);
        try {
          if (Date.now() - lastReconcile >= reconcileMs) void reconcile();
          await Promise.race([woken, sleep(reconcileMs, signal)]);
        } finally {
          const at = waiting.indexOf(resolve);
          if (at >= 0) waiting.splice(at, 1);
        }
        continue;
      }
      // The workspace holds the job from the pull on (a reserve slot does not pull for it
      // meanwhile) until its handler ends, or the pull brings nothing.
      held.set(key.tenant, (held.get(key.tenant) ?? 0) + 1);
      const release = () => {
        const left = held.get(key.tenant)! - 1;
        if (left > 0) held.set(key.tenant, left);
        else held.delete(key.tenant);
      };
      // A reserve pull is outside the round: nothing was charged, nothing is refunded.
      const refund = () => {
        release();
        if (!reserve) scheduler.refund(key.tenant);
      };
      const k = laneKeyString(key);
      pulling.set(k, (pulling.get(k) ?? 0) + 1);
      let msg: DeliveredMessage | null;
      try {
        msg = await pullOne(key);
        failures = 0;
      } catch (err) {
        pullDone(k, 0);
        refund();
        scheduler.markEmpty(key, Date.now());
        if (!signal.aborted) reportError(err);
        failures++;
        await sleep(Math.min(5_000, 100 * 2 ** Math.min(failures, 6)), signal);
        continue;
      }
      if (msg === null) {
        pullDone(k, 0);
        refund();
        scheduler.markEmpty(key, Date.now());
        // A publish seen while the pull was on its way keeps the lane ready; the slot it woke
        // may have found the lane not pullable then (this pull) and gone back to sleep.
        if (scheduler.isReady(key)) wakeFor(key.tenant);
        continue;
      }
      if (signal.aborted) {
        // Stopped while the pull was on its way: hand the job straight back.
        try {
          msg.nak();
        } catch {
          // connection gone: redelivered after ack_wait
        }
        release();
        break;
      }
      pullDone(k, msg.info.pending);
      scheduler.markDelivered(key, msg.info.pending > 0, Date.now());
      // Another slot may be idle because this pull was on its way to the only lane with work.
      if (scheduler.isReady(key)) wakeFor(key.tenant);
      opts.onDelivered?.(key.lane, msg);
      try {
        await handle(msg);
      } finally {
        release();
      }
    }
  };

  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1)
    throw new RangeError('startFairPuller: concurrency must be a whole number >= 1');
  const reserveSlots = opts.reserveSlots ?? 1;
  if (!Number.isInteger(reserveSlots) || reserveSlots < 0)
    throw new RangeError('startFairPuller: reserveSlots must be a whole number >= 0');
  const slots = Promise.all([
    ...Array.from({ length: opts.concurrency }, () => slot(false)),
    ...Array.from({ length: reserveSlots }, () => slot(true)),
    reconcileLoop,
  ]);
  signal.addEventListener('abort', () => wakeAll(), { once: true });
  // Stopping waits for the jobs being handled, not for a pull or a listing still on its way
  // (up to their request time-out after a NATS outage): a job such a pull brings back after the
  // stop is handed straight back (above), so the loops may end after `done`.
  const handlersIdle = new Promise<void>((resolve) => {
    const check = (): void => {
      if (running() === 0) resolve();
      else setTimeout(check, 50).unref();
    };
    signal.addEventListener('abort', check, { once: true });
  });
  const done = stopWhenAborted(signal, Promise.race([slots, handlersIdle]), opts.stopTimeoutMs, running).finally(() => {
    try {
      notices.unsubscribe();
    } catch {
      // the connection closed first
    }
  });
  void reconcile();
  return { done, lastListing: () => listing };
}
