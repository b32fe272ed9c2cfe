// One render job, from claim to final state (docs/interface.md#lifecycle):
//   PENDING -> PROCESSING (conditional claim with a lease) -> COMPLETED | FAILED.
// The lease lets a crashed worker's generation be taken over; the attempt counter on the row
// bounds retries across crashes; every transition is conditional on still holding the lease,
// so a stale or duplicate worker can never overwrite a final state.
import { randomUUID } from 'node:crypto';
import type { ObjectId } from 'mongodb';
import { formatId, parseId } from '../domain/ids.ts';
import { backoffDelayMs, type BackoffPolicy } from '../ops/backoff.ts';
import { SpanKind, withSpan } from '../ops/tracing.ts';
import { finalEventFor, type FinalEvent, type RenderJob } from '../queue/messages.ts';
import type { JsonObject, TemplateVersionContent } from '../domain/template.ts';
import type { GenerationDoc } from '../store/documents.ts';
import type { FinalEventSource, GenerationsRepository } from '../store/generations-repository.ts';
import type { StatsRepository } from '../store/stats-repository.ts';
import type { TemplatesRepository } from '../store/templates-repository.ts';
import { generationObjectKey } from '../generations/generation-erasure.ts';
import { retryTransient } from '../store/mongo-errors.ts';
import { RenderError, isRenderError } from './render-error.ts';
import type { BatchProgress } from '../batches/batch-progress.ts';
import { CrashThrottle } from './crash-throttle.ts';
import { timeStage, type RenderStageTimes, type StageObserver } from './render-stages.ts';

/** What the queue lets a handler do with the message it is working on. */
export interface JobControl {
  working(): void;
  ack(): void | Promise<void>;
  nak(delayMs: number): void | Promise<void>;
  term(): void | Promise<void>;
}

export interface DocumentRendererLike {
  render(
    content: TemplateVersionContent,
    variables: JsonObject,
    options?: {
      workspaceId?: string;
      templateName?: string;
      onStage?: StageObserver | undefined;
      /** A test generation: every page gets the "TEST" stamp (docs/interface.md#test-mode). */
      test?: boolean;
    },
  ): Promise<{ pdf: Buffer }>;
}

export interface PdfStore {
  putPdf(
    key: string,
    pdf: Buffer,
    options: { downloadFilename: string; metadata?: Record<string, string> },
  ): Promise<void>;
  /** Removes a PDF whose generation was erased while it rendered. */
  remove?(key: string): Promise<void>;
  /** The metadata stored with a PDF, null when none is stored (a retry looks for an earlier attempt's). */
  pdfMetadata?(key: string): Promise<Record<string, string> | null>;
}

/** Object metadata naming the template version a stored PDF was rendered from. */
export const TEMPLATE_VERSION_METADATA = 'docgen-template-version';

/**
 * How long recording a stored PDF (complete()) is retried through a database failover before
 * the attempt is given back; the next attempt then finds the PDF and records it.
 */
export const COMPLETE_RETRY_BUDGET_MS = 30_000;

export interface FinalEventPublisher {
  publishFinalEvent(event: FinalEvent): Promise<void>;
}

export interface RenderOutcomeListener {
  (
    outcome: 'completed' | 'failed' | 'retried' | 'skipped',
    info: { generationId: string; durationMs: number; error?: string; stagesMs: RenderStageTimes },
  ): void;
}

/** Transient failures are retried after these delays (attempt 1 -> 2, 2 -> 3; later ones wait the last). */
export const RENDER_RETRY_DELAYS_MS: readonly number[] = [1000, 4000, 10000];
export const RENDER_RETRY_BACKOFF: BackoffPolicy = { delaysMs: RENDER_RETRY_DELAYS_MS };

/** RenderErrors say whether retrying can help; anything else (storage, broker) is transient. */
export function isPermanentRenderError(err: unknown): boolean {
  return isRenderError(err) && err.permanent;
}

/** Where a generation's PDF is stored (one home: src/generations/generation-erasure.ts). */
export const outputKeyFor = generationObjectKey;

