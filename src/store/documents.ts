// The shape of docgen's MongoDB documents, and the indexes each collection needs.
// Every _id is an ObjectId (public ids are prefix + hex, see src/domain/ids.ts). Correctness
// never depends on multi-document transactions or unique secondary indexes: where an insert
// must happen once, its _id is derived from the natural key (deterministicObjectId).
import { BSON, type Binary, type Db, type Document, type IndexDescription, type ObjectId } from 'mongodb';
import type { JsonObject, TemplateStatus, TemplateVersionContent } from '../domain/template.ts';
import type { SealedSecret } from '../webhooks/secret-box.ts';

export type GenerationStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

/** MongoDB's largest document (BSON bytes). */
export const MAX_BSON_DOCUMENT_BYTES = 16 * 1024 * 1024;

/**
 * Largest generation row accepted at creation, in BSON bytes: what later transitions add
 * (error texts of up to 2000 characters, the output key, lease fields) must still fit.
 */
export const MAX_NEW_GENERATION_BSON_BYTES = MAX_BSON_DOCUMENT_BYTES - 64 * 1024;

/** The size a document takes as BSON (what MongoDB's 16 MiB limit counts, not its JSON size). */
export function bsonSize(doc: Document): number {
  return BSON.calculateObjectSize(doc);
}

export interface WorkspaceDoc {
  _id: ObjectId;
  name: string;
  createdAt: Date;
  /** Generations older than this (seconds since creation) are deleted; absent/null: kept. */
  retentionSeconds?: number | null;
  /** Share of the render fleet while several workspaces have work (absent: 1). src/domain/render-weight.ts */
  renderWeight?: number;
}

export interface ApiKeyDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  name: string;
  scopes: string[];
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  hash: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  rateLimitPerSecond: number | null;
  rateLimitBurst: number | null;
  /** `test` keys make test generations (docs/interface.md#test-mode); absent on older rows: live. */
  mode?: 'live' | 'test';
}

export interface TemplateDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  name: string;
  status: TemplateStatus;
  publishedVersion: number;
  latestVersion: number;
  createdAt: Date;
  updatedAt: Date;
  /**
   * When the first generation of it was made (set before that generation is stored); a used
   * template is never deleted, only archived. Absent on templates used before #31 only:
   * deleting those looks for a generation too.
   */
  usedAt?: Date;
  /** Set while DeleteTemplate runs: generations treat the template as unknown from then on. */
  deletingAt?: Date;
}

/** Who saved a version: a member (their user id) or the operator token (automation). */
export type VersionAuthorDoc = { kind: 'member'; userId: ObjectId } | { kind: 'operator' };

export interface TemplateVersionDoc {
  /** deterministicObjectId(templateId, version): a version number is taken once. */
  _id: ObjectId;
  templateId: ObjectId;
  version: number;
  content: TemplateVersionContent;
  createdAt: Date;
  /** Absent on versions saved before authors were recorded. */
  author?: VersionAuthorDoc;
  /** Absent when none was given. */
  note?: string;
}

