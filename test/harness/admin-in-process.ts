// The admin listener's services in this process, called through connect's createRouterTransport:
// the real composition (src/app/admin-services.ts) and routes (src/rpc/admin-routes.ts, with the
// access interceptor) on the in-process stack's MongoDB stand-in. In memory only at the edges
// where docgen talks to other processes: asset bytes (S3), delivery jobs (NATS) and previews
// (a render process). No HTTP server, Chromium or nats-server.
import { randomBytes } from 'node:crypto';
import { createRouterTransport, type CallOptions } from '@connectrpc/connect';
import { ObjectId } from 'mongodb';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import type { ApiKeyLimits } from '../../src/admin/api-key-admin.ts';
import { createAdminServices } from '../../src/app/admin-services.ts';
import { adminClientsOn, type AdminClients } from '../../src/cli/admin/admin-client.ts';
import { formatId } from '../../src/domain/ids.ts';
import { createIdentityRepositories } from '../../src/identity/identity.ts';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import type { DeliveryJob } from '../../src/queue/messages.ts';
import { registerAdminRoutes, type AdminServices } from '../../src/rpc/admin-routes.ts';
import { StatsRepository } from '../../src/store/stats-repository.ts';
import { AssetsRepository } from '../../src/store/assets-repository.ts';
import { CertificatesRepository } from '../../src/store/certificates-repository.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import type { DeliveryDoc, DeliveryStatus } from '../../src/store/documents.ts';
import { WebhookEndpointsRepository } from '../../src/store/webhook-endpoints-repository.ts';
import { startInProcessStack, type InProcessStack } from './in-process.ts';
import { testAdminToken, testSecretKey } from './test-config.ts';

/** Object bytes as the object store would keep them. */
export class MemoryObjects {
  readonly objects = new Map<string, { bytes: Buffer; contentType: string }>();
  async putObject(key: string, bytes: Buffer, contentType: string): Promise<void> {
    this.objects.set(key, { bytes, contentType });
  }
  async remove(key: string): Promise<void> {
    this.objects.delete(key);
  }
  async getObject(key: string): Promise<Buffer> {
    const found = this.objects.get(key);
    if (!found) throw new Error(`no object ${key}`);
    return found.bytes;
  }
}

export interface AdminInProcess {
  stack: InProcessStack;
  repositories: InProcessStack['repositories'] & {
    webhookEndpoints: WebhookEndpointsRepository;
    deliveries: DeliveriesRepository;
    assets: AssetsRepository;
    certificates: CertificatesRepository;
    stats: StatsRepository;
  };
  services: AdminServices;
  clients: AdminClients;
  /** Clients that send the operator token on every call (for the CLI, which sends none here). */
  operatorClients: AdminClients;
  /** DOCGEN_SECRET_KEY of this stack (seals webhook secrets and certificate keys). */
  secretKey: Buffer;
  /** Call options carrying the operator token. */
  operator: CallOptions;
  /** The portal's origin (DOCGEN_PORTAL_BASE_URL of this stack). */
  portalUrl: string;
  objects: MemoryObjects;
  /** Delivery jobs handed to the webhook workers (redeliver, test events). */
  enqueued: DeliveryJob[];
  /** Unexpected errors the routes answered as INTERNAL: a test expects none. */
  internal: unknown[];
  /**
   * A delivery of the workspace as the webhook workers write one (of a generation and an
   * endpoint that need not exist); returns its `dlv_…` id.
   */
  delivery(workspaceId: ObjectId, status: DeliveryStatus): Promise<string>;
  /** A new workspace made by the operator; returns its `ws_…` id. */
  workspace(name?: string): Promise<string>;
  /**
   * A person with a password, member of the workspace with the role, signed in: their user id
   * and call options as the portal sends them (session cookie and the portal's Origin).
   */
  member(workspaceId: string, role: 'owner' | 'editor' | 'viewer', email?: string): Promise<SignedInMember>;
  close(): Promise<void>;
}

export interface SignedInMember {
  userId: string;
  email: string;
  password: string;
  options: CallOptions;
}

const ROLES = { owner: MemberRole.OWNER, editor: MemberRole.EDITOR, viewer: MemberRole.VIEWER } as const;

/** The session cookie's value from Set-Cookie response headers. */
export function sessionFrom(headers: Headers | undefined): string {
  const cookie = headers?.get('set-cookie') ?? '';
  const match = /docgen_session=([^;]*)/.exec(cookie);
  if (!match?.[1]) throw new Error(`no session cookie in ${JSON.stringify(cookie)}`);
  return match[1];
}