export interface RenderPipelineDeps {
  generations: GenerationsRepository;
  templates: TemplatesRepository;
  renderer: DocumentRendererLike;
  store: PdfStore;
  events: FinalEventPublisher;
  /**
   * The workspace statistics: a final generation is counted with its event, through the same
   * outbox (counted before the event leaves, settled after; docs/architecture.md#workspace-statistics).
   */
  stats?: Pick<StatsRepository, 'countGeneration' | 'settleGeneration'> | undefined;
  maxAttempts: number;
  /** Lease on a claimed generation; renewed while rendering. */
  leaseMs: number;
  onOutcome?: RenderOutcomeListener;
  /** A render begins: the generation is claimed by this worker (attempt counts every claim). */
  onStart?: (info: { generationId: string; attempt: number }) => void;
  onError?: (err: unknown, generationId: string) => void;
  /** Holds back a workspace whose renders keep crashing pages (default: 3 crashes a minute). */
  crashThrottle?: CrashThrottle;
  /** Told how long each stage of a render took (render-stages.ts; the role's metrics). */
  onStage?: StageObserver;
  /** How long recording a stored PDF is retried through a failover (default COMPLETE_RETRY_BUDGET_MS). */
  completeRetryBudgetMs?: number;
  /** Counts final batch items and finishes their batches (src/batches/batch-progress.ts). */
  batches?: Pick<BatchProgress, 'itemFinal'>;
}

/**
 * When this worker's lease on a generation was last confirmed (the claim, a heartbeat): taken
 * before the write was sent, so the lease runs until at least leaseMs after this moment.
 */
class LeaseClock {
  confirmedAt = performance.now();

  confirmed(sentAt: number): void {
    this.confirmedAt = Math.max(this.confirmedAt, sentAt);
  }
}

/** One job being processed: what its steps need to settle and report it. */
interface JobRun {
  readonly id: ObjectId;
  readonly generationId: string;
  readonly control: JobControl;
  /** performance.now() when processing began. */
  readonly started: number;
  readonly lease: LeaseClock;
  /** Times each stage of this job, for its outcome report, and tells deps.onStage. */
  readonly observe: StageObserver;
  readonly stages: RenderStageTimes;
  /** The PDF is in the object store: from here on the attempt never ends FAILED (a failover may cut the record). */
  uploaded: boolean;
}

/** Versions are immutable: a render worker keeps the ones it used (saves a read per render). */
const VERSION_CACHE_SIZE = 256;

export class RenderPipeline {
  private readonly deps: RenderPipelineDeps;
  private readonly versions = new Map<string, TemplateVersionContent>();
  /** Identifies this worker's leases. */
  readonly workerId = `render-${randomUUID()}`;

  private readonly throttle: CrashThrottle;

  constructor(deps: RenderPipelineDeps) {
    this.deps = deps;
    this.throttle = deps.crashThrottle ?? new CrashThrottle();
  }

  /**
   * Runs one render job to a settled message: claim the generation, render it, store the PDF
   * and complete it, or hand it back, retry it later or fail it. Every step below settles the
   * message itself when the job ends there.
   */
  async process(job: RenderJob, control: JobControl): Promise<void> {
    const started = performance.now();
    const id = parseId('generation', job?.generationId);
    if (!id) {
      // Not a generation id: no delivery of this message can ever succeed.
      await control.term();
      return;
    }
    const stages: RenderStageTimes = {};
    const run: JobRun = {
      id,
      generationId: job.generationId,
      control,
      started,
      lease: new LeaseClock(),
      stages,
      observe: (stage, ms) => {
        stages[stage] = (stages[stage] ?? 0) + ms;
        this.deps.onStage?.(stage, ms);
      },
      uploaded: false,
    };
    const doc = await timeStage(run.observe, 'claim', () =>
      this.deps.generations.claim(id, this.workerId, this.deps.leaseMs),
    );
    if (!doc) return this.settleUnclaimed(run);
    // An earlier attempt stored the PDF but could not record it (the database failed over
    // between the upload and complete()): record that PDF. A stored document never ends FAILED,
    // whatever the attempts.
    const stored = doc.attempts > 1 ? await this.storedOutput(doc) : null;
    if (stored) return this.finishCompleted(run, stored.key, stored.version);
    if (doc.attempts > this.deps.maxAttempts) {
      // Earlier attempts died with their worker (e.g. a crash on this very document).
      const error = doc.lastError ?? `Rendering did not finish after ${this.deps.maxAttempts} attempts`;
      return this.finishFailed(run, error, undefined, doc.lastErrorCode ?? 'ATTEMPTS_EXHAUSTED');
    }
    const workspace = doc.workspaceId.toHexString();
    if (!this.throttle.tryStart(workspace)) return this.holdBackCrashingWorkspace(run);
    try {
      await this.renderClaimed(run, doc);
    } finally {
      this.throttle.finish(workspace);
    }
  }

