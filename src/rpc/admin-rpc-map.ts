// The transport edge of access control: which domain operation (src/access/admin-operations.ts)
// each docgen.admin.v1 RPC is, where its request names the workspace it touches, and where
// the audit trail finds the changed object's id. One line per RPC, keyed by its full name
// (`docgen.admin.v1.Service/Method`); test/unit/access-policy fails for an RPC without one.
//   - `subject`: `ws('workspaceId')` (a `ws_…` field of the request) or `obj('template',
//     'templateId')` (an object id field; its workspace counts).
//   - `target` (state-changing RPCs): `req('id')`, `res('template.id')` (a string field of the
//     request or the response), or 'caller'.
//   - `detail`: a short, secret-free detail for the audit event (from the request, or the response).
//   - `facts`: what tells the event in words later (src/domain/audit-words.ts), as it is at the
//     time: `templateName`, `version`, `name` (the target's), `email`, `role`… Never a secret.
import type { AdminOperation } from '../access/admin-operations.ts';
import type { ObjectKind, Subject } from '../access/authorizer.ts';
import { auditApiKeyName } from '../domain/audit-words.ts';
import { shownWebhookUrl } from '../webhooks/address-guard.ts';

type Message = Record<string, unknown>;

export interface RpcBinding {
  operation: AdminOperation;
  subject?: (request: Message) => Subject;
  target?: ((request: Message, response: Message) => string) | 'caller';
  detail?: (request: Message, response: Message) => string;
  facts?: (request: Message, response: Message) => Record<string, string>;
}

const ws =
  (field = 'workspaceId') =>
  (request: Message): Subject => ({ kind: 'workspace', id: request[field], field });
const obj =
  (kind: ObjectKind, field = 'id') =>
  (request: Message): Subject => ({ kind, id: request[field], field });
const req = (field: string) => (request: Message) => text(request[field]);
const res = (path: string) => (_request: Message, response: Message) => text(pick(response, path));

// Requests carry the proto enum MemberRole (1 owner, 2 editor, 3 viewer).
const ROLE_NUMBERS: Record<string, string> = { 1: 'owner', 2: 'editor', 3: 'viewer' };
const roleName = (request: Message) => `role ${ROLE_NUMBERS[String(request.role)] ?? 'unspecified'}`;
const emailAndRole = (request: Message) => `${text(request.email)} as ${roleName(request)}`;
const roleFacts = (request: Message) => ({ role: ROLE_NUMBERS[String(request.role)] ?? '' });
const emailAndRoleFacts = (request: Message) => ({ email: text(request.email), ...roleFacts(request) });
/** The name of the object a response carries at `path` (`apiKey`: its `name`), as the target's name. */
const named =
  (path: string, field = 'name') =>
  (_request: Message, response: Message) => ({ name: text(pick(response, `${path}.${field}`)) });
const num = (value: unknown) => (typeof value === 'number' && value > 0 ? String(value) : '');

const S = 'docgen.admin.v1.';

