// `docgen admin workspace …`.
import type { Workspace } from '../../gen/docgen/admin/v1/workspace_pb.js';
import { need, page, PAGE_OPTIONS, str, type Command } from './command.ts';
import { fields, iso, more, table, time } from './output.ts';

export const workspaceCommands: Command[] = [
  {
    path: ['workspace', 'create'],
    synopsis: '--name NAME',
    summary: 'Create a workspace.',
    positionals: [],
    options: { name: { type: 'string' } },
    required: ['name'],
    async run({ values, clients, print }) {
      const { workspace } = await clients.workspaces.createWorkspace({ name: str(values.name) });
      const w = need(workspace);
      print({ id: w.id }, `Created workspace ${w.id} (${w.name})`);
    },
  },
  {
    path: ['workspace', 'get'],
    synopsis: 'WS_ID',
    summary: 'Show a workspace.',
    positionals: ['WS_ID'],
    options: {},
    async run({ args, clients, print }) {
      const w = need((await clients.workspaces.getWorkspace({ id: args[0]! })).workspace);
      print(workspaceJson(w), fields([['id', w.id], ['name', w.name], ['created', time(w.createdAt)]]));
    },
  },
  {
    path: ['workspace', 'list'],
    synopsis: '[--page-size N] [--page-token TOKEN]',
    summary: 'List workspaces, newest first.',
    positionals: [],
    options: PAGE_OPTIONS,
    async run({ values, clients, print }) {
      const res = await clients.workspaces.listWorkspaces(page(values));
      print(
        { workspaces: res.workspaces.map(workspaceJson), nextPageToken: res.nextPageToken || null },
        table(['ID', 'NAME', 'CREATED'], res.workspaces.map((w) => [w.id, w.name, time(w.createdAt)])) + more(res.nextPageToken),
      );
    },
  },
];

function workspaceJson(w: Workspace) {
  return { id: w.id, name: w.name, createdAt: iso(w.createdAt) };
}
