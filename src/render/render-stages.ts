// The stages of one render, timed where they happen and reported to whoever asks (the render
// role's metrics, docgen_render_stage_duration_seconds; the benchmarks' stage columns). State is
// passed explicitly: a render that is given no observer times nothing.
//
//   queue_wait           generation created -> claimed by a render worker (first attempts only)
//   claim                the conditional claim (database)
//   template             the published version: template row, version (cached per worker)
//   page_wait            waiting for one of the process's job pages (render-slots.ts)
//   liquid               variables + Liquid in a worker process
//   assets               workspace assets the document names (database/object store)
//   header_footer_check  loading a header/footer that could load something (header-footer-check.ts)
//   set_content          the document into the page, load event, fonts
//   print                Page.printToPDF
//   finish_*             the finishing pipeline's stages (src/render/finishing/), each only when a
//                        version asks for it: finish_metadata, finish_first_page, finish_outline,
//                        finish_attachments, finish_conformance, finish_stamp, finish_encryption,
//                        finish_signature, finish_check (the conformance checker)
//   lease_check          confirming the lease before writing, when it was last confirmed more
//                        than half a lease ago (database); most renders skip it
//   upload               the PDF into the object store
//   complete             the final state (database)
//   event                the final-state event: publish + outbox flag (queue, database)

export const RENDER_STAGES = [
  'queue_wait',
  'claim',
  'template',
  'page_wait',
  'liquid',
  'assets',
  'header_footer_check',
  'set_content',
  'print',
  'finish_metadata',
  'finish_first_page',
  'finish_outline',
  'finish_attachments',
  'finish_conformance',
  'finish_stamp',
  'finish_encryption',
  'finish_signature',
  'finish_check',
  'lease_check',
  'upload',
  'complete',
  'event',
] as const;

export type RenderStage = (typeof RENDER_STAGES)[number];

/** Milliseconds per stage of one render (a stage run twice, e.g. retried, adds up). */
export type RenderStageTimes = Partial<Record<RenderStage, number>>;

/** Told how long each stage took, in milliseconds. Must not throw. */
export type StageObserver = (stage: RenderStage, ms: number) => void;

/** Runs `step`, telling `observer` how long it took (also when it fails). */
export async function timeStage<T>(
  observer: StageObserver | undefined,
  stage: RenderStage,
  step: () => Promise<T>,
): Promise<T> {
  if (!observer) return step();
  const started = performance.now();
  try {
    return await step();
  } finally {
    observer(stage, performance.now() - started);
  }
}
