// `docgen admin workspace …`.
import { create } from '@bufbuild/protobuf';
import { DurationSchema, type Duration } from '@bufbuild/protobuf/wkt';
import { formatRetention, parseRetention } from '../../domain/retention.ts';
import { renderWeightProblem } from '../../domain/render-weight.ts';
import type { Workspace } from '../../gen/docgen/admin/v1/workspace_pb.js';
import { need, page, PAGE_OPTIONS, str, UsageError, type Command } from './command.ts';
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
      print(
        workspaceJson(w),
        fields([
          ['id', w.id],
          ['name', w.name],
          ['created', time(w.createdAt)],
          ['retention', retentionText(w.retention)],
          ['render weight', String(w.renderWeight || 1)],
        ]),
      );
    },
  },
  {
    path: ['workspace', 'update'],
    synopsis: 'WS_ID [--name NAME] [--retention 30d|12h|90m|none] [--render-weight N]',
    summary:
      'Rename a workspace, set how long its generations are kept (none: until deleted), or its share of the render fleet (1 to 100).',
    positionals: ['WS_ID'],
    options: { name: { type: 'string' }, retention: { type: 'string' }, 'render-weight': { type: 'string' } },
    async run({ args, values, clients, print }) {
      if (values.name === undefined && values.retention === undefined && values['render-weight'] === undefined)
        throw new UsageError('nothing to change: give --name, --retention and/or --render-weight');
      let renderWeight: number | undefined;
      if (values['render-weight'] !== undefined) {
        const text = str(values['render-weight']);
        renderWeight = /^\s*\d{1,9}\s*$/.test(text) ? Number(text) : NaN;
        const problem = Number.isNaN(renderWeight) ? 'must be a whole number' : renderWeightProblem(renderWeight);
        if (problem) throw new UsageError(`--render-weight ${JSON.stringify(text)} ${problem}, e.g. --render-weight 3`);
      }
      let retention: Duration | undefined;
      if (values.retention !== undefined) {
        const text = str(values.retention);
        let seconds = 0;
        if (text !== 'none') {
          try {
            seconds = parseRetention(text);
          } catch (err) {
            throw new UsageError(`--retention: ${(err as Error).message}, or none`);
          }
        }
        retention = create(DurationSchema, { seconds: BigInt(seconds) });
      }
      const name = values.name === undefined ? undefined : str(values.name);
      const w = need(
        (await clients.workspaces.updateWorkspace({ id: args[0]!, name, retention, renderWeight })).workspace,
      );
      print(
        workspaceJson(w),
        `Updated workspace ${w.id} (${w.name}): retention ${retentionText(w.retention)}, render weight ${w.renderWeight || 1}`,
      );
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
        table(
          ['ID', 'NAME', 'CREATED'],
          res.workspaces.map((w) => [w.id, w.name, time(w.createdAt)]),
        ) + more(res.nextPageToken),
      );
    },
  },
];

function workspaceJson(w: Workspace) {
  return {
    id: w.id,
    name: w.name,
    createdAt: iso(w.createdAt),
    retention: w.retention ? formatRetention(Number(w.retention.seconds)) : null,
    renderWeight: w.renderWeight || 1,
  };
}

function retentionText(retention: Duration | undefined): string {
  return retention ? formatRetention(Number(retention.seconds)) : 'none (kept until deleted)';
}