export interface GenerationDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  templateId: ObjectId | null;
  /** The id as the client sent it (kept for templates that never existed). */
  templateRef: string;
  templateName: string;
  format: 'PDF';
  status: GenerationStatus;
  data: JsonObject;
  templateVersion: number;
  outputKey: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Outbox: when the render job was last handed to JetStream; null until the first publish. */
  jobPublishedAt: Date | null;
  /** Render attempts started (claims), for the 3-attempt budget across crashes. */
  attempts: number;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  lastError: string | null;
  /** Code of the last transient failure (a RenderError code; absent on rows written before it). */
  lastErrorCode?: string | null;
  /**
   * Made with a test key (docs/interface.md#test-mode): stamped "TEST", seen only by test
   * keys, erased after DOCGEN_TEST_GENERATION_RETENTION, not counted in live statistics.
   * False on live rows; absent on rows written before test mode (live).
   */
  test?: boolean;
  /** Outbox of the final event: false from the final transition until the event is published. */
  eventPublished: boolean | null;
  /** When a render process first claimed it (absent on rows written before it, and while PENDING). */
  pickedUpAt?: Date | null;
  /** Code of the final failure (a RenderError code, INTERNAL otherwise); absent unless FAILED. */
  errorCode?: string | null;
  /** The steps of its story, oldest first (the newest GENERATION_HISTORY_KEPT): the portal's timeline. */
  history?: GenerationHistoryEntry[];
  /** The generation this one renders again (the portal's "Render again"). */
  renderedFrom?: ObjectId | null;
  /** The batch this generation is an item of (`bat_…`); absent for a single generation. */
  batchId?: string;
  /** Its place in the batch's items (0-based): the merged PDF's order, and its counting slot. */
  batchIndex?: number;
  /** false: the batch asked for no per-item `generation.*` events (absent: events as usual). */
  batchItemEvents?: boolean;
}

export type BatchStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED';

/**
 * Many generations from one request (src/batches/). Progress is counted here, one item once:
 * `settled.<index>` is set by the same single-document update that increments the count, so a
 * retried or repeated count of an item matches nothing (no transaction, no scan of the items).
 */
export interface BatchDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  /** Items counted, by index: 'C' completed, 'F' failed. */
  settled: Record<string, 'C' | 'F'>;
  merge: boolean;
  itemEvents: boolean;
  /** false until every item row is written (the create request's last database step). */
  itemsStored: boolean;
  /**
   * The create request's items, resolved (src/batches/batch-items.ts: gzip of JSON), kept only
   * while itemsStored is false so that a create cut off by a crash can be finished from it
   * (src/batches/batch-creation-sweeper.ts); removed by the update that sets itemsStored. Absent
   * on rows written before it, and when it would not fit in a document.
   */
  request?: Binary | null;
  /** The merged PDF (merge: true), set with COMPLETED. */
  outputKey: string | null;
  /** Outbox of `batch.completed`: false from COMPLETED until the event is published. */
  eventPublished: boolean | null;
  /** Made with a test key (docs/interface.md#test-mode): its items are test generations. Absent: live. */
  test?: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * An unfinished generation, as the workspace's queue counts it (src/store/generation-queue-repository.ts).
 * Rows written before the counters lack `counted`, `stored` and `dirtySince`.
 */
export interface GenerationQueueDoc {
  /** The generation's _id. */
  _id: ObjectId;
  workspaceId: ObjectId;
  /** DONE: final or erased, leaving once the counters know. */
  status: 'PENDING' | 'PROCESSING' | 'DONE';
  createdAt: Date;
  /** What the counters hold for it. */
  counted?: 'PENDING' | 'PROCESSING' | null;
  /** false until the generation itself is written (the row comes first). */
  stored?: boolean;
  /** Set by every change, null once the counters are in line: what the sweeper finishes. */
  dirtySince?: Date | null;
}

/** One of a workspace's queue counter documents (QUEUE_COUNT_SHARDS of them). */
export interface GenerationQueueCountsDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  pending: number;
  processing: number;
  /** Changes applied whose row has not moved on yet: the key, and the state it moved to. */
  applied: Array<{ k: string; to: 'PENDING' | 'PROCESSING' | null }>;
}

/** One step of a generation's story (src/store/generations-repository.ts writes them). */
export interface GenerationHistoryEntry {
  /** picked_up: an attempt began; retry: it failed and will be tried again; handed_back: a shutdown returned it. */
  event: 'picked_up' | 'retry' | 'handed_back';
  at: Date;
  error?: string;
  code?: string | null;
}

/** History entries a generation keeps (a few attempts each: picked up, failed). */
export const GENERATION_HISTORY_KEPT = 20;

