// Connect clients of the admin API (docs/admin.md), used by `docgen admin` and by the tests
// that drive the admin services. A new admin service is one line in ADMIN_SERVICES.
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { errorMessage } from '../../domain/errors.ts';
import { ApiKeyService } from '../../gen/docgen/admin/v1/api_key_pb.js';
import { AssetService } from '../../gen/docgen/admin/v1/asset_pb.js';
import { CertificateService } from '../../gen/docgen/admin/v1/certificate_pb.js';
import { DeliveryService } from '../../gen/docgen/admin/v1/delivery_pb.js';
import { GenerationAdminService } from '../../gen/docgen/admin/v1/generation_pb.js';
import { AuditService, MemberService, SessionService, UserService } from '../../gen/docgen/admin/v1/identity_pb.js';
import { TemplateService } from '../../gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointService } from '../../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceStatsService } from '../../gen/docgen/admin/v1/stats_pb.js';
import { WorkspaceService } from '../../gen/docgen/admin/v1/workspace_pb.js';
import { readDevAdminToken } from '../../dev/dev-admin-token.ts';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8081';

const ADMIN_SERVICES = {
  workspaces: WorkspaceService,
  apiKeys: ApiKeyService,
  templates: TemplateService,
  webhooks: WebhookEndpointService,
  deliveries: DeliveryService,
  assets: AssetService,
  certificates: CertificateService,
  generations: GenerationAdminService,
  users: UserService,
  members: MemberService,
  sessions: SessionService,
  audit: AuditService,
  stats: WorkspaceStatsService,
};

export type AdminClients = { [K in keyof typeof ADMIN_SERVICES]: Client<(typeof ADMIN_SERVICES)[K]> };

export interface AdminClientOptions {
  /** Sent as `Authorization: Bearer <token>`; omitted when undefined. */
  token: string | undefined;
  timeoutMs?: number;
}

/** One client per admin service, all on one HTTP/1.1 Connect transport. */
export function createAdminClients(baseUrl: string, options: AdminClientOptions): AdminClients {
  const { token } = options;
  const auth: Interceptor = (next) => (req) => {
    req.header.set('authorization', `Bearer ${token}`);
    return next(req);
  };
  const transport = createConnectTransport({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    httpVersion: '1.1',
    interceptors: token === undefined ? [] : [auth],
    defaultTimeoutMs: options.timeoutMs,
  });
  return adminClientsOn(transport);
}

/** One client per admin service on a given transport (tests pass createRouterTransport's). */
export function adminClientsOn(transport: Transport): AdminClients {
  const clients: Record<string, unknown> = {};
  for (const [name, service] of Object.entries(ADMIN_SERVICES)) clients[name] = createClient(service, transport);
  return clients as AdminClients;
}

/**
 * The clients of `docgen admin`, configured from DOCGEN_ADMIN_URL and DOCGEN_ADMIN_TOKEN (by
 * default the token the last `docgen dev` start wrote to its data directory).
 */
export function adminClientsFromEnv(env: Record<string, string | undefined>): AdminClients {
  return createAdminClients(env.DOCGEN_ADMIN_URL || DEFAULT_ADMIN_URL, {
    token: env.DOCGEN_ADMIN_TOKEN || readDevAdminToken(env),
    timeoutMs: 120_000,
  });
}

/** A failed admin call in words, with a hint at the setting to check. */
export function describeAdminError(err: unknown, env: Record<string, string | undefined>): string {
  if (err instanceof ConnectError) {
    const url = env.DOCGEN_ADMIN_URL || DEFAULT_ADMIN_URL;
    if (err.code === Code.Unauthenticated)
      return `${err.rawMessage} (check DOCGEN_ADMIN_TOKEN; \`docgen dev\` writes its token, new each start, to .docgen/admin-token)`;
    if (err.code === Code.Unavailable && /fetch failed|ECONNREFUSED|ENOTFOUND|socket|connect/i.test(err.rawMessage)) {
      return `cannot reach the admin API at ${url}: ${err.rawMessage} (is docgen running? check DOCGEN_ADMIN_URL)`;
    }
    return err.rawMessage;
  }
  return errorMessage(err);
}
