// Webhook endpoints (docs/interface.md#webhooks). The signing secret is generated here, returned by create
// and rotate only, and stored sealed (AES-256-GCM) - never in plain text.
import { ObjectId } from 'mongodb';
import { DomainError, notFound, validationError, type FieldIssue } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import type { WebhookEndpointDoc } from '../store/documents.ts';
import type { Page, PageInput, PageTokens } from '../store/pagination.ts';
import type { WebhookEndpointsRepository } from '../store/webhook-endpoints-repository.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { checkWebhookUrl, type HostLookup } from '../webhooks/address-guard.ts';
import { generateWebhookSecret, sealSecret, webhookSecretContext } from '../webhooks/secret-box.ts';
import { PREVIOUS_SECRET_VALIDITY_MS, WEBHOOK_EVENTS } from '../webhooks/signing.ts';
import { quoteId, requireId, requireWorkspace } from '../domain/input.ts';

const MAX_DESCRIPTION = 500;

export interface WebhookEndpointView {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  description: string;
  createdAt: Date;
  secretRotatedAt: Date | null;
  /** Also receives the events of test generations (docs/interface.md#test-mode). */
  testEvents: boolean;
}

export interface CreateWebhookEndpointInput {
  workspaceId: string;
  url: string;
  events: string[];
  description?: string | undefined;
  /** Opt in to the events of test generations; default false. */
  testEvents?: boolean | undefined;
}

export interface WebhookEndpointAdminDeps {
  workspaces: WorkspacesRepository;
  endpoints: WebhookEndpointsRepository;
  /** DOCGEN_SECRET_KEY (32 bytes). */
  secretKey: Buffer;
  /** DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: http:// and private/loopback hosts. */
  allowInsecureUrls: boolean;
  /** DOCGEN_WEBHOOK_ALLOWED_PORTS: URL ports besides 443 and 80. */
  allowedPorts?: readonly number[] | undefined;
  /** Host resolution for the URL check; the system resolver by default. */
  lookup?: HostLookup | undefined;
  pageTokens: PageTokens;
}

export function toWebhookEndpointView(doc: WebhookEndpointDoc): WebhookEndpointView {
  return {
    id: formatId('webhookEndpoint', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    url: doc.url,
    events: [...doc.events],
    description: doc.description,
    createdAt: doc.createdAt,
    secretRotatedAt: doc.secretRotatedAt,
    testEvents: doc.testEvents === true,
  };
}

export class WebhookEndpointAdmin {
  private readonly deps: WebhookEndpointAdminDeps;
  constructor(deps: WebhookEndpointAdminDeps) {
    this.deps = deps;
  }

  async create(input: CreateWebhookEndpointInput): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
    const issues: FieldIssue[] = [];
    const events = checkEvents(input.events, issues);
    const description = typeof input.description === 'string' ? input.description.trim() : '';
    if (description.length > MAX_DESCRIPTION)
      issues.push({ field: 'description', issue: `must be at most ${MAX_DESCRIPTION} characters` });
    const url = typeof input.url === 'string' ? input.url.trim() : '';
    if (url === '') issues.push({ field: 'url', issue: 'is required' });
    else {
      const problems = await checkWebhookUrl(url, {
        allowInsecure: this.deps.allowInsecureUrls,
        allowedPorts: this.deps.allowedPorts,
        lookup: this.deps.lookup,
      });
      for (const problem of problems) issues.push({ field: 'url', issue: problem });
    }
    if (issues.length > 0) throw validationError(issues);
    const workspace = await requireWorkspace(this.deps.workspaces, input.workspaceId);

    const id = new ObjectId();
    const secret = generateWebhookSecret();
    const doc: WebhookEndpointDoc = {
      _id: id,
      workspaceId: workspace._id,
      url,
      events,
      description,
      secret: sealSecret(secret, this.deps.secretKey, webhookSecretContext(id)),
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdAt: new Date(),
      secretRotatedAt: null,
      deletedAt: null,
      testEvents: input.testEvents === true,
    };
    await this.deps.endpoints.insert(doc);
    return { endpoint: toWebhookEndpointView(doc), secret };
  }

  async list(workspaceId: string, input?: PageInput): Promise<Page<WebhookEndpointView>> {
    const page = this.deps.pageTokens.request(input, { list: 'webhookEndpoints', filters: { workspace: workspaceId } });
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const result = await this.deps.endpoints.list(workspace._id, page);
    return { items: result.items.map(toWebhookEndpointView), nextPageToken: result.nextPageToken };
  }

  /** Soft delete: the endpoint stops receiving events; its past deliveries stay readable. */
  async delete(id: string): Promise<void> {
    const objectId = requireId('webhookEndpoint', id, 'id', 'Webhook endpoint');
    if (!(await this.deps.endpoints.delete(objectId))) throw notFound(`Webhook endpoint ${quoteId(id)}`);
  }

  /** Issues a new secret; the current one keeps signing (Standard Webhooks header) for 24 h. */
  async rotate(id: string): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
    const objectId = requireId('webhookEndpoint', id, 'id', 'Webhook endpoint');
    const current = await this.deps.endpoints.get(objectId);
    if (!current) throw notFound(`Webhook endpoint ${quoteId(id)}`);
    const secret = generateWebhookSecret();
    // The current sealed value moves over as is: same endpoint, same context, no need to open it.
    const after = await this.deps.endpoints.rotateSecret(
      objectId,
      sealSecret(secret, this.deps.secretKey, webhookSecretContext(objectId)),
      current.secret,
      new Date(Date.now() + PREVIOUS_SECRET_VALIDITY_MS),
    );
    if (!after) {
      if (!(await this.deps.endpoints.get(objectId))) throw notFound(`Webhook endpoint ${quoteId(id)}`);
      throw new DomainError(
        'CONFLICT',
        'The secret was rotated concurrently by another request; rotate again if needed',
      );
    }
    return { endpoint: toWebhookEndpointView(after), secret };
  }
}

function checkEvents(value: unknown, issues: FieldIssue[]): string[] {
  const events: string[] = [];
  for (const raw of Array.isArray(value) ? value : []) {
    const event = typeof raw === 'string' ? raw.trim() : '';
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(event)) {
      issues.push({
        field: 'events',
        issue: `unknown event ${JSON.stringify(raw)}; known events: ${WEBHOOK_EVENTS.join(', ')}`,
      });
    } else if (!events.includes(event)) events.push(event);
  }
  if (events.length === 0 && !issues.some((i) => i.field === 'events')) {
    issues.push({ field: 'events', issue: `select at least one event (${WEBHOOK_EVENTS.join(', ')})` });
  }
  return events;
}
