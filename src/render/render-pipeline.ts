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
import type { GenerationsRepository } from '../store/generations-repository.ts';
import type { TemplatesRepository } from '../store/templates-repository.ts';
import { generationObjectKey } from '../generations/generation-erasure.ts';
import { RenderError, isRenderError } from './render-error.ts';
import { CrashThrottle } from './crash-throttle.ts';
import { timeStage, type StageObserver } from './render-stages.ts';

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
    options?: { workspaceId?: string; templateName?: string; onStage?: StageObserver | undefined },
  ): Promise<{ pdf: Buffer }>;
}

export interface PdfStore {
  putPdf(key: string, pdf: Buffer, options: { downloadFilename: string }): Promise<void>;
  /** Removes a PDF whose generation was erased while it rendered. */
  remove?(key: string): Promise<void>;
}

export interface FinalEventPublisher {
  publishFinalEvent(event: FinalEvent): Promise<void>;
}

export interface RenderOutcomeListener {
  (
    outcome: 'completed' | 'failed' | 'retried' | 'skipped',
    info: { generationId: string; durationMs: number; error?: string },
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

  async process(job: RenderJob, control: JobControl): Promise<void> {
    const started = performance.now();
    const id = parseId('generation', job?.generationId);
    if (!id) {
      await control.term();
      return;
    }
    const { generations, onStage } = this.deps;
    // When the lease was last written for this worker (claim, heartbeat), taken before the write
    // was sent: it runs until at least leaseMs after this moment.
    let leaseConfirmedAt = performance.now();
    const doc = await timeStage(onStage, 'claim', () => generations.claim(id, this.workerId, this.deps.leaseMs));
    if (!doc) {
      const current = await generations.get(id);
      if (current?.status === 'PROCESSING' && current.leaseOwner !== null && current.leaseUntil !== null) {
        // Another worker holds a live lease. It may have died a moment ago (this message is
        // its job, redelivered after ack_wait): look again just after the lease runs out, so
        // the takeover does not wait for a sweep. If it is alive it finishes, and the next
        // look finds the row final.
        await control.nak(Math.max(100, current.leaseUntil.getTime() - Date.now() + 250));
        this.deps.onOutcome?.('skipped', { generationId: job.generationId, durationMs: performance.now() - started });
        return;
      }
      // Final already: nothing to do here. A final row whose event never left (crash after
      // the transition) gets it now.
      if (current && current.eventPublished === false) await this.publishEvent(current);
      await control.ack();
      this.deps.onOutcome?.('skipped', { generationId: job.generationId, durationMs: performance.now() - started });
      return;
    }

    if (doc.attempts > this.deps.maxAttempts) {
      // Earlier attempts died with their worker (e.g. a crash on this very document).
      const error = doc.lastError ?? `Rendering did not finish after ${this.deps.maxAttempts} attempts`;
      await this.finishFailed(id, error, undefined, control, started, job.generationId);
      return;
    }

    const workspace = doc.workspaceId.toHexString();
    if (!this.throttle.tryStart(workspace)) {
      // This workspace keeps crashing pages and already has a render running here: its other
      // jobs wait, so they cannot take every page from the other workspaces.
      await generations.handBack(id, this.workerId);
      await control.nak(this.throttle.delayMs);
      this.deps.onOutcome?.('skipped', { generationId: job.generationId, durationMs: performance.now() - started });
      return;
    }
    this.deps.onStart?.({ generationId: job.generationId, attempt: doc.attempts });
    // Retries wait out their back-off on purpose: only a first attempt's wait is queueing.
    if (doc.attempts === 1) onStage?.('queue_wait', Math.max(0, Date.now() - doc.createdAt.getTime()));
    const heartbeat = setInterval(
      () => {
        control.working();
        const sentAt = performance.now();
        generations
          .extendLease(id, this.workerId, this.deps.leaseMs)
          .then((held) => {
            if (held) leaseConfirmedAt = Math.max(leaseConfirmedAt, sentAt);
          })
          .catch(() => {});
      },
      Math.max(1000, Math.floor(this.deps.leaseMs / 3)),
    );
    let templateVersion: number | undefined;
    try {
      const { content, version, templateName } = await timeStage(onStage, 'template', () => this.publishedVersion(doc));
      templateVersion = version;
      const { pdf } = await this.deps.renderer.render(content, doc.data, {
        workspaceId: formatId('workspace', doc.workspaceId),
        templateName,
        onStage,
      });
      const key = outputKeyFor(doc);
      // A worker whose lease was taken over must not overwrite the new owner's PDF (the key
      // is the generation's). Nobody can take the generation over before the lease written last
      // runs out, so a lease confirmed less than half a lease ago still covers the upload (the
      // other half is the margin for the upload and for clocks); an older one is confirmed again
      // before writing. Most renders take far less than half a lease: no database round trip.
      const leaseIsFresh = performance.now() - leaseConfirmedAt < this.deps.leaseMs / 2;
      if (
        !leaseIsFresh &&
        !(await timeStage(onStage, 'lease_check', () => generations.extendLease(id, this.workerId, this.deps.leaseMs)))
      ) {
        await control.ack();
        this.deps.onOutcome?.('skipped', { generationId: job.generationId, durationMs: performance.now() - started });
        return;
      }
      await withSpan(
        'object store put pdf',
        { kind: SpanKind.CLIENT, attributes: { 'docgen.object.key': key, 'docgen.object.bytes': pdf.length } },
        () =>
          timeStage(onStage, 'upload', () =>
            this.deps.store.putPdf(key, pdf, { downloadFilename: `${formatId('generation', doc._id)}.pdf` }),
          ),
      );
      const completed = await timeStage(onStage, 'complete', () =>
        generations.complete(id, this.workerId, key, version),
      );
      if (completed) {
        await timeStage(onStage, 'event', () => this.publishEvent(completed));
        this.deps.onOutcome?.('completed', { generationId: job.generationId, durationMs: performance.now() - started });
      } else if (!(await generations.get(id))) {
        // Erased while rendering (right to erasure): the PDF must not outlive its row.
        await this.deps.store.remove?.(key);
      }
      await control.ack();
    } catch (caught) {
      let err = caught;
      if (isRenderError(err) && err.code === 'BROWSER_CRASHED') {
        this.throttle.recordCrash(workspace);
        if (doc.lastErrorCode === 'BROWSER_CRASHED') {
          err = new RenderError(
            'CRASHED_REPEATEDLY',
            'The document crashed the browser on two attempts and will not be retried; simplify the template (its header and footer especially) and try again',
            { cause: err },
          );
        }
      }
      const message = errorMessage(err);
      if (isPermanentRenderError(err) || doc.attempts >= this.deps.maxAttempts) {
        await this.finishFailed(id, message, templateVersion, control, started, job.generationId);
      } else {
        this.deps.onError?.(err, job.generationId);
        const delayMs = backoffDelayMs(RENDER_RETRY_BACKOFF, doc.attempts)!;
        const code = isRenderError(err) ? err.code : null;
        await generations.releaseForRetry(id, this.workerId, message, new Date(Date.now() + delayMs), code);
        await control.nak(delayMs);
        this.deps.onOutcome?.('retried', {
          generationId: job.generationId,
          durationMs: performance.now() - started,
          error: message,
        });
      }
    } finally {
      clearInterval(heartbeat);
      this.throttle.finish(workspace);
    }
  }

  /** Publishes a final row's event and records that it left (the outbox flag). */
  async publishEvent(doc: GenerationDoc): Promise<void> {
    await this.deps.events.publishFinalEvent(finalEventFor(doc));
    await this.deps.generations.markEventPublished(doc._id);
  }

  private async finishFailed(
    id: ObjectId,
    error: string,
    templateVersion: number | undefined,
    control: JobControl,
    started: number,
    generationId: string,
  ) {
    const failed = await this.deps.generations.fail(id, this.workerId, error, templateVersion);
    if (failed) {
      await this.publishEvent(failed);
      this.deps.onOutcome?.('failed', { generationId, durationMs: performance.now() - started, error });
    }
    await control.ack();
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
