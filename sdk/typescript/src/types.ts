// The JSON shapes of docgen's public API (docs/interface.md in the docgen repository), as the
// REST answers carry them.

export type GenerationStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

/** One rendering of a template; exactly the interface's eleven fields. */
export interface Generation {
  /** `gen_…` */
  id: string;
  /** `ws_…` */
  workspaceId: string;
  /** As sent in the create request. */
  templateId: string;
  /** `""` when the template id named no template of the workspace. */
  templateName: string;
  format: 'PDF';
  status: GenerationStatus;
  /** The request's `variables`, exactly as submitted. */
  data: Record<string, unknown>;
  /** COMPLETED only: a presigned URL minted by the read that returned it (1 hour by default). */
  outputUrl: string | null;
  /** FAILED only: what went wrong, in words. */
  error: string | null;
  /** RFC 3339, UTC, milliseconds. */
  createdAt: string;
  updatedAt: string;
}

export interface CreateGenerationInput {
  /** `tpl_…`, 1 to 256 characters. */
  templateId: string;
  /** Values of the template's declared variables; default `{}`. */
  variables?: Record<string, unknown>;
  /** `"pdf"` only. */
  format?: 'pdf';
}

/** Query filters of `GET /v1/generations`. */
export interface ListGenerationsFilters {
  status?: GenerationStatus;
  templateId?: string;
  /** Only the items of this batch (`bat_…`). */
  batchId?: string;
  /** Created at or after (a Date, or an RFC 3339 string with a zone). */
  createdAfter?: Date | string;
  /** Created before. */
  createdBefore?: Date | string;
  /** Generations per page request, 1 to 100 (default 20); the iterator fetches every page either way. */
  pageSize?: number;
}

export interface GenerationPage {
  generations: Generation[];
  /** `null` on the last page. */
  nextPageToken: string | null;
}

export type BatchStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED';

/** Many generations from one request (`POST /v1/batches`). */
export interface Batch {
  /** `bat_…` */
  id: string;
  /** COMPLETED once every item is final. */
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  /** With `merge: true`, once COMPLETED: one PDF of the completed items in item order. */
  outputUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface BatchItem {
  templateId: string;
  variables?: Record<string, unknown>;
}

export interface CreateBatchInput {
  /** 1 to 1,000 items (the server's limit is configurable). */
  items: BatchItem[];
  /** Also produce one PDF of all completed items. */
  merge?: boolean;
  /** `false`: no per-item `generation.*` webhook events, only `batch.completed`. */
  itemEvents?: boolean;
}

/** A verified webhook delivery's body. */
export type WebhookEvent =
  | {
      event: 'generation.completed';
      payload: { generationId: string };
      /** Unix seconds of the event (the same on every attempt). */
      timestamp: number;
      /** A test event sent from the admin plane: its generationId names no generation. */
      test?: true;
    }
  | { event: 'generation.failed'; payload: { generationId: string; error: string }; timestamp: number; test?: true }
  | { event: 'batch.completed'; payload: { batchId: string; completed: number; failed: number }; timestamp: number };