export interface IdempotencyDoc {
  /** deterministicObjectId(workspaceId, idempotencyKey). */
  _id: ObjectId;
  workspaceId: ObjectId;
  bodyHash: string;
  generationId: ObjectId;
  createdAt: Date;
  expiresAt: Date;
}

export interface RateLimitDoc {
  /** deterministicObjectId('rate', apiKeyId). */
  _id: ObjectId;
  /** GCRA theoretical arrival time, epoch ms. */
  tat: number;
  /** Lets real MongoDB drop idle buckets by TTL. */
  expiresAt: Date;
}

export interface EncryptedSecret {
  v: 1;
  iv: string;
  tag: string;
  data: string;
}

export interface WebhookEndpointDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  url: string;
  events: string[];
  description: string;
  secret: EncryptedSecret;
  previousSecret: EncryptedSecret | null;
  /** Until when previousSecret still signs (24 h after a rotation). */
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  secretRotatedAt: Date | null;
  deletedAt: Date | null;
  /**
   * Opted in to the events of test generations (docs/interface.md#test-mode); absent on
   * older rows: live events only.
   */
  testEvents?: boolean;
}

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'DROPPED';

/** `generation.*`: {generationId[, error]}; `batch.completed`: {batchId, completed, failed}. */
export type DeliveryPayload =
  { generationId: string; error?: string } | { batchId: string; completed: number; failed: number };

export interface DeliveryAttemptDoc {
  number: number;
  attemptedAt: Date;
  statusCode: number;
  error: string;
  durationMs: number;
  /** The first bytes of the answer's body (up to 1 KiB); absent when there was none. */
  responseExcerpt?: string;
}

export interface DeliveryDoc {
  /** deterministicObjectId(eventId, endpointId): one delivery per event and endpoint. */
  _id: ObjectId;
  workspaceId: ObjectId;
  endpointId: ObjectId;
  eventId: ObjectId;
  event: string;
  /** The generation of a `generation.*` event; null for a `batch.completed` one. */
  generationId: ObjectId | null;
  /** The batch of a `batch.completed` event. */
  batchId?: ObjectId;
  /** The event body fields, so every attempt sends the same bytes. */
  payload: DeliveryPayload;
  timestamp: number;
  status: DeliveryStatus;
  /**
   * The most recent attempts (DELIVERY_ATTEMPTS_KEPT), oldest first; each keeps its number.
   * Bounded, so redelivery rounds cannot grow a delivery towards MongoDB's 16 MiB.
   */
  attempts: DeliveryAttemptDoc[];
  /** Attempts made in all rounds (absent on rows written before the cap: attempts.length). */
  attemptCount?: number;
  /** Attempts of the current round (a redeliver starts a new round). */
  roundAttempts: number;
  round: number;
  createdAt: Date;
  updatedAt: Date;
  nextAttemptAt: Date | null;
  /**
   * The body says `"test": true`: a test event sent from the admin plane (its generation does
   * not exist), or the event of a test generation (docs/interface.md#test-mode).
   */
  test?: boolean;
  /**
   * The last recorded attempt until the workspace statistics have counted it (written with the
   * attempt, cleared after counting; the delivery sweeper counts what a crash left here).
   */
  statsDue?: { attempt: number; outcome: 'succeeded' | 'retried' | 'dropped'; at: Date } | null;
}

/** Attempts a delivery keeps (about eight redelivery rounds of six). */
export const DELIVERY_ATTEMPTS_KEPT = 50;

/** Attempts made so far, whatever the stored list kept. */
export function deliveryAttemptsMade(doc: Pick<DeliveryDoc, 'attempts' | 'attemptCount'>): number {
  return doc.attemptCount ?? doc.attempts.length;
}

export interface AssetDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  /** Unique in the workspace: the name-claim row (AssetNameDoc) guarantees it. */
  name: string;
  contentType: string;
  kind: 'image' | 'font' | 'document';
  sizeBytes: number;
  sha256: string;
  /** Object-store key; content-addressed, so a cached copy never goes stale. */
  key: string;
  createdAt: Date;
}

