// Builds the admin plane's domain services from repositories and collaborators. Transport-
// neutral: the admin listener's composition (src/app/admin-services.ts) hands them to the
// Connect handlers (src/rpc/admin-routes.ts), and `docgen dev`'s seeding can use them too.
import { AssetAdmin, type AssetBytesStore } from '../assets/asset-admin.ts';
import type { ApiKeysRepository } from '../store/api-keys-repository.ts';
import type { AssetsRepository } from '../store/assets-repository.ts';
import type { CertificatesRepository } from '../store/certificates-repository.ts';
import type { GenerationService } from '../generations/generation-service.ts';
import type { GenerationsRepository } from '../store/generations-repository.ts';
import type { StatsRepository } from '../store/stats-repository.ts';
import type { BatchesRepository } from '../store/batches-repository.ts';
import { WorkspaceStatsService } from '../stats/workspace-stats.ts';
import type { DeliveriesRepository } from '../store/deliveries-repository.ts';
import type { PageTokens } from '../store/pagination.ts';
import type { TemplatesRepository } from '../store/templates-repository.ts';
import type { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import type { DeliveryJob } from '../queue/messages.ts';
import type { HostLookup } from '../webhooks/address-guard.ts';
import { ApiKeyAdmin, type ApiKeyLimits } from './api-key-admin.ts';
import { CertificateAdmin } from './certificate-admin.ts';
import { DeliveryAdmin } from './delivery-admin.ts';
import { GenerationAdmin } from './generation-admin.ts';
import { TemplateAdmin, type AnalyzeTemplate, type DiagnoseTemplate, type RenderPreview } from './template-admin.ts';
import { WebhookEndpointAdmin } from './webhook-endpoint-admin.ts';
import { WebhookTestEvents } from './webhook-test-event.ts';
import { WorkspaceAdmin } from './workspace-admin.ts';
import type { BatchService } from '../batches/batch-service.ts';
import type { ObjectId } from 'mongodb';
import type { UserDoc } from '../store/identity-documents.ts';

export interface AdminRepositories {
  workspaces: WorkspacesRepository;
  apiKeys: ApiKeysRepository;
  templates: TemplatesRepository;
  webhookEndpoints: WebhookEndpointsRepository;
  deliveries: DeliveriesRepository;
  generations: GenerationsRepository;
  certificates: CertificatesRepository;
  stats: StatsRepository;
  /** Batch rows: erasing an item removes its batch's merged PDF; the Overview's batches in progress. */
  batches: BatchesRepository;
}

export interface AdminPlaneDeps {
  /** The public API's generation service: the Generations screen lists and reads through it. */
  generationService: Pick<GenerationService, 'list' | 'getInAnyWorkspace' | 'create'>;
  /** The public API's batch reads (the Generations screen's batch filter). */
  batchService?: Pick<BatchService, 'get'> | undefined;
  /** The object store: erasing a generation removes its PDF. */
  objects: { remove(key: string): Promise<void>; getObject(key: string): Promise<Buffer> };
  repositories: AdminRepositories;
  /** config.secretKey: seals webhook signing secrets. */
  secretKey: Buffer;
  /** Signs the lists' page tokens (src/store/pagination.ts). */
  pageTokens: PageTokens;
  /** config.webhooks.allowInsecureUrls. */
  allowInsecureWebhookUrls: boolean;
  /** config.webhooks.allowedPorts: webhook URL ports besides 443 and 80. */
  allowedWebhookPorts?: readonly number[] | undefined;
  /** Liquid/declaration/PDF-option checks run before publishing (src/render/liquid). */
  analyzeTemplate: AnalyzeTemplate;
  /** The same checks as diagnostics at their place (content check, the portal's editor). */
  diagnoseTemplate: DiagnoseTemplate;
  /** Renders content to PDF for previews, on a render process (src/render/preview-service.ts). */
  renderPreview: RenderPreview;
  /** Hands a redelivered delivery (`dlv_…`) to the webhook workers. */
  enqueueDelivery: (job: DeliveryJob, msgId: string) => Promise<void>;
  onEnqueueError?: ((deliveryId: string, err: unknown) => void) | undefined;
  /** Workspace assets: rows, bytes (the object store) and config.assets. Without it the
   * AssetService is not served and publishing does not check asset names. */
  assets?:
    | { repository: AssetsRepository; objects: AssetBytesStore; maxBytes: number; workspaceQuotaBytes: number }
    | undefined;
  /** What owners may choose for keys without the operator (config.api); default: the config defaults. */
  apiKeyLimits?: ApiKeyLimits | undefined;
  /** People's names and emails (a template version's author); without it only their ids show. */
  users?: { getMany(ids: ObjectId[]): Promise<UserDoc[]> } | undefined;
  /** Host resolution for webhook URL checks; the system resolver by default. */
  lookup?: HostLookup | undefined;
}

export interface AdminPlane {
  workspaces: WorkspaceAdmin;
  apiKeys: ApiKeyAdmin;
  templates: TemplateAdmin;
  webhookEndpoints: WebhookEndpointAdmin;
  deliveries: DeliveryAdmin;
  assets: AssetAdmin | undefined;
  certificates: CertificateAdmin;
  generations: GenerationAdmin;
  webhookTestEvents: WebhookTestEvents;
  stats: WorkspaceStatsService;
}

export function createAdminPlane(deps: AdminPlaneDeps): AdminPlane {
  const { workspaces, apiKeys, templates, webhookEndpoints, deliveries, generations, certificates, stats, batches } =
    deps.repositories;
  const { pageTokens } = deps;
  const a = deps.assets;
  const assets = a
    ? new AssetAdmin({
        workspaces,
        assets: a.repository,
        objects: a.objects,
        maxBytes: a.maxBytes,
        workspaceQuotaBytes: a.workspaceQuotaBytes,
        pageTokens,
      })
    : undefined;
  const certificateAdmin = new CertificateAdmin({
    workspaces,
    certificates,
    secretKey: deps.secretKey,
    pageTokens,
  });
  return {
    workspaces: new WorkspaceAdmin({ workspaces, pageTokens }),
    apiKeys: new ApiKeyAdmin({ workspaces, apiKeys, pageTokens, limits: deps.apiKeyLimits }),
    templates: new TemplateAdmin({
      workspaces,
      templates,
      analyzeTemplate: deps.analyzeTemplate,
      diagnoseTemplate: deps.diagnoseTemplate,
      renderPreview: deps.renderPreview,
      missingAssets: assets ? (workspaceId, names) => assets.missing(workspaceId, names) : undefined,
      certificateExists: (workspaceId, id) => certificateAdmin.exists(workspaceId, id),
      generations,
      users: deps.users,
      pageTokens,
    }),
    webhookEndpoints: new WebhookEndpointAdmin({
      workspaces,
      endpoints: webhookEndpoints,
      secretKey: deps.secretKey,
      allowInsecureUrls: deps.allowInsecureWebhookUrls,
      allowedPorts: deps.allowedWebhookPorts,
      lookup: deps.lookup,
      pageTokens,
    }),
    webhookTestEvents: new WebhookTestEvents({
      endpoints: webhookEndpoints,
      deliveries,
      enqueueDelivery: deps.enqueueDelivery,
      onEnqueueError: deps.onEnqueueError,
    }),
    deliveries: new DeliveryAdmin({
      workspaces,
      deliveries,
      enqueueDelivery: deps.enqueueDelivery,
      onEnqueueError: deps.onEnqueueError,
      pageTokens,
    }),
    assets,
    certificates: certificateAdmin,
    generations: new GenerationAdmin({
      workspaces,
      generations: deps.generationService,
      rows: generations,
      pdfs: deps.objects,
      erasure: { generations, deliveries, objects: deps.objects },
      batches: deps.batchService,
      batchRows: deps.repositories.batches,
    }),
    stats: new WorkspaceStatsService({ workspaces, stats, generations, batches }),
  };
}
