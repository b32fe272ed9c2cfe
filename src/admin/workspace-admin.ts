// Workspaces own everything else; the admin plane creates and lists them.
import type { ObjectId } from 'mongodb';
import { notFound, validationError } from '../domain/errors.ts';
import { formatId } from '../domain/ids.ts';
import { retentionProblem } from '../domain/retention.ts';
import { DEFAULT_RENDER_WEIGHT, renderWeightProblem } from '../domain/render-weight.ts';
import type { WorkspaceDoc } from '../store/documents.ts';
import type { Page, PageInput, PageTokens } from '../store/pagination.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { requireName, requireWorkspace } from '../domain/input.ts';

export interface WorkspaceView {
  id: string;
  name: string;
  createdAt: Date;
  /** Seconds a generation is kept after its creation; null: until deleted. */
  retentionSeconds: number | null;
  /** Share of the render fleet while several workspaces have work (1 unless set). */
  renderWeight: number;
}

export function toWorkspaceView(doc: WorkspaceDoc): WorkspaceView {
  return {
    id: formatId('workspace', doc._id),
    name: doc.name,
    createdAt: doc.createdAt,
    retentionSeconds: doc.retentionSeconds ?? null,
    renderWeight: doc.renderWeight ?? DEFAULT_RENDER_WEIGHT,
  };
}

export interface WorkspaceChanges {
  id: string;
  /** New name; undefined keeps it. */
  name?: string | undefined;
  /** New retention in seconds; null removes it; undefined keeps it. */
  retentionSeconds?: number | null | undefined;
  /** New render weight (1 to 100); undefined keeps it. */
  renderWeight?: number | undefined;
}

export class WorkspaceAdmin {
  private readonly workspaces: WorkspacesRepository;
  private readonly pageTokens: PageTokens;
  constructor(deps: { workspaces: WorkspacesRepository; pageTokens: PageTokens }) {
    this.workspaces = deps.workspaces;
    this.pageTokens = deps.pageTokens;
  }

  async create(input: { name: string }): Promise<WorkspaceView> {
    const name = requireName(input.name);
    return toWorkspaceView(await this.workspaces.create(name));
  }

  async get(id: string): Promise<WorkspaceView> {
    return toWorkspaceView(await requireWorkspace(this.workspaces, id, 'id'));
  }

  async update(changes: WorkspaceChanges): Promise<WorkspaceView> {
    const workspace = await requireWorkspace(this.workspaces, changes.id, 'id');
    const name = changes.name === undefined ? undefined : requireName(changes.name);
    const retention = changes.retentionSeconds;
    if (retention !== undefined && retention !== null) {
      const problem = retentionProblem(retention);
      if (problem) throw validationError([{ field: 'retention', issue: problem }]);
    }
    const renderWeight = changes.renderWeight;
    if (renderWeight !== undefined) {
      const problem = renderWeightProblem(renderWeight);
      if (problem) throw validationError([{ field: 'render_weight', issue: problem }]);
    }
    const updated = await this.workspaces.update(workspace._id, { name, retentionSeconds: retention, renderWeight });
    if (!updated) throw notFound(`Workspace ${changes.id}`);
    return toWorkspaceView(updated);
  }

  /**
   * All workspaces, or a member's own. A member's page tokens are theirs: bound to the member,
   * not to their workspaces of the moment, so a walk survives being added to one meanwhile.
   */
  async list(input?: PageInput, member?: { userId: string; workspaceIds: ObjectId[] }): Promise<Page<WorkspaceView>> {
    const page = this.pageTokens.request(input, { list: 'workspaces', filters: { member: member?.userId } });
    const result = await this.workspaces.list(page, member?.workspaceIds);
    return { items: result.items.map(toWorkspaceView), nextPageToken: result.nextPageToken };
  }
}
