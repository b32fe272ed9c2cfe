// THE authorization table of the admin API: one entry per RPC of docgen.admin.v1, keyed by
// its full name (`docgen.admin.v1.Service/Method`). One interceptor (src/rpc/admin-access.ts)
// applies it to every admin call, for the operator token and for signed-in members alike.
//
// FAIL CLOSED: an RPC without an entry is operator-only, and test/unit/identity-admin-policy
// fails for any registered admin RPC that has none. Adding an RPC? Add its line here:
//   - `access`: the right a member needs (roles.ts), or 'operator' | 'signed-in' | 'public'.
//   - `workspace`: how to find the workspace it touches: `ws('workspaceId')` (a `ws_…` field of
//     the request) or `obj('template', 'templateId')` (look the object up by a request field);
//     `mine` for lists the handler limits to the caller's workspaces.
//   - `changes: true` for calls that change state: they are audited and, with a session
//     cookie, need a matching Origin. `target` names where the changed object's id is
//     (`request.<field>` or `response.<path>`).
import type { Permission } from './roles.ts';

/** Objects whose workspace is found by looking them up (the lookups are wired in src/rpc/admin-services.ts). */
export type ObjectKind = 'template' | 'apiKey' | 'webhookEndpoint' | 'delivery' | 'generation' | 'asset';

export type WorkspaceSource =
  /** `request[field]` is the workspace id. */
  | { from: 'request'; field: string }
  /** `request[field]` is the id of an object of this kind; its workspace counts. */
  | { from: 'object'; kind: ObjectKind; field: string }
  /** Several workspaces: the handler limits the answer to the caller's memberships. */
  | { from: 'memberships' }
  /** No workspace: the call concerns the caller (sessions) or everything (operator). */
  | { from: 'none' };

export interface RpcPolicy {
  /** A member right, or: operator token only; any signed-in caller; no credential at all. */
  access: Permission | 'operator' | 'signed-in' | 'public';
  workspace: WorkspaceSource;
  /** State-changing: audited; with a session cookie the Origin must match. */
  changes: boolean;
  /** Where the changed object's id is: `request.<field>`, `response.<a.b>` or `caller`. */
  target?: string;
  /** A short, secret-free detail for the audit event. */
  detail?: (request: Record<string, unknown>) => string;
}

const ws = (field = 'workspaceId'): WorkspaceSource => ({ from: 'request', field });
const obj = (kind: ObjectKind, field = 'id'): WorkspaceSource => ({ from: 'object', kind, field });
const mine: WorkspaceSource = { from: 'memberships' };
const none: WorkspaceSource = { from: 'none' };

const read = (workspace: WorkspaceSource, access: RpcPolicy['access'] = 'read'): RpcPolicy => ({
  access,
  workspace,
  changes: false,
});
const change = (
  access: RpcPolicy['access'],
  workspace: WorkspaceSource,
  target: string,
  detail?: RpcPolicy['detail'],
): RpcPolicy => ({
  access,
  workspace,
  changes: true,
  target,
  ...(detail ? { detail } : {}),
});

const S = 'docgen.admin.v1.';
// Requests carry the proto enum MemberRole (1 owner, 2 editor, 3 viewer).
const ROLE_NUMBERS: Record<string, string> = { 1: 'owner', 2: 'editor', 3: 'viewer' };
const roleName = (request: Record<string, unknown>) => `role ${ROLE_NUMBERS[String(request.role)] ?? 'unspecified'}`;
const emailAndRole = (request: Record<string, unknown>) => `${String(request.email ?? '')} as ${roleName(request)}`;