/** deterministicObjectId('asset-name', workspaceId, name) -> the asset holding the name. */
export interface AssetNameDoc {
  _id: ObjectId;
  assetId: ObjectId;
  workspaceId: ObjectId;
  name: string;
  createdAt: Date;
}

/**
 * A workspace's signing certificate (src/admin/certificate-admin.ts): the signer's certificate
 * and issuers as PEM (public), the private key sealed (src/webhooks/secret-box.ts, context the
 * `crt_…` id). The PKCS#12 file and its password are not kept.
 */
export interface CertificateDoc {
  _id: ObjectId;
  workspaceId: ObjectId;
  /** Unique in the workspace: the name-claim row (CertificateNameDoc) guarantees it. */
  name: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  fingerprintSha256: string;
  notBefore: Date;
  notAfter: Date;
  /** The signer's certificate first, then its issuers (PEM). */
  chainPem: string[];
  /** The private key, PKCS#8 PEM, sealed. */
  key: SealedSecret;
  createdAt: Date;
}

/** deterministicObjectId('certificate-name', workspaceId, name) -> the certificate holding the name. */
export interface CertificateNameDoc {
  _id: ObjectId;
  certificateId: ObjectId;
  workspaceId: ObjectId;
  name: string;
  createdAt: Date;
}

export const COLLECTIONS = {
  workspaces: 'workspaces',
  apiKeys: 'api_keys',
  templates: 'templates',
  templateVersions: 'template_versions',
  generations: 'generations',
  batches: 'batches',
  idempotency: 'idempotency_keys',
  rateLimits: 'rate_limits',
  webhookEndpoints: 'webhook_endpoints',
  deliveries: 'deliveries',
  assets: 'assets',
  assetNames: 'asset_names',
  certificates: 'certificates',
  certificateNames: 'certificate_names',
  users: 'users',
  memberships: 'memberships',
  sessions: 'sessions',
  invitations: 'invitations',
  auditEvents: 'audit_events',
  /** Hourly counters of generations and webhook deliveries (src/store/stats-repository.ts). */
  workspaceStats: 'workspace_stats',
  /** One row per unfinished generation: the queue GetWorkspaceStats shows (generations-repository.ts). */
  generationQueue: 'generation_queue',
  /** Per workspace, pending and processing counters (src/store/generation-queue-repository.ts). */
  generationQueueCounts: 'generation_queue_counts',
  /** One row per normalised email, naming its user (src/store/users-repository.ts). */
  userEmails: 'user_emails',
  /** Membership offers to existing accounts, accepted signed in (src/store/pending-invitations-repository.ts). */
  pendingInvitations: 'pending_invitations',
  /** The schema steps applied to this database (src/store/schema.ts). */
  schemaMigrations: 'schema_migrations',
} as const;

