// The finishing pipeline: what is done to Chromium's printed PDF before it is stored or
// previewed, as ordered stages (docs/architecture.md#finishing-pipeline):
//
//   metadata      Author, Subject, Keywords (pdf-lib); Title and /Lang come from Chromium
//   first_page    page 1's drawing from the print with the first-page header/footer
//   outline       viewers open the bookmarks Chromium made from the headings (print option)
//   attachments   the e-invoice (validated CII) and workspace assets as associated files
//   conformance   XMP, sRGB output intent, /ID, annotation flags, PDF/UA viewer settings
//   stamp         a line of text over every page or the first; a test generation's "TEST"
//                 over every page (docs/interface.md#test-mode)
//   encryption    AES-256 (qpdf)
//   signature     PAdES B-B, or B-T with a timestamp authority; always last: nothing after it
//                 changes a byte
//   check         reads the produced bytes back and fails the render when a claimed level's
//                 requirement does not hold (read only)
//
// Each stage runs only when the version asks for it, so a render without document settings
// skips the pipeline entirely (needsFinishing), and each is timed as finish_<stage> in the
// render stage histogram. pdf-lib parses the PDF once for all the stages that edit objects and
// serializes it once (working-pdf.ts). The stages' libraries (e-invoice conversion and XSD
// validation, fonts, CMS) are loaded on first use, so a process whose versions use none of
// them does not carry them.
import type { DocumentMetadata, PdfProtection } from '../../domain/document-settings.ts';
import type { JsonValue } from '../../domain/template.ts';
import type { AssetSource } from '../asset-loader.ts';
import { RenderError } from '../render-error.ts';
import { timeStage, type RenderStage, type StageObserver } from '../render-stages.ts';
import { AFRelationship, PDFName } from 'pdf-lib';
import { hasDocumentSettings, type DocumentSettings } from './document-settings.ts';
import type { EInvoiceFile } from './e-invoice.ts';
import type { CertificateSource } from './signing-identity.ts';
import type { TimestampAuthority } from './timestamp.ts';
import { WorkingPdf } from './working-pdf.ts';
import { copyFirstPage, setDocumentMetadata } from './metadata.ts';

export interface FinishingInput {
  metadata: DocumentMetadata;
  protection?: PdfProtection | null | undefined;
  /** The same document printed with the first-page header/footer: its page 1 replaces page 1. */
  firstPage?: Buffer | undefined;
  /** The version's document settings (document-settings.ts); absent ones are off. */
  settings?: DocumentSettings | undefined;
  /** The render's resolved variables (eInvoice.from names one). */
  variables?: Readonly<Record<string, JsonValue>> | undefined;
  /** Whose assets and certificates (`ws_…`). */
  workspaceId?: string | undefined;
  /**
   * A test generation (docs/interface.md#test-mode): "TEST" across every page, on top of the
   * version's own stamp if it has one, drawn before encryption and signing like that one.
   */
  testStamp?: boolean | undefined;
}

export interface FinishingDeps {
  /** Workspace assets for attachments. */
  assets?: AssetSource | undefined;
  /** Decrypted signing identities for `sign.certificate`. */
  certificates?: CertificateSource | undefined;
  /** Makes signatures PAdES B-T. */
  timestamp?: TimestampAuthority | undefined;
  /** Told each stage's time (finish_<stage>). */
  onStage?: StageObserver | undefined;
  /** The signing and XMP clock (tests); default now. */
  now?: (() => Date) | undefined;
}

interface StageContext {
  pdf: WorkingPdf;
  input: FinishingInput;
  settings: DocumentSettings;
  deps: FinishingDeps;
  now: Date;
  eInvoice?: EInvoiceFile;
  /** The bytes the checker reads when encryption made the final ones unreadable to it. */
  unencrypted?: Buffer;
}

interface FinishingStage {
  stage: RenderStage;
  wanted(input: FinishingInput, settings: DocumentSettings): boolean;
  run(ctx: StageContext): Promise<void>;
}

const hasText = (m: DocumentMetadata) => m.author !== '' || m.subject !== '' || m.keywords !== '';