export async function startAdminInProcess(options: { apiKeyLimits?: ApiKeyLimits } = {}): Promise<AdminInProcess> {
  const stack = await startInProcessStack();
  const adminToken = testAdminToken();
  const portalUrl = 'http://127.0.0.1:8081';
  const objects = new MemoryObjects();
  const secretKey = testSecretKey();
  const enqueued: DeliveryJob[] = [];
  const repositories = {
    ...stack.repositories,
    webhookEndpoints: new WebhookEndpointsRepository(stack.db),
    deliveries: new DeliveriesRepository(stack.db),
    assets: new AssetsRepository(stack.db),
    certificates: new CertificatesRepository(stack.db),
    stats: new StatsRepository(stack.db),
  };
  const services = createAdminServices({
    repositories,
    generationService: stack.generations,
    batchService: stack.batches,
    objects,
    secretKey,
    allowInsecureWebhookUrls: true,
    apiKeyLimits: options.apiKeyLimits,
    adminToken,
    analyzeTemplate,
    diagnoseTemplate,
    renderPreview: async () => {
      throw new Error('previews are rendered by a render process, which this in-process stack does not run');
    },
    enqueueDelivery: async (job) => {
      enqueued.push(job);
    },
    assets: { repository: repositories.assets, objects, maxBytes: 1024 * 1024, workspaceQuotaBytes: 8 * 1024 * 1024 },
    identity: {
      repositories: createIdentityRepositories(stack.db),
      rateLimits: stack.repositories.rateLimits,
      portalBaseUrl: () => portalUrl,
    },
  });
  const internal: unknown[] = [];
  const transport = createRouterTransport(
    (router) => registerAdminRoutes(router, services, { onInternal: (cause) => internal.push(cause) }),
    // Addressed like a browser addresses the portal (browser calls must name the portal's host).
    {
      transport: {
        interceptors: [(next) => (req) => (req.header.set('host', new URL(portalUrl).host), next(req))],
      },
    },
  );
  const clients = adminClientsOn(transport);
  const operator: CallOptions = { headers: { authorization: `Bearer ${adminToken}` } };
  const operatorClients = adminClientsOn(
    createRouterTransport(
      (router) => registerAdminRoutes(router, services, { onInternal: (cause) => internal.push(cause) }),
      {
        transport: {
          interceptors: [
            (next) => (req) => {
              req.header.set('authorization', `Bearer ${adminToken}`);
              return next(req);
            },
          ],
        },
      },
    ),
  );

  return {
    stack,
    repositories,
    services,
    clients,
    operatorClients,
    secretKey,
    operator,
    portalUrl,
    objects,
    enqueued,
    internal,
    async delivery(workspaceId, status) {
      const now = new Date();
      const doc: DeliveryDoc = {
        _id: new ObjectId(),
        workspaceId,
        endpointId: new ObjectId(),
        eventId: new ObjectId(),
        event: 'generation.completed',
        generationId: new ObjectId(),
        payload: { generationId: formatId('generation', new ObjectId()) },
        timestamp: Math.floor(now.getTime() / 1000),
        status,
        attempts: [],
        roundAttempts: status === 'PENDING' ? 0 : 6,
        round: 1,
        createdAt: now,
        updatedAt: now,
        nextAttemptAt: status === 'PENDING' ? now : null,
      };
      await repositories.deliveries.insertOnce(doc);
      return formatId('delivery', doc._id);
    },
    async workspace(name = `ws-${randomBytes(3).toString('hex')}`) {
      return (await clients.workspaces.createWorkspace({ name }, operator)).workspace!.id;
    },
    async member(workspaceId, role, email = `${randomBytes(4).toString('hex')}@example.com`) {
      const invited = await clients.users.inviteUser({ workspaceId, email, role: ROLES[role] }, operator);
      const password = `pw-${randomBytes(12).toString('hex')}`;
      let headers: Headers | undefined;
      if (invited.inviteUrl) {
        const token = invited.inviteUrl.split('/invite/')[1]!;
        await clients.sessions.acceptInvitation(
          { token, password, displayName: email },
          { headers: { origin: portalUrl }, onHeader: (h) => (headers = h) },
        );
      } else {
        throw new Error(`${email} already has a password; pass a fresh email`);
      }
      return {
        userId: invited.user!.id,
        email,
        password,
        options: { headers: { cookie: `docgen_session=${sessionFrom(headers)}`, origin: portalUrl } },
      };
    },
    async close() {
      await stack.close();
    },
  };
}