export const ADMIN_RPCS: Readonly<Record<string, RpcBinding>> = {
  [`${S}WorkspaceService/CreateWorkspace`]: {
    operation: 'workspaces.create',
    target: res('workspace.id'),
    facts: named('workspace'),
  },
  [`${S}WorkspaceService/GetWorkspace`]: { operation: 'workspaces.get', subject: ws('id') },
  [`${S}WorkspaceService/ListWorkspaces`]: { operation: 'workspaces.list' },
  [`${S}WorkspaceService/UpdateWorkspace`]: {
    operation: 'workspaces.update',
    subject: ws('id'),
    target: req('id'),
    facts: named('workspace'),
  },

  [`${S}ApiKeyService/CreateApiKey`]: {
    operation: 'apiKeys.create',
    subject: ws(),
    target: res('apiKey.id'),
    facts: apiKeyFacts,
  },
  [`${S}ApiKeyService/ListApiKeys`]: { operation: 'apiKeys.list', subject: ws() },
  [`${S}ApiKeyService/RevokeApiKey`]: {
    operation: 'apiKeys.revoke',
    subject: obj('apiKey'),
    target: req('id'),
    facts: apiKeyFacts,
  },

  [`${S}TemplateService/CreateTemplate`]: {
    operation: 'templates.create',
    subject: ws(),
    target: res('template.id'),
    detail: (r) => (r.fromGallery ? `from gallery ${text(r.fromGallery)}` : ''),
    facts: (r, res) => ({
      templateName: text(pick(res, 'template.name')),
      version: num(pick(res, 'version.version')),
      fromGallery: text(r.fromGallery),
    }),
  },
  [`${S}TemplateService/GetTemplate`]: { operation: 'templates.get', subject: obj('template') },
  [`${S}TemplateService/ListTemplates`]: { operation: 'templates.list', subject: ws() },
  [`${S}TemplateService/CreateTemplateVersion`]: {
    operation: 'templates.addVersion',
    subject: obj('template', 'templateId'),
    target: req('templateId'),
    detail: (r) => (r.publish ? 'published' : ''),
    facts: (r, res) => ({
      templateName: text(pick(res, 'template.name')),
      version: num(pick(res, 'version.version')),
      published: r.publish ? 'true' : '',
    }),
  },
  [`${S}TemplateService/GetTemplateVersion`]: {
    operation: 'templates.getVersion',
    subject: obj('template', 'templateId'),
  },
  [`${S}TemplateService/ListTemplateVersions`]: {
    operation: 'templates.listVersions',
    subject: obj('template', 'templateId'),
  },
  [`${S}TemplateService/PublishTemplateVersion`]: {
    operation: 'templates.publish',
    subject: obj('template', 'templateId'),
    target: req('templateId'),
    detail: (r) => `version ${String(r.version)}`,
    facts: (r, res) => ({ templateName: text(pick(res, 'template.name')), version: num(r.version) }),
  },
  [`${S}TemplateService/ArchiveTemplate`]: {
    operation: 'templates.archive',
    subject: obj('template'),
    target: req('id'),
    facts: (_r, res) => ({ templateName: text(pick(res, 'template.name')) }),
  },
  [`${S}TemplateService/RenameTemplate`]: {
    operation: 'templates.rename',
    subject: obj('template'),
    target: req('id'),
    detail: (r) => `to ${JSON.stringify(text(r.name).trim())}`,
    facts: (_r, res) => ({ templateName: text(pick(res, 'template.name')) }),
  },
  [`${S}TemplateService/UnarchiveTemplate`]: {
    operation: 'templates.unarchive',
    subject: obj('template'),
    target: req('id'),
    facts: (_r, res) => ({ templateName: text(pick(res, 'template.name')) }),
  },
  [`${S}TemplateService/DeleteTemplate`]: {
    operation: 'templates.delete',
    subject: obj('template'),
    target: req('id'),
    // DeleteTemplateOutcome: 1 deleted, 2 archived.
    detail: (_r, response) => (response.outcome === 2 ? 'archived instead: used by generations' : 'deleted'),
    facts: (_r, response) => ({
      outcome: response.outcome === 2 ? 'archived' : 'deleted',
      templateName: text(pick(response, 'template.name')),
    }),
  },
  [`${S}TemplateService/PreviewTemplateVersion`]: {
    operation: 'templates.previewVersion',
    subject: obj('template', 'templateId'),
  },
  [`${S}TemplateService/PreviewTemplateContent`]: { operation: 'templates.previewContent', subject: ws() },
  [`${S}TemplateService/CheckTemplateContent`]: { operation: 'templates.checkContent', subject: ws() },
  [`${S}TemplateService/ListGalleryTemplates`]: { operation: 'templates.listGallery' },

  [`${S}WebhookEndpointService/CreateWebhookEndpoint`]: {
    operation: 'webhookEndpoints.create',
    subject: ws(),
    target: res('endpoint.id'),
    // The audit trail outlives the endpoint: the URL without its query string (secrets).
    detail: (r) => shownWebhookUrl(text(r.url)),
    facts: endpointFacts,
  },
  [`${S}WebhookEndpointService/ListWebhookEndpoints`]: { operation: 'webhookEndpoints.list', subject: ws() },
  [`${S}WebhookEndpointService/DeleteWebhookEndpoint`]: {
    operation: 'webhookEndpoints.delete',
    subject: obj('webhookEndpoint'),
    target: req('id'),
  },
  [`${S}WebhookEndpointService/RotateWebhookEndpointSecret`]: {
    operation: 'webhookEndpoints.rotateSecret',
    subject: obj('webhookEndpoint'),
    target: req('id'),
    facts: endpointFacts,
  },
  [`${S}WebhookEndpointService/SendTestEvent`]: {
    operation: 'webhookEndpoints.sendTestEvent',
    subject: obj('webhookEndpoint'),
    target: req('id'),
  },

  [`${S}DeliveryService/ListDeliveries`]: { operation: 'deliveries.list', subject: ws() },
  [`${S}DeliveryService/GetDelivery`]: { operation: 'deliveries.get', subject: obj('delivery') },
  [`${S}DeliveryService/RedeliverDelivery`]: {
    operation: 'deliveries.redeliver',
    subject: obj('delivery'),
    target: req('id'),
  },

  [`${S}AssetService/UploadAsset`]: {
    operation: 'assets.upload',
    subject: ws(),
    target: res('asset.id'),
    detail: (r) => text(r.name),
    facts: (r) => ({ name: text(r.name) }),
  },
  [`${S}AssetService/ListAssets`]: { operation: 'assets.list', subject: ws() },
  [`${S}AssetService/DeleteAsset`]: { operation: 'assets.delete', subject: obj('asset'), target: req('id') },

  [`${S}CertificateService/UploadCertificate`]: {
    operation: 'certificates.upload',
    subject: ws(),
    target: res('certificate.id'),
    detail: (r) => text(r.name),
    facts: (r) => ({ name: text(r.name) }),
  },
  [`${S}CertificateService/ListCertificates`]: { operation: 'certificates.list', subject: ws() },
  [`${S}CertificateService/DeleteCertificate`]: {
    operation: 'certificates.delete',
    subject: obj('certificate'),
    target: req('id'),
  },

  [`${S}GenerationAdminService/ListGenerations`]: { operation: 'generations.list', subject: ws() },
  [`${S}GenerationAdminService/GetGeneration`]: { operation: 'generations.get', subject: obj('generation') },
  [`${S}GenerationAdminService/GetBatch`]: { operation: 'batches.get', subject: ws() },
  [`${S}GenerationAdminService/DeleteGeneration`]: {
    operation: 'generations.delete',
    subject: obj('generation'),
    target: req('id'),
  },
  [`${S}GenerationAdminService/RenderAgain`]: {
    operation: 'generations.renderAgain',
    subject: obj('generation'),
    target: res('generation.id'),
    detail: (r) => `again from ${text(r.id)}`,
    facts: (r) => ({ from: text(r.id) }),
  },

  [`${S}GenerationAdminService/GetGenerationPdf`]: { operation: 'generations.getPdf', subject: obj('generation') },

  [`${S}WorkspaceStatsService/GetWorkspaceStats`]: { operation: 'stats.get', subject: ws() },

  [`${S}SessionService/SignIn`]: { operation: 'sessions.signIn', target: res('user.id') },
  [`${S}SessionService/SignOut`]: { operation: 'sessions.signOut', target: 'caller' },
  [`${S}SessionService/GetCurrentSession`]: { operation: 'sessions.getCurrent' },
  [`${S}SessionService/AcceptInvitation`]: { operation: 'sessions.acceptInvitation', target: res('user.id') },
  [`${S}SessionService/GetInvitation`]: { operation: 'sessions.getInvitation' },
  // The target is the workspace joined (or turned down), so its audit trail shows the answer.
  [`${S}SessionService/AcceptPendingInvitation`]: {
    operation: 'sessions.acceptPendingInvitation',
    target: req('workspaceId'),
  },
  [`${S}SessionService/DeclinePendingInvitation`]: {
    operation: 'sessions.declinePendingInvitation',
    target: req('workspaceId'),
  },

  [`${S}UserService/InviteUser`]: {
    operation: 'users.invite',
    subject: ws(),
    target: res('user.id'),
    detail: emailAndRole,
    facts: emailAndRoleFacts,
  },
  [`${S}UserService/ListUsers`]: { operation: 'users.list' },
  [`${S}UserService/DisableUser`]: { operation: 'users.disable', target: req('id') },
  [`${S}UserService/EnableUser`]: { operation: 'users.enable', target: req('id') },
  [`${S}UserService/ResetUser`]: { operation: 'users.reset', target: req('id') },

  [`${S}MemberService/ListMembers`]: { operation: 'members.list', subject: ws() },
  [`${S}MemberService/InviteMember`]: {
    operation: 'members.invite',
    subject: ws(),
    target: res('member.user.id'),
    detail: emailAndRole,
    facts: emailAndRoleFacts,
  },
  [`${S}MemberService/UpdateMemberRole`]: {
    operation: 'members.updateRole',
    subject: ws(),
    target: req('userId'),
    detail: roleName,
    facts: roleFacts,
  },
  [`${S}MemberService/RemoveMember`]: { operation: 'members.remove', subject: ws(), target: req('userId') },
  [`${S}MemberService/ListPendingInvitations`]: { operation: 'members.listPendingInvitations', subject: ws() },
  [`${S}MemberService/RevokePendingInvitation`]: {
    operation: 'members.revokePendingInvitation',
    subject: ws(),
    target: req('workspaceId'),
    detail: (r) => text(r.email),
    facts: (r) => ({ email: text(r.email) }),
  },

  [`${S}AuditService/ListAuditEvents`]: { operation: 'auditEvents.list', subject: ws() },
};