/** The stages in their one order. */
export const FINISHING_STAGES: readonly FinishingStage[] = [
  {
    stage: 'finish_metadata',
    wanted: (input) => hasText(input.metadata),
    run: async (ctx) => setDocumentMetadata(await ctx.pdf.document(), ctx.input.metadata),
  },
  {
    stage: 'finish_first_page',
    wanted: (input) => input.firstPage !== undefined,
    run: async (ctx) => copyFirstPage(await ctx.pdf.document(), ctx.input.firstPage!),
  },
  {
    stage: 'finish_outline',
    wanted: (_, s) => s.outline === true,
    run: async (ctx) => {
      // Chromium wrote /Outlines from the headings (the print's generateDocumentOutline);
      // viewers open with it shown.
      const doc = await ctx.pdf.document();
      if (doc.catalog.has(PDFName.of('Outlines'))) doc.catalog.set(PDFName.of('PageMode'), PDFName.of('UseOutlines'));
    },
  },
  {
    stage: 'finish_attachments',
    wanted: (_, s) => Boolean(s.eInvoice) || (s.attachments?.length ?? 0) > 0,
    run: attach,
  },
  {
    stage: 'finish_conformance',
    wanted: (_, s) => (s.conformance?.length ?? 0) > 0,
    run: async (ctx) =>
      (await import('./conformance.ts')).makeConforming(await ctx.pdf.document(), {
        levels: ctx.settings.conformance!,
        eInvoice: ctx.eInvoice,
        now: ctx.now,
      }),
  },
  {
    stage: 'finish_stamp',
    wanted: (input, s) => Boolean(s.stamp) || input.testStamp === true,
    run: async (ctx) => {
      const { drawStamp, testStampFor } = await import('./stamp.ts');
      const doc = await ctx.pdf.document();
      if (ctx.settings.stamp) await drawStamp(doc, ctx.settings.stamp);
      if (ctx.input.testStamp === true) await drawStamp(doc, testStampFor(ctx.settings.stamp));
    },
  },
  {
    stage: 'finish_encryption',
    wanted: (input) => Boolean(input.protection),
    run: async (ctx) => {
      const plain = await ctx.pdf.bytes();
      if ((ctx.settings.conformance?.length ?? 0) > 0) ctx.unencrypted = plain;
      ctx.pdf.replace(await (await import('./encryption.ts')).encryptPdf(plain, ctx.input.protection!));
    },
  },
  {
    stage: 'finish_signature',
    wanted: (_, s) => Boolean(s.sign),
    run: sign,
  },
  {
    stage: 'finish_check',
    wanted: (_, s) => (s.conformance?.length ?? 0) > 0,
    run: async (ctx) => {
      const bytes = ctx.unencrypted ?? (await ctx.pdf.bytes());
      const { checkConformance } = await import('./conformance-check.ts');
      const failures = await checkConformance(bytes, {
        levels: ctx.settings.conformance!,
        eInvoiceFileName: ctx.eInvoice?.fileName,
      });
      if (failures.length > 0) {
        const list = failures.slice(0, 5).map((f) => `${f.rule}: ${f.message}`);
        const more = failures.length > 5 ? `; and ${failures.length - 5} more` : '';
        throw new RenderError(
          'NOT_CONFORMING',
          `The PDF does not meet ${ctx.settings.conformance!.join(', ')}: ${list.join('; ')}${more}`,
        );
      }
    },
  },
];

/** True when the version asks for any stage (a plain render skips the pipeline). */
export function needsFinishing(input: FinishingInput): boolean {
  const settings = input.settings ?? {};
  return (
    input.firstPage !== undefined ||
    input.testStamp === true ||
    Boolean(input.protection) ||
    hasText(input.metadata) ||
    hasDocumentSettings(settings)
  );
}

