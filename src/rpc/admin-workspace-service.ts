// Connect handlers of docgen.admin.v1.WorkspaceService: proto in, domain call, proto out.
import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { WorkspaceAdmin } from '../admin/workspace-admin.ts';
import {
  CreateWorkspaceResponseSchema,
  GetWorkspaceResponseSchema,
  ListWorkspacesResponseSchema,
  UpdateWorkspaceResponseSchema,
  type CreateWorkspaceRequest,
  type CreateWorkspaceResponse,
  type GetWorkspaceRequest,
  type GetWorkspaceResponse,
  type ListWorkspacesRequest,
  type ListWorkspacesResponse,
  type UpdateWorkspaceRequest,
  type UpdateWorkspaceResponse,
  type WorkspaceService,
} from '../gen/docgen/admin/v1/workspace_pb.js';
import { callerKey } from './admin-access-interceptor.ts';
import { validationError } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import { workspaceToProto } from './admin-proto.ts';

export class WorkspaceServiceHandler implements ServiceImpl<typeof WorkspaceService> {
  private readonly admin: WorkspaceAdmin;
  constructor(admin: WorkspaceAdmin) {
    this.admin = admin;
  }

  async createWorkspace(req: CreateWorkspaceRequest): Promise<CreateWorkspaceResponse> {
    const workspace = await this.admin.create({ name: req.name });
    return create(CreateWorkspaceResponseSchema, { workspace: workspaceToProto(workspace) });
  }

  async getWorkspace(req: GetWorkspaceRequest): Promise<GetWorkspaceResponse> {
    return create(GetWorkspaceResponseSchema, { workspace: workspaceToProto(await this.admin.get(req.id)) });
  }

  async listWorkspaces(req: ListWorkspacesRequest, ctx: HandlerContext): Promise<ListWorkspacesResponse> {
    // A signed-in member sees only the workspaces they belong to; the operator sees all.
    const caller = ctx.values.get(callerKey);
    const member =
      caller?.kind === 'member'
        ? { userId: formatId('user', caller.user._id), workspaceIds: caller.memberships.map((m) => m.workspaceId) }
        : undefined;
    const page = await this.admin.list({ pageSize: req.pageSize, pageToken: req.pageToken }, member);
    return create(ListWorkspacesResponseSchema, {
      workspaces: page.items.map(workspaceToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async updateWorkspace(req: UpdateWorkspaceRequest): Promise<UpdateWorkspaceResponse> {
    let retentionSeconds: number | null | undefined;
    if (req.retention) {
      // Whole seconds only: a fraction of a second is not a retention anyone means.
      if (req.retention.nanos !== 0) throw validationError([{ field: 'retention', issue: 'must be whole seconds' }]);
      retentionSeconds = req.retention.seconds === 0n ? null : Number(req.retention.seconds);
    }
    const workspace = await this.admin.update({
      id: req.id,
      name: req.name,
      retentionSeconds,
      renderWeight: req.renderWeight,
    });
    return create(UpdateWorkspaceResponseSchema, { workspace: workspaceToProto(workspace) });
  }
}