/** The indexes of schema step 1, `initial-indexes` (docgen 0.1). Never edit: add a step. */
const INITIAL_INDEXES: Record<string, IndexDescription[]> = {
  [COLLECTIONS.apiKeys]: [
    { key: { hash: 1 }, name: 'hash', unique: true },
    { key: { workspaceId: 1, _id: -1 }, name: 'workspace' },
  ],
  // The retention sweeper's "which workspaces have a retention" (sparse: most have none).
  [COLLECTIONS.workspaces]: [{ key: { retentionSeconds: 1 }, name: 'retention', sparse: true }],
  [COLLECTIONS.templates]: [{ key: { workspaceId: 1, _id: -1 }, name: 'workspace' }],
  [COLLECTIONS.templateVersions]: [{ key: { templateId: 1, version: 1 }, name: 'template_version', unique: true }],
  [COLLECTIONS.generations]: [
    { key: { workspaceId: 1, createdAt: -1, _id: -1 }, name: 'workspace_created' },
    { key: { workspaceId: 1, status: 1, createdAt: -1, _id: -1 }, name: 'workspace_status_created' },
    { key: { workspaceId: 1, templateId: 1, createdAt: -1, _id: -1 }, name: 'workspace_template_created' },
    { key: { status: 1, jobPublishedAt: 1 }, name: 'outbox_jobs' },
    { key: { status: 1, leaseUntil: 1 }, name: 'stale_leases' },
    {
      key: { eventPublished: 1, updatedAt: 1 },
      name: 'outbox_events',
      partialFilterExpression: { eventPublished: false },
    },
  ],
  [COLLECTIONS.idempotency]: [{ key: { expiresAt: 1 }, name: 'ttl', expireAfterSeconds: 0 }],
  [COLLECTIONS.rateLimits]: [{ key: { expiresAt: 1 }, name: 'ttl', expireAfterSeconds: 0 }],
  [COLLECTIONS.webhookEndpoints]: [{ key: { workspaceId: 1, _id: -1 }, name: 'workspace' }],
  [COLLECTIONS.assets]: [{ key: { workspaceId: 1, name: 1 }, name: 'workspace_name' }],
  [COLLECTIONS.deliveries]: [
    { key: { workspaceId: 1, _id: -1 }, name: 'workspace' },
    { key: { generationId: 1, _id: -1 }, name: 'generation' },
    { key: { endpointId: 1, _id: -1 }, name: 'endpoint' },
    // The admin list pages newest first by creation (a delivery's _id is derived): src/store/pagination.ts.
    { key: { workspaceId: 1, createdAt: -1, _id: -1 }, name: 'workspace_created' },
    { key: { generationId: 1, createdAt: -1, _id: -1 }, name: 'generation_created' },
    { key: { endpointId: 1, createdAt: -1, _id: -1 }, name: 'endpoint_created' },
    { key: { status: 1, nextAttemptAt: 1 }, name: 'due' },
  ],
  // Identity (src/store/identity-documents.ts): uniqueness comes from derived _ids, not these.
  [COLLECTIONS.memberships]: [
    { key: { userId: 1 }, name: 'user' },
    { key: { workspaceId: 1, _id: 1 }, name: 'workspace' },
    // Members page in the order they joined.
    { key: { workspaceId: 1, createdAt: 1, _id: 1 }, name: 'workspace_joined' },
  ],
  // Users page newest first by creation (a user's _id is derived from the email).
  [COLLECTIONS.users]: [{ key: { createdAt: -1, _id: -1 }, name: 'created' }],
  [COLLECTIONS.sessions]: [
    { key: { userId: 1 }, name: 'user' },
    { key: { absoluteExpiresAt: 1 }, name: 'ttl', expireAfterSeconds: 0 },
  ],
  [COLLECTIONS.invitations]: [
    { key: { userId: 1 }, name: 'user' },
    { key: { purgeAt: 1 }, name: 'ttl', expireAfterSeconds: 0 },
  ],
  [COLLECTIONS.auditEvents]: [{ key: { workspaceId: 1, _id: -1 }, name: 'workspace' }],
};

/** A numbered, named change to the indexes (docs/deploy.md#schema-steps). */
export interface IndexStep {
  version: number;
  /** kebab-case, e.g. `initial-indexes`; shown in logs and recorded with the step. */
  name: string;
  /** Indexes the step adds, by collection (each under a name no earlier step used). */
  create?: Record<string, IndexDescription[]>;
  /** Indexes the step removes (by name), by collection: a changed index is a new name plus a drop. */
  drop?: Record<string, string[]>;
}

/**
 * Every index change, in order. MongoDB refuses an index whose name exists with another
 * definition, and docgen never redefines one silently: a change is a new step that creates the
 * new definition under a new name and drops the old one (src/store/schema.ts applies them).
 */