/** Runs the stages the version asks for, in order; throws RenderError. */
export async function finishPdf(pdf: Buffer, input: FinishingInput, deps: FinishingDeps = {}): Promise<Buffer> {
  const settings = input.settings ?? {};
  const ctx: StageContext = { pdf: new WorkingPdf(pdf), input, settings, deps, now: deps.now?.() ?? new Date() };
  const steps = FINISHING_STAGES.filter((step) => step.wanted(input, settings));
  let pdfOut: Buffer | undefined;
  for (const [i, step] of steps.entries()) {
    await timeStage(deps.onStage, step.stage, async () => {
      await step.run(ctx);
      // The last stage's time includes writing the edited document out, so that the stages'
      // times add up to what finishing costs.
      if (i === steps.length - 1) pdfOut = await ctx.pdf.bytes();
    });
  }
  return pdfOut ?? ctx.pdf.bytes();
}

async function attach(ctx: StageContext): Promise<void> {
  const { settings, input, deps } = ctx;
  const names = settings.attachments ?? [];
  const [eInvoice, assets] = await Promise.all([
    settings.eInvoice
      ? import('./e-invoice.ts').then((m) => m.prepareEInvoice(settings.eInvoice!, input.variables ?? {}))
      : undefined,
    names.length > 0 ? loadAssets(deps, input.workspaceId, names) : undefined,
  ]);
  const files: Array<{
    name: string;
    bytes: Uint8Array;
    mimeType: string;
    relationship: AFRelationship;
    description: string;
  }> = [];
  if (eInvoice) {
    ctx.eInvoice = eInvoice;
    files.push({
      name: eInvoice.fileName,
      bytes: eInvoice.xml,
      mimeType: 'text/xml',
      relationship: AFRelationship[eInvoice.relationship],
      description: `${settings.eInvoice!.standard} ${settings.eInvoice!.profile} invoice (CII)`,
    });
  }
  for (const name of names) {
    const asset = assets!.get(name)!;
    if (files.some((f) => f.name === name))
      throw new RenderError(
        'INVALID_TEMPLATE',
        `attachments names ${JSON.stringify(name)}, the e-invoice's own file name`,
      );
    files.push({
      name,
      bytes: asset.bytes,
      mimeType: asset.contentType,
      relationship: AFRelationship.Supplement,
      description: name,
    });
  }
  const doc = await ctx.pdf.document();
  // The EmbeddedFiles name tree's keys must be sorted.
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const f of files) {
    await doc.attach(f.bytes, f.name, {
      mimeType: f.mimeType,
      description: f.description,
      creationDate: ctx.now,
      modificationDate: ctx.now,
      afRelationship: f.relationship,
    });
  }
}

async function loadAssets(deps: FinishingDeps, workspaceId: string | undefined, names: readonly string[]) {
  if (!deps.assets || !workspaceId)
    throw new RenderError('MISSING_ASSET', 'This renderer has no workspace assets; attachments cannot be used here');
  return deps.assets.load(workspaceId, names);
}

async function sign(ctx: StageContext): Promise<void> {
  const { settings, input, deps } = ctx;
  const sign = settings.sign!;
  if (!deps.certificates || !input.workspaceId)
    throw new RenderError(
      'SIGNING_FAILED',
      'This render host has no certificate store; signed templates cannot render here',
    );
  const [{ addSignaturePlaceholder, PadesSigner }, { SignPdf }, { checkValidity }] = await Promise.all([
    import('./pades.ts'),
    import('@signpdf/signpdf'),
    import('./signing-identity.ts'),
  ]);
  const identity = await deps.certificates.identity(input.workspaceId, sign.certificate);
  checkValidity(identity, ctx.now, `The signing certificate ${sign.certificate}`);
  addSignaturePlaceholder(await ctx.pdf.document(), identity, {
    reason: sign.reason ?? '',
    location: sign.location ?? '',
    at: ctx.now,
    timestamped: deps.timestamp !== undefined,
  });
  const unsigned = await ctx.pdf.bytes();
  // @signpdf finds the byte ranges and writes the CMS into /Contents; nothing changes after it.
  ctx.pdf.replace(await new SignPdf().sign(unsigned, new PadesSigner(identity, deps.timestamp), ctx.now));
}