  /**
   * The claim found the generation held by another worker, or final: look again when that
   * lease runs out, or settle what is left of a final one.
   */
  private async settleUnclaimed(run: JobRun): Promise<void> {
    const current = await this.deps.generations.get(run.id);
    if (current?.status === 'PROCESSING' && current.leaseOwner !== null && current.leaseUntil !== null) {
      // Another worker holds a live lease. It may have died a moment ago (this message is
      // its job, redelivered after ack_wait): look again just after the lease runs out, so
      // the takeover does not wait for a sweep. If it is alive it finishes, and the next
      // look finds the row final.
      await run.control.nak(Math.max(100, current.leaseUntil.getTime() - Date.now() + 250));
      this.report(run, 'skipped');
      return;
    }
    // Final already: nothing to do here. A final row whose event never left (crash after
    // the transition) gets it now.
    if (current && current.eventPublished === false) await this.publishEvent(current);
    await run.control.ack();
    this.report(run, 'skipped');
  }

  /**
   * This workspace keeps crashing pages and already has a render running here: its other jobs
   * wait, so they cannot take every page from the other workspaces.
   */
  private async holdBackCrashingWorkspace(run: JobRun): Promise<void> {
    await this.deps.generations.handBack(run.id, this.workerId);
    await run.control.nak(this.throttle.delayMs);
    this.report(run, 'skipped');
  }