export const INDEX_STEPS: readonly IndexStep[] = [
  { version: 1, name: 'initial-indexes', create: INITIAL_INDEXES },
  {
    version: 2,
    name: 'pending-invitations',
    create: {
      [COLLECTIONS.pendingInvitations]: [
        // A signed-in person's offers, and a workspace's (bounded: one per person and workspace).
        { key: { userId: 1 }, name: 'user' },
        { key: { workspaceId: 1, createdAt: 1, _id: 1 }, name: 'workspace_created' },
        { key: { purgeAt: 1 }, name: 'ttl', expireAfterSeconds: 0 },
      ],
    },
  },
  {
    // Test mode (docs/interface.md#test-mode). Both indexes hold test rows only (partial), so
    // they stay as small as a day of test traffic and cost live writes nothing.
    version: 3,
    name: 'test-mode-generations',
    create: {
      [COLLECTIONS.generations]: [
        // A test key's lists, newest first.
        {
          key: { test: 1, workspaceId: 1, createdAt: -1, _id: -1 },
          name: 'workspace_test_created',
          partialFilterExpression: { test: true },
        },
        // The retention sweep's "test generations older than a day", across workspaces.
        { key: { test: 1, createdAt: 1 }, name: 'test_expiry', partialFilterExpression: { test: true } },
      ],
    },
  },
  {
    version: 4,
    name: 'workspace-certificates',
    // Signing certificates list by name in their workspace.
    create: { [COLLECTIONS.certificates]: [{ key: { workspaceId: 1, name: 1 }, name: 'workspace_name' }] },
  },
  {
    version: 5,
    name: 'batches',
    create: {
      // GET /v1/generations?batchId=…, newest first; and a batch's items in item order (the merge).
      // Sparse: single generations have no batchId.
      [COLLECTIONS.generations]: [
        { key: { workspaceId: 1, batchId: 1, createdAt: -1, _id: -1 }, name: 'workspace_batch_created', sparse: true },
        { key: { batchId: 1, batchIndex: 1 }, name: 'batch_items', sparse: true },
      ],
      [COLLECTIONS.batches]: [{ key: { workspaceId: 1, _id: -1 }, name: 'workspace' }],
    },
  },
  {
    version: 6,
    name: 'workspace-stats',
    create: {
      // GetWorkspaceStats reads one workspace's hours of a period: a range on this index.
      [COLLECTIONS.workspaceStats]: [{ key: { workspaceId: 1, hour: 1 }, name: 'workspace_hour' }],
      [COLLECTIONS.generationQueue]: [
        { key: { workspaceId: 1, status: 1, createdAt: 1 }, name: 'workspace_status_created' },
      ],
    },
  },
  {
    // Batches: retention, creates cut off by a crash, the progress gauges (src/batches/).
    version: 7,
    name: 'batch-retention',
    create: {
      [COLLECTIONS.batches]: [
        // The retention sweep: a workspace's finished batches past its retention, and finished
        // test batches older than a day across workspaces.
        { key: { workspaceId: 1, status: 1, createdAt: 1 }, name: 'workspace_status_created' },
        { key: { test: 1, status: 1, createdAt: 1 }, name: 'test_expiry', partialFilterExpression: { test: true } },
        // Creates cut off before every item was stored (few, and only for a moment each).
        { key: { itemsStored: 1, createdAt: 1 }, name: 'unstored', partialFilterExpression: { itemsStored: false } },
        // docgen_batches_in_progress / docgen_batch_items_pending: the PENDING and PROCESSING ones.
        { key: { status: 1, createdAt: 1 }, name: 'status_created' },
      ],
    },
  },
  {
    // The audit log's filters (ListAuditEvents: person, action, time), newest first: each a
    // range on one of these, the time range bounding the trailing _id, in one workspace or
    // across all (the operator). Audit events are few writes (people's changes) for six indexes.
    version: 8,
    name: 'audit-filters',
    create: {
      [COLLECTIONS.auditEvents]: [
        { key: { workspaceId: 1, actor: 1, _id: -1 }, name: 'workspace_actor' },
        { key: { workspaceId: 1, action: 1, _id: -1 }, name: 'workspace_action' },
        { key: { workspaceId: 1, actor: 1, action: 1, _id: -1 }, name: 'workspace_actor_action' },
        { key: { actor: 1, _id: -1 }, name: 'actor' },
        { key: { action: 1, _id: -1 }, name: 'action' },
        { key: { actor: 1, action: 1, _id: -1 }, name: 'actor_action' },
      ],
    },
  },
  {
    // The Overview without scans (docs/architecture.md#workspace-statistics).
    version: 9,
    name: 'overview-without-scans',
    create: {
      // 7 d and 30 d read day rows only: with the span in the key they never touch hour rows.
      [COLLECTIONS.workspaceStats]: [
        { key: { workspaceId: 1, span: 1, hour: 1 }, name: 'workspace_span_hour' },
        // Deleting the hour rows older than three days (StatsRepository.deleteExpiredHours).
        { key: { span: 1, hour: 1 }, name: 'span_hour' },
      ],
      // The outbox sweeper's queue rows not in line with the counters (few: a crash's leftovers).
      [COLLECTIONS.generationQueue]: [
        { key: { dirtySince: 1 }, name: 'dirty', partialFilterExpression: { dirtySince: { $type: 'date' } } },
      ],
      // The Overview's batches in progress, newest first.
      [COLLECTIONS.batches]: [{ key: { workspaceId: 1, status: 1, _id: -1 }, name: 'workspace_status' }],
    },
    drop: { [COLLECTIONS.workspaceStats]: ['workspace_hour'] },
  },
];