export const ADMIN_POLICY: Readonly<Record<string, RpcPolicy>> = {
  [`${S}WorkspaceService/CreateWorkspace`]: change('operator', none, 'response.workspace.id'),
  [`${S}WorkspaceService/GetWorkspace`]: read(ws('id')),
  [`${S}WorkspaceService/ListWorkspaces`]: read(mine),
  [`${S}WorkspaceService/UpdateWorkspace`]: change('workspace.manage', ws('id'), 'request.id'),

  [`${S}ApiKeyService/CreateApiKey`]: change('keys.manage', ws(), 'response.apiKey.id'),
  [`${S}ApiKeyService/ListApiKeys`]: read(ws()),
  [`${S}ApiKeyService/RevokeApiKey`]: change('keys.manage', obj('apiKey'), 'request.id'),

  [`${S}TemplateService/CreateTemplate`]: change('templates.edit', ws(), 'response.template.id'),
  [`${S}TemplateService/GetTemplate`]: read(obj('template')),
  [`${S}TemplateService/ListTemplates`]: read(ws()),
  [`${S}TemplateService/CreateTemplateVersion`]: change(
    'templates.edit',
    obj('template', 'templateId'),
    'request.templateId',
    (r) => (r.publish ? 'published' : ''),
  ),
  [`${S}TemplateService/GetTemplateVersion`]: read(obj('template', 'templateId')),
  [`${S}TemplateService/ListTemplateVersions`]: read(obj('template', 'templateId')),
  [`${S}TemplateService/PublishTemplateVersion`]: change(
    'templates.edit',
    obj('template', 'templateId'),
    'request.templateId',
    (r) => `version ${String(r.version)}`,
  ),
  [`${S}TemplateService/ArchiveTemplate`]: change('templates.edit', obj('template'), 'request.id'),
  [`${S}TemplateService/PreviewTemplateVersion`]: read(obj('template', 'templateId'), 'templates.edit'),
  [`${S}TemplateService/PreviewTemplateContent`]: read(ws(), 'templates.edit'),
  [`${S}TemplateService/CheckTemplateContent`]: read(ws(), 'templates.edit'),

  [`${S}WebhookEndpointService/CreateWebhookEndpoint`]: change('endpoints.manage', ws(), 'response.endpoint.id', (r) =>
    String(r.url ?? ''),
  ),
  [`${S}WebhookEndpointService/ListWebhookEndpoints`]: read(ws()),
  [`${S}WebhookEndpointService/DeleteWebhookEndpoint`]: change(
    'endpoints.manage',
    obj('webhookEndpoint'),
    'request.id',
  ),
  [`${S}WebhookEndpointService/RotateWebhookEndpointSecret`]: change(
    'endpoints.manage',
    obj('webhookEndpoint'),
    'request.id',
  ),
  [`${S}WebhookEndpointService/SendTestEvent`]: change('endpoints.manage', obj('webhookEndpoint'), 'request.id'),

  [`${S}DeliveryService/ListDeliveries`]: read(ws()),
  [`${S}DeliveryService/GetDelivery`]: read(obj('delivery')),
  [`${S}DeliveryService/RedeliverDelivery`]: change('deliveries.manage', obj('delivery'), 'request.id'),

  [`${S}AssetService/UploadAsset`]: change('templates.edit', ws(), 'response.asset.id', (r) => String(r.name ?? '')),
  [`${S}AssetService/ListAssets`]: read(ws()),
  [`${S}AssetService/DeleteAsset`]: change('templates.edit', obj('asset'), 'request.id'),

  [`${S}GenerationAdminService/ListGenerations`]: read(ws()),
  [`${S}GenerationAdminService/GetGeneration`]: read(obj('generation')),
  [`${S}GenerationAdminService/DeleteGeneration`]: change('generations.manage', obj('generation'), 'request.id'),

  [`${S}SessionService/SignIn`]: change('public', none, 'response.user.id'),
  [`${S}SessionService/SignOut`]: change('signed-in', none, 'caller'),
  [`${S}SessionService/GetCurrentSession`]: read(none, 'signed-in'),
  [`${S}SessionService/AcceptInvitation`]: change('public', none, 'response.user.id'),

  [`${S}UserService/InviteUser`]: change('operator', ws(), 'response.user.id', emailAndRole),
  [`${S}UserService/ListUsers`]: read(none, 'operator'),
  [`${S}UserService/DisableUser`]: change('operator', none, 'request.id'),
  [`${S}UserService/EnableUser`]: change('operator', none, 'request.id'),
  [`${S}UserService/ResetUser`]: change('operator', none, 'request.id'),

  [`${S}MemberService/ListMembers`]: read(ws()),
  [`${S}MemberService/InviteMember`]: change('members.manage', ws(), 'response.member.user.id', emailAndRole),
  [`${S}MemberService/UpdateMemberRole`]: change('members.manage', ws(), 'request.userId', roleName),
  [`${S}MemberService/RemoveMember`]: change('members.manage', ws(), 'request.userId'),

  [`${S}AuditService/ListAuditEvents`]: read(ws(), 'audit.read'),
};

/** What an RPC without an entry gets: the operator token only (fail closed). */
export const OPERATOR_ONLY: RpcPolicy = { access: 'operator', workspace: none, changes: true, target: '' };

export function policyFor(rpc: string): RpcPolicy {
  return Object.hasOwn(ADMIN_POLICY, rpc) ? ADMIN_POLICY[rpc]! : OPERATOR_ONLY;
}
