// `docgen admin generation …`: a workspace's generations (the public API's shape and filters)
// and their erasure.
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { GenerationStatus, type Generation } from '../../gen/docgen/v1/generation_pb.js';
import { need, page, PAGE_OPTIONS, str, UsageError, type Command } from './command.ts';
import { fields, iso, more, table, time } from './output.ts';

const STATUS_NAMES: Record<string, GenerationStatus> = {
  PENDING: GenerationStatus.PENDING,
  PROCESSING: GenerationStatus.PROCESSING,
  COMPLETED: GenerationStatus.COMPLETED,
  FAILED: GenerationStatus.FAILED,
};

function statusName(s: GenerationStatus): string {
  return Object.entries(STATUS_NAMES).find(([, v]) => v === s)?.[0] ?? 'UNSPECIFIED';
}

function statusFlag(value: string): GenerationStatus {
  const status = STATUS_NAMES[value.toUpperCase()];
  if (status === undefined)
    throw new UsageError(`--status ${JSON.stringify(value)}: use ${Object.keys(STATUS_NAMES).join(', ')}`);
  return status;
}

export function dateFlag(flag: string, value: string): ReturnType<typeof timestampFromDate> {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw new UsageError(`${flag} ${JSON.stringify(value)}: use an ISO 8601 time, e.g. 2026-11-23T12:00:00Z`);
  return timestampFromDate(date);
}

export const generationCommands: Command[] = [
  {
    path: ['generation', 'list'],
    synopsis:
      '--workspace WS_ID [--status STATUS] [--template TPL_ID] [--created-after ISO] [--created-before ISO] [--page-size N] [--page-token TOKEN]',
    summary: 'List generations, newest first, with the public API filters.',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      status: { type: 'string' },
      template: { type: 'string' },
      'created-after': { type: 'string' },
      'created-before': { type: 'string' },
      ...PAGE_OPTIONS,
    },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.generations.listGenerations({
        workspaceId: str(values.workspace),
        status: values.status === undefined ? GenerationStatus.UNSPECIFIED : statusFlag(str(values.status)),
        templateId: values.template === undefined ? '' : str(values.template),
        createdAfter:
          values['created-after'] === undefined ? undefined : dateFlag('--created-after', str(values['created-after'])),
        createdBefore:
          values['created-before'] === undefined
            ? undefined
            : dateFlag('--created-before', str(values['created-before'])),
        ...page(values),
      });
      print(
        { generations: res.generations.map(generationJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'TEMPLATE', 'STATUS', 'MODE', 'CREATED', 'ERROR'],
          res.generations.map((g) => [
            g.id,
            g.templateName || g.templateId,
            statusName(g.status),
            g.test ? 'test' : 'live',
            time(g.createdAt),
            g.error ?? '',
          ]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['generation', 'get'],
    synopsis: 'GEN_ID',
    summary: 'Show a generation (a completed one with a fresh download URL).',
    positionals: ['GEN_ID'],
    options: {},
    async run({ args, clients, print }) {
      const g = need((await clients.generations.getGeneration({ id: args[0]! })).generation);
      print(
        generationJson(g),
        fields([
          ['id', g.id],
          ['workspace', g.workspaceId],
          [
            'template',
            `${g.templateId}${g.templateName ? ` (${g.templateName})` : ''}${g.templateVersion ? `, version ${g.templateVersion}` : ''}`,
          ],
          ['status', statusName(g.status)],
          ['mode', g.test ? 'test (made with a svc_test_ key)' : 'live'],
          ['created', time(g.createdAt)],
          ['updated', time(g.updatedAt)],
          ['error', g.error ?? '-'],
          ['download', g.outputUrl ?? '-'],
          ['data', JSON.stringify(g.data ?? {})],
        ]),
      );
    },
  },
  {
    path: ['generation', 'delete'],
    synopsis: 'GEN_ID',
    summary: 'Erase a generation: its data, its PDF and its webhook deliveries, at once.',
    positionals: ['GEN_ID'],
    options: {},
    async run({ args, clients, print }) {
      await clients.generations.deleteGeneration({ id: args[0]! });
      print({ id: args[0]!, deleted: true }, `Deleted generation ${args[0]!} with its PDF and deliveries`);
    },
  },
];

function generationJson(g: Generation) {
  return {
    id: g.id,
    workspaceId: g.workspaceId,
    templateId: g.templateId,
    templateName: g.templateName,
    templateVersion: g.templateVersion || null,
    status: statusName(g.status),
    data: g.data ?? {},
    outputUrl: g.outputUrl ?? null,
    error: g.error ?? null,
    createdAt: iso(g.createdAt),
    updatedAt: iso(g.updatedAt),
    test: g.test,
  };
}