/** The indexes every collection has once all steps are applied. */
export function declaredIndexes(steps: readonly IndexStep[] = INDEX_STEPS): Record<string, IndexDescription[]> {
  const declared: Record<string, IndexDescription[]> = {};
  for (const step of steps) {
    for (const [collection, names] of Object.entries(step.drop ?? {})) {
      declared[collection] = (declared[collection] ?? []).filter((index) => !names.includes(index.name ?? ''));
    }
    for (const [collection, indexes] of Object.entries(step.create ?? {})) {
      declared[collection] = [...(declared[collection] ?? []), ...indexes];
    }
  }
  return declared;
}

/** An index the server would not create, with the server's reason. */
export interface IndexRefusal {
  collection: string;
  index: string;
  /**
   * The server's error code (85 IndexOptionsConflict, 86 IndexKeySpecsConflict, 11000 duplicates…);
   * absent for a network failure.
   */
  code?: number | undefined;
  codeName?: string | undefined;
  message: string;
  /** The error as thrown, for classification (a time-out is not a conflict). */
  cause: unknown;
}

/**
 * Creates the declared indexes (idempotent: an identical index is left as it is) and returns
 * the ones the server refused. What a refusal means depends on the server (src/store/schema.ts):
 * on MongoDB it is an error to fix, on the stand-in a known gap.
 */
export async function ensureIndexes(
  db: Db,
  declared: Record<string, IndexDescription[]> = declaredIndexes(),
): Promise<IndexRefusal[]> {
  const refused: IndexRefusal[] = [];
  for (const [collection, indexes] of Object.entries(declared)) {
    for (const { key, ...options } of indexes) {
      try {
        await db.collection(collection).createIndex(key, options);
      } catch (err) {
        const { code, codeName } = err as { code?: unknown; codeName?: unknown };
        refused.push({
          collection,
          index: options.name ?? JSON.stringify(key),
          code: typeof code === 'number' ? code : undefined,
          codeName: typeof codeName === 'string' ? codeName : undefined,
          message: err instanceof Error ? err.message : String(err),
          cause: err,
        });
      }
    }
  }
  return refused;
}
