// The PDF as it passes through the finishing stages: parsed once by pdf-lib for every stage that
// edits objects, serialized once when a stage needs bytes (qpdf, signing) or at the end. Stages
// ask for the form they need; nothing is parsed or written for a stage that does not run.
import { PDFDocument } from 'pdf-lib';

export class WorkingPdf {
  #bytes: Uint8Array | null;
  #doc: PDFDocument | null = null;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  /** The document for editing; bytes taken before are stale afterwards. */
  async document(): Promise<PDFDocument> {
    if (!this.#doc) {
      this.#doc = await PDFDocument.load(this.#bytes!, { updateMetadata: false });
      this.#bytes = null;
    }
    return this.#doc;
  }

  /** The current bytes (the document serialized when it was edited). */
  async bytes(): Promise<Buffer> {
    if (this.#doc) {
      // No object streams: the file stays a classic PDF 1.4 body with a plain cross-reference
      // table, which is what the signature's byte range and the header version expect.
      this.#bytes = await this.#doc.save({ updateFieldAppearances: false, useObjectStreams: false });
      this.#doc = null;
    }
    return Buffer.from(this.#bytes!.buffer, this.#bytes!.byteOffset, this.#bytes!.byteLength);
  }

  /** Replaces the bytes (after a tool that works on files: qpdf, the signer). */
  replace(bytes: Uint8Array): void {
    this.#doc = null;
    this.#bytes = bytes;
  }
}
