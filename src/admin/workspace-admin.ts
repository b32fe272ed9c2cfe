// Workspaces own everything else; the admin plane creates and lists them.
import type { ObjectId } from 'mongodb';
import { formatId } from '../domain/ids.ts';
import type { WorkspaceDoc } from '../store/documents.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';
import { checkPage, requireName, requireWorkspace, type PageInput, type PageOf } from './admin-input.ts';

export interface WorkspaceView {
  id: string;
  name: string;
  createdAt: Date;
}

export function toWorkspaceView(doc: WorkspaceDoc): WorkspaceView {
  return { id: formatId('workspace', doc._id), name: doc.name, createdAt: doc.createdAt };
}

export class WorkspaceAdmin {
  private readonly workspaces: WorkspacesRepository;
  constructor(deps: { workspaces: WorkspacesRepository }) {
    this.workspaces = deps.workspaces;
  }

  async create(input: { name: string }): Promise<WorkspaceView> {
    const name = requireName(input.name);
    return toWorkspaceView(await this.workspaces.create(name));
  }

  async get(id: string): Promise<WorkspaceView> {
    return toWorkspaceView(await requireWorkspace(this.workspaces, id, 'id'));
  }

  /** All workspaces, or only those with the given ids (a member's own). */
  async list(page?: PageInput, only?: ObjectId[]): Promise<PageOf<WorkspaceView>> {
    const { pageSize, pageToken } = checkPage(page);
    const result = await this.workspaces.list(pageSize, pageToken, only);
    return { items: result.items.map(toWorkspaceView), nextPageToken: result.nextPageToken };
  }
}
