// @docgen/client: docgen's public API over REST, with no dependencies. The Connect/gRPC entry
// point is `@docgen/client/connect`.
export { DocgenClient, type DocgenClientOptions } from './client.ts';
export { DocgenError, GenerationTimeoutError, WebhookVerificationError, type FieldIssue } from './errors.ts';
export {
  Generations,
  MAX_WAIT_SECONDS,
  type CreateAndWaitOptions,
  type CreateOptions,
  type RequestOptions,
} from './generations.ts';
export { Batches, type CreateBatchOptions } from './batches.ts';
export {
  DEFAULT_TOLERANCE_SECONDS,
  Webhooks,
  verifyWebhook,
  type VerifyOptions,
  type WebhookHeaders,
} from './webhooks.ts';
export type * from './types.ts';
export { VERSION } from './version.ts';