  /** Renders a claimed generation under a renewed lease; a failure is retried later or final. */
  private async renderClaimed(run: JobRun, doc: GenerationDoc): Promise<void> {
    this.deps.onStart?.({ generationId: run.generationId, attempt: doc.attempts });
    // Retries wait out their back-off on purpose: only a first attempt's wait is queueing.
    if (doc.attempts === 1) run.observe('queue_wait', Math.max(0, Date.now() - doc.createdAt.getTime()));
    const heartbeat = this.keepLease(run);
    let templateVersion: number | undefined;
    try {
      const { content, version, templateName } = await timeStage(run.observe, 'template', () =>
        this.publishedVersion(doc),
      );
      templateVersion = version;
      const { pdf } = await this.deps.renderer.render(content, doc.data, {
        workspaceId: formatId('workspace', doc.workspaceId),
        templateName,
        onStage: run.observe,
        test: doc.test === true,
      });
      await this.storeAndComplete(run, doc, pdf, version);
    } catch (caught) {
      await this.settleFailure(run, doc, caught, templateVersion);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Renews the lease (and the message's ack deadline) every third of it while rendering. */
  private keepLease(run: JobRun): NodeJS.Timeout {
    return setInterval(
      () => {
        run.control.working();
        const sentAt = performance.now();
        this.deps.generations
          .extendLease(run.id, this.workerId, this.deps.leaseMs)
          .then((held) => {
            if (held) run.lease.confirmed(sentAt);
          })
          .catch(() => {});
      },
      Math.max(1000, Math.floor(this.deps.leaseMs / 3)),
    );
  }

  /** Uploads the PDF and turns the generation COMPLETED, if the lease is still this worker's. */
  private async storeAndComplete(run: JobRun, doc: GenerationDoc, pdf: Buffer, version: number): Promise<void> {
    const key = outputKeyFor(doc);
    if (!(await this.leaseCoversUpload(run))) {
      // Taken over: the new owner renders and uploads it.
      await run.control.ack();
      this.report(run, 'skipped');
      return;
    }
    await withSpan(
      'object store put pdf',
      { kind: SpanKind.CLIENT, attributes: { 'docgen.object.key': key, 'docgen.object.bytes': pdf.length } },
      () =>
        timeStage(run.observe, 'upload', () =>
          this.deps.store.putPdf(key, pdf, {
            downloadFilename: `${formatId('generation', doc._id)}.pdf`,
            metadata: { [TEMPLATE_VERSION_METADATA]: String(version) },
          }),
        ),
    );
    run.uploaded = true;
    await this.finishCompleted(run, key, version);
  }

  /**
   * Records the stored PDF (PROCESSING -> COMPLETED, retried through a failover) and publishes
   * the event. When the row is no longer ours: erased meanwhile, the PDF goes too; completed by
   * this very write whose answer a failover cut off, its event still leaves.
   */
  private async finishCompleted(run: JobRun, key: string, version: number): Promise<void> {
    const { generations } = this.deps;
    const completed = await timeStage(run.observe, 'complete', () =>
      retryTransient(() => generations.complete(run.id, this.workerId, key, version), {
        budgetMs: this.deps.completeRetryBudgetMs ?? COMPLETE_RETRY_BUDGET_MS,
      }),
    );
    if (completed) {
      await timeStage(run.observe, 'event', () => this.publishEvent(completed));
      this.report(run, 'completed');
    } else {
      const current = await generations.get(run.id);
      if (!current) {
        // Erased while rendering (right to erasure): the PDF must not outlive its row.
        await this.deps.store.remove?.(key);
      } else if (current.status === 'COMPLETED' && current.outputKey === key && current.eventPublished === false) {
        await this.publishEvent(current);
      }
    }
    await run.control.ack();
  }

  /** The PDF an earlier attempt stored for this generation, with the version it was rendered from. */
  private async storedOutput(doc: GenerationDoc): Promise<{ key: string; version: number } | null> {
    const key = outputKeyFor(doc);
    // Storage that cannot answer is no answer: the render goes ahead and stores it again.
    const metadata = await this.deps.store.pdfMetadata?.(key).catch(() => null);
    const version = Number(metadata?.[TEMPLATE_VERSION_METADATA]);
    return Number.isInteger(version) && version > 0 ? { key, version } : null;
  }

  /**
   * A worker whose lease was taken over must not overwrite the new owner's PDF (the key is the
   * generation's). Nobody can take the generation over before the lease written last runs out,
   * so a lease confirmed less than half a lease ago still covers the upload (the other half is
   * the margin for the upload and for clocks); an older one is confirmed again before writing.
   * Most renders take far less than half a lease: no database round trip.
   */
  private async leaseCoversUpload(run: JobRun): Promise<boolean> {
    if (performance.now() - run.lease.confirmedAt < this.deps.leaseMs / 2) return true;
    return timeStage(run.observe, 'lease_check', () =>
      this.deps.generations.extendLease(run.id, this.workerId, this.deps.leaseMs),
    );
  }

  /** A failed attempt: final when permanent or the last one, otherwise retried after a back-off. */
  private async settleFailure(
    run: JobRun,
    doc: GenerationDoc,
    caught: unknown,
    templateVersion: number | undefined,
  ): Promise<void> {
    const err = this.crashVerdict(doc, caught);
    const message = errorMessage(err);
    if (run.uploaded) {
      // The PDF is stored; only recording it failed (the database stayed away past
      // COMPLETE_RETRY_BUDGET_MS). Never FAILED: the next attempt finds the PDF and records it.
      this.deps.onError?.(err, run.generationId);
      const delayMs = RENDER_RETRY_DELAYS_MS[0]!;
      await this.deps.generations
        .releaseForRetry(run.id, this.workerId, message, new Date(Date.now() + delayMs), null)
        .catch(() => false);
      await run.control.nak(delayMs);
      this.report(run, 'retried', message);
      return;
    }
    if (isPermanentRenderError(err) || doc.attempts >= this.deps.maxAttempts) {
      await this.finishFailed(run, message, templateVersion, isRenderError(err) ? err.code : 'INTERNAL');
      return;
    }
    this.deps.onError?.(err, run.generationId);
    const delayMs = backoffDelayMs(RENDER_RETRY_BACKOFF, doc.attempts)!;
    const code = isRenderError(err) ? err.code : null;
    await this.deps.generations.releaseForRetry(run.id, this.workerId, message, new Date(Date.now() + delayMs), code);
    await run.control.nak(delayMs);
    this.report(run, 'retried', message);
  }

  /**
   * A browser crash counts against the workspace (crash-throttle.ts); a document that crashed
   * the browser on its previous attempt too is not tried again.
   */
  private crashVerdict(doc: GenerationDoc, err: unknown): unknown {
    if (!isRenderError(err) || err.code !== 'BROWSER_CRASHED') return err;
    this.throttle.recordCrash(doc.workspaceId.toHexString());
    if (doc.lastErrorCode !== 'BROWSER_CRASHED') return err;
    return new RenderError(
      'CRASHED_REPEATEDLY',
      'The document crashed the browser on two attempts and will not be retried; simplify the template (its header and footer especially) and try again',
      { cause: err },
    );
  }

  private report(run: JobRun, outcome: Parameters<RenderOutcomeListener>[0], error?: string): void {
    const stagesMs = Object.fromEntries(
      Object.entries(run.stages).map(([stage, ms]) => [stage, Math.round(ms * 10) / 10]),
    ) as RenderStageTimes;
    const info = { generationId: run.generationId, durationMs: performance.now() - run.started, stagesMs };
    this.deps.onOutcome?.(outcome, error === undefined ? info : { ...info, error });
  }

  /**
   * Counts a final row in the workspace statistics (live generations only: test mode's are kept
   * out of them), publishes its event and records that it left (the outbox flag). A batch item
   * is counted in its batch too (which finishes the batch after its last item), and sends no
   * event of its own when its batch asked for none. The counts are idempotent and the flag is
   * cleared only after all of it, so the outbox sweeper repeats whatever a crash cut short.
   */
  async publishEvent(doc: FinalEventSource): Promise<void> {
    const { stats } = this.deps;
    if (doc.test !== true) await stats?.countGeneration(doc);
    if (doc.batchItemEvents !== false) await this.deps.events.publishFinalEvent(finalEventFor(doc));
    if (doc.batchId !== undefined) await this.deps.batches?.itemFinal(doc);
    await this.deps.generations.markEventPublished(doc._id);
    await stats?.settleGeneration(doc);
  }

  private async finishFailed(
    run: JobRun,
    error: string,
    templateVersion: number | undefined,
    errorCode: string,
  ): Promise<void> {
    const failed = await this.deps.generations.fail(run.id, this.workerId, error, templateVersion, errorCode);
    if (failed) {
      await this.publishEvent(failed);
      this.report(run, 'failed', error);
    }
    await run.control.ack();
  }

  /** The version published now (docs/interface.md#lifecycle: at processing time), or a permanent failure. */
  private async publishedVersion(
    doc: GenerationDoc,
  ): Promise<{ content: TemplateVersionContent; version: number; templateName: string }> {
    const template = doc.templateId ? await this.deps.templates.get(doc.templateId) : null;
    if (!template || !template.workspaceId.equals(doc.workspaceId)) {
      throw new RenderError('TEMPLATE_UNAVAILABLE', `Template "${doc.templateRef}" does not exist`);
    }
    if (template.status === 'ARCHIVED') {
      throw new RenderError('TEMPLATE_UNAVAILABLE', `Template "${doc.templateRef}" (${template.name}) is archived`);
    }
    if (template.publishedVersion === 0) {
      throw new RenderError(
        'TEMPLATE_UNAVAILABLE',
        `Template "${doc.templateRef}" (${template.name}) has no published version`,
      );
    }
    const cacheKey = `${template._id.toHexString()}:${template.publishedVersion}`;
    let content = this.versions.get(cacheKey);
    if (!content) {
      const version = await this.deps.templates.getVersion(template._id, template.publishedVersion);
      if (!version) throw new Error(`Published version ${template.publishedVersion} of ${doc.templateRef} is missing`);
      content = version.content;
      if (this.versions.size >= VERSION_CACHE_SIZE) this.versions.delete(this.versions.keys().next().value!);
      this.versions.set(cacheKey, content);
    }
    return { content, version: template.publishedVersion, templateName: template.name };
  }
}

function errorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 2000 ? `${message.slice(0, 2000)}…` : message;
}