/**
 * Older audit events carry the RPC (`TemplateService.PublishTemplateVersion`) where newer ones
 * carry its operation: the map between them, for reading the trail.
 */
export function legacyAuditActions(): ReadonlyMap<string, string> {
  return new Map(
    Object.entries(ADMIN_RPCS).map(([rpc, binding]) => [rpc.slice(S.length).replace('/', '.'), binding.operation]),
  );
}

/** The RPC's line, or undefined (the gate then treats the call as operator-only). */
export function rpcBinding(rpc: string): RpcBinding | undefined {
  return Object.hasOwn(ADMIN_RPCS, rpc) ? ADMIN_RPCS[rpc] : undefined;
}

function apiKeyFacts(_request: Message, response: Message): Record<string, string> {
  return { name: auditApiKeyName(text(pick(response, 'apiKey.name')), text(pick(response, 'apiKey.prefix'))) };
}

// The audit trail outlives the endpoint: the URL without its query string (secrets).
function endpointFacts(_request: Message, response: Message): Record<string, string> {
  const url = text(pick(response, 'endpoint.url'));
  return { name: url ? shownWebhookUrl(url) : '' };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `template.id`: a field of a nested message. */
function pick(message: Message, path: string): unknown {
  let value: unknown = message;
  for (const key of path.split('.')) value = value && typeof value === 'object' ? (value as Message)[key] : undefined;
  return value;
}
