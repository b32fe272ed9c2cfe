// In-memory stand-ins for the ports of the render pipeline (src/render/render-pipeline.ts):
// the document renderer, the PDF store, the final-event publisher and the queue's job
// control. The pipeline's logic and the repositories under it stay real.
import type { JsonObject, TemplateVersionContent } from '../../src/domain/template.ts';
import type { FinalEvent } from '../../src/queue/messages.ts';
import type {
  DocumentRendererLike,
  FinalEventPublisher,
  JobControl,
  PdfStore,
} from '../../src/render/render-pipeline.ts';

/** A renderer that answers from a script: each call takes the next step (the last repeats). */
export class ScriptedRenderer implements DocumentRendererLike {
  readonly calls: Array<{ content: TemplateVersionContent; variables: JsonObject }> = [];
  private readonly steps: Array<() => Promise<{ pdf: Buffer }>>;

  constructor(...steps: Array<Error | Buffer | (() => Promise<{ pdf: Buffer }>)>) {
    this.steps = steps.map((step) => {
      if (step instanceof Error) return () => Promise.reject(step);
      if (Buffer.isBuffer(step)) return () => Promise.resolve({ pdf: step });
      return step;
    });
  }

  render(content: TemplateVersionContent, variables: JsonObject): Promise<{ pdf: Buffer }> {
    this.calls.push({ content, variables });
    const step = this.steps[Math.min(this.calls.length - 1, this.steps.length - 1)];
    return step ? step() : Promise.resolve({ pdf: Buffer.from('%PDF-1.7 fake') });
  }
}

export class MemoryPdfStore implements PdfStore {
  readonly objects = new Map<string, Buffer>();
  readonly metadata = new Map<string, Record<string, string>>();
  async putPdf(key: string, pdf: Buffer, options?: { metadata?: Record<string, string> }): Promise<void> {
    this.objects.set(key, pdf);
    this.metadata.set(key, { ...options?.metadata });
  }
  async remove(key: string): Promise<void> {
    this.objects.delete(key);
    this.metadata.delete(key);
  }
  async pdfMetadata(key: string): Promise<Record<string, string> | null> {
    return this.objects.has(key) ? (this.metadata.get(key) ?? {}) : null;
  }
}

/** Final events as the stream would hold them; the next `failures` publishes throw. */
export class MemoryEventStream implements FinalEventPublisher {
  readonly events: FinalEvent[] = [];
  failures = 0;
  async publishFinalEvent(event: FinalEvent): Promise<void> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('broker unavailable');
    }
    this.events.push(event);
  }
  for(generationId: string): FinalEvent[] {
    return this.events.filter((e) => e.generationId === generationId);
  }
}

/** What the pipeline did with the message: ack, nak (with its delay) or term. */
export class RecordingJobControl implements JobControl {
  readonly calls: string[] = [];
  working(): void {}
  ack(): void {
    this.calls.push('ack');
  }
  nak(delayMs: number): void {
    this.calls.push(`nak ${delayMs}`);
  }
  term(): void {
    this.calls.push('term');
  }
}
