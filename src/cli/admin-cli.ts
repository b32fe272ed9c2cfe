// `docgen admin …`: the operator's command line for the admin API (contract §6). One
// subcommand per operation; human output by default, `--json` for scripts. It is a plain
// Connect client: everything it can do, the portal can do through the same services.
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { create, fromJson, toJson, type JsonValue } from '@bufbuild/protobuf';
import { timestampDate, ValueSchema, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { DEFAULT_PDF_OPTIONS, type JsonObject } from '../domain/template.ts';
import { ApiKeyService, type ApiKey } from '../gen/docgen/admin/v1/api_key_pb.js';
import { DeliveryService, DeliveryStatus, type Delivery } from '../gen/docgen/admin/v1/delivery_pb.js';
import {
  PdfOptionsSchema,
  TemplateService,
  TemplateStatus,
  TemplateVersionContentSchema,
  VariableDeclarationSchema,
  type Template,
  type TemplateVersion,
  type TemplateVersionContent,
  type VariableDeclaration,
} from '../gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointService, type WebhookEndpoint } from '../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceService, type Workspace } from '../gen/docgen/admin/v1/workspace_pb.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8081';
export const DEFAULT_ADMIN_TOKEN = 'dev-admin-token';

export interface AdminCliIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  env: Record<string, string | undefined>;
}

/** A mistake in the command line itself: exit code 2, with usage. */
class UsageError extends Error {
  readonly usage: string | undefined;
  constructor(message: string, usage?: string) {
    super(message);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

interface Clients {
  workspaces: Client<typeof WorkspaceService>;
  apiKeys: Client<typeof ApiKeyService>;
  templates: Client<typeof TemplateService>;
  webhooks: Client<typeof WebhookEndpointService>;
  deliveries: Client<typeof DeliveryService>;
}

type OptionSpec = { type: 'string' | 'boolean' };
type Values = Record<string, string | boolean | undefined>;

interface CommandContext {
  values: Values;
  args: string[];
  clients: Clients;
  json: boolean;
  /** Prints `json` with --json, `human` otherwise. */
  print(json: unknown, human: string): void;
}

interface Command {
  path: string[];
  /** Positional arguments and flags, for the usage line. */
  synopsis: string;
  summary: string;
  positionals: string[];
  options: Record<string, OptionSpec>;
  required?: string[];
  run(ctx: CommandContext): Promise<void>;
}

const PAGE_OPTIONS: Record<string, OptionSpec> = { 'page-size': { type: 'string' }, 'page-token': { type: 'string' } };
const CONTENT_OPTIONS: Record<string, OptionSpec> = {
  file: { type: 'string' },
  variables: { type: 'string' },
  css: { type: 'string' },
  partials: { type: 'string' },
  'pdf-options': { type: 'string' },
  publish: { type: 'boolean' },
};

const COMMANDS: Command[] = [
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
  {
    path: ['key', 'create'],
    synopsis: '--workspace WS_ID --name NAME --scopes SCOPE[,SCOPE] [--rate-limit PER_SECOND] [--burst N]',
    summary: 'Create an API key; the key is printed once and cannot be shown again.',
    positionals: [],
    options: { workspace: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'rate-limit': { type: 'string' }, burst: { type: 'string' } },
    required: ['workspace', 'name', 'scopes'],
    async run({ values, clients, print }) {
      const res = await clients.apiKeys.createApiKey({
        workspaceId: str(values.workspace),
        name: str(values.name),
        scopes: list(values.scopes),
        rateLimitPerSecond: values['rate-limit'] === undefined ? 0 : positiveNumber('--rate-limit', values['rate-limit']),
        rateLimitBurst: values.burst === undefined ? 0 : positiveInteger('--burst', values.burst),
      });
      const k = need(res.apiKey);
      print(
        { id: k.id, key: res.secret },
        `Created API key ${k.id} (${k.name}, scopes ${k.scopes.join(', ')})\n\n  ${res.secret}\n\nStore it now: it is shown only this once.`,
      );
    },
  },
  {
    path: ['key', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's API keys (prefix only, never the key).",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.apiKeys.listApiKeys({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { apiKeys: res.apiKeys.map(apiKeyJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED'],
          res.apiKeys.map((k) => [k.id, k.name, `${k.prefix}…`, k.scopes.join(','), time(k.createdAt), time(k.lastUsedAt), time(k.revokedAt)]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['key', 'revoke'],
    synopsis: 'KEY_ID',
    summary: 'Revoke an API key (takes effect within a second).',
    positionals: ['KEY_ID'],
    options: {},
    async run({ args, clients, print }) {
      const k = need((await clients.apiKeys.revokeApiKey({ id: args[0]! })).apiKey);
      print(apiKeyJson(k), `Revoked API key ${k.id} (${k.name}) at ${time(k.revokedAt)}`);
    },
  },
  {
    path: ['template', 'create'],
    synopsis: '--workspace WS_ID --name NAME --file BODY.liquid [--variables VARS.json] [--css FILE] [--partials DIR|FILE.json] [--pdf-options JSON|@FILE] [--publish]',
    summary: 'Create a template with its first version (optionally published).',
    positionals: [],
    options: { workspace: { type: 'string' }, name: { type: 'string' }, ...CONTENT_OPTIONS },
    required: ['workspace', 'name', 'file'],
    async run({ values, clients, print }) {
      const content = await readContent(values);
      const res = await clients.templates.createTemplate({
        workspaceId: str(values.workspace),
        name: str(values.name),
        content,
        publish: values.publish === true,
      });
      const t = need(res.template);
      const v = need(res.version);
      print({ id: t.id, version: v.version }, `Created template ${t.id} (${t.name}), version ${v.version}${t.publishedVersion === v.version ? ', published' : ''}`);
    },
  },
  {
    path: ['template', 'get'],
    synopsis: 'TPL_ID',
    summary: 'Show a template.',
    positionals: ['TPL_ID'],
    options: {},
    async run({ args, clients, print }) {
      const t = need((await clients.templates.getTemplate({ id: args[0]! })).template);
      print(
        templateJson(t),
        fields([
          ['id', t.id],
          ['workspace', t.workspaceId],
          ['name', t.name],
          ['status', templateStatus(t.status)],
          ['published version', t.publishedVersion === 0 ? 'none' : String(t.publishedVersion)],
          ['latest version', String(t.latestVersion)],
          ['created', time(t.createdAt)],
          ['updated', time(t.updatedAt)],
        ]),
      );
    },
  },
  {
    path: ['template', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's templates.",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.templates.listTemplates({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { templates: res.templates.map(templateJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'NAME', 'STATUS', 'PUBLISHED', 'LATEST', 'UPDATED'],
          res.templates.map((t) => [t.id, t.name, templateStatus(t.status), t.publishedVersion ? String(t.publishedVersion) : '-', String(t.latestVersion), time(t.updatedAt)]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['template', 'version', 'add'],
    synopsis: 'TPL_ID --file BODY.liquid [--variables VARS.json] [--css FILE] [--partials DIR|FILE.json] [--pdf-options JSON|@FILE] [--publish]',
    summary: 'Add a new version to a template (refused once archived).',
    positionals: ['TPL_ID'],
    options: CONTENT_OPTIONS,
    required: ['file'],
    async run({ args, values, clients, print }) {
      const content = await readContent(values);
      const res = await clients.templates.createTemplateVersion({ templateId: args[0]!, content, publish: values.publish === true });
      const t = need(res.template);
      const v = need(res.version);
      print({ id: t.id, version: v.version }, `Added version ${v.version} to template ${t.id}${t.publishedVersion === v.version ? ', published' : ''}`);
    },
  },
  {
    path: ['template', 'version', 'list'],
    synopsis: 'TPL_ID',
    summary: "List a template's versions.",
    positionals: ['TPL_ID'],
    options: {},
    async run({ args, clients, print }) {
      const templateId = args[0]!;
      const [res, t] = await Promise.all([
        clients.templates.listTemplateVersions({ templateId }),
        clients.templates.getTemplate({ id: templateId }).then((r) => need(r.template)),
      ]);
      print(
        { versions: res.versions.map(versionJson) },
        table(
          ['VERSION', 'PUBLISHED', 'VARIABLES', 'CREATED'],
          res.versions.map((v) => [String(v.version), v.version === t.publishedVersion ? 'yes' : '', (v.content?.variables ?? []).map((d) => d.name).join(',') || '-', time(v.createdAt)]),
        ),
      );
    },
  },
  {
    path: ['template', 'version', 'get'],
    synopsis: 'TPL_ID --version N',
    summary: 'Show one version with its content.',
    positionals: ['TPL_ID'],
    options: { version: { type: 'string' } },
    required: ['version'],
    async run({ args, values, clients, print }) {
      const v = need((await clients.templates.getTemplateVersion({ templateId: args[0]!, version: positiveInteger('--version', values.version) })).version);
      const c = v.content;
      const vars = (c?.variables ?? []).map((d) => `${d.name}${d.required ? ' (required)' : ''}${d.defaultValue ? ` = ${JSON.stringify(toJson(ValueSchema, d.defaultValue))}` : ''}${d.description ? ` - ${d.description}` : ''}`);
      print(
        versionJson(v),
        fields([
          ['template', v.templateId],
          ['version', String(v.version)],
          ['created', time(v.createdAt)],
          ['variables', vars.length ? vars.join('\n' + ' '.repeat(13)) : 'none'],
          ['partials', Object.keys(c?.partials ?? {}).join(', ') || 'none'],
          ['pdf', c?.pdfOptions ? `${c.pdfOptions.pageSize}${c.pdfOptions.landscape ? ' landscape' : ''}` : '-'],
        ]) + `\n\n${c?.body ?? ''}`,
      );
    },
  },
  {
    path: ['template', 'publish'],
    synopsis: 'TPL_ID --version N',
    summary: 'Publish a version after checking its Liquid, declarations and PDF options.',
    positionals: ['TPL_ID'],
    options: { version: { type: 'string' } },
    required: ['version'],
    async run({ args, values, clients, print }) {
      const res = await clients.templates.publishTemplateVersion({ templateId: args[0]!, version: positiveInteger('--version', values.version) });
      const t = need(res.template);
      print(templateJson(t), `Published version ${t.publishedVersion} of template ${t.id}`);
    },
  },
  {
    path: ['template', 'archive'],
    synopsis: 'TPL_ID',
    summary: 'Archive a template: its generations fail and it takes no new versions.',
    positionals: ['TPL_ID'],
    options: {},
    async run({ args, clients, print }) {
      const t = need((await clients.templates.archiveTemplate({ id: args[0]! })).template);
      print(templateJson(t), `Archived template ${t.id} (${t.name})`);
    },
  },
  {
    path: ['template', 'preview'],
    synopsis: 'TPL_ID [--version N] [--data VALUES.json] --out FILE.pdf',
    summary: 'Render a version (default: the published one) to a PDF file; nothing is stored.',
    positionals: ['TPL_ID'],
    options: { version: { type: 'string' }, data: { type: 'string' }, out: { type: 'string' } },
    required: ['out'],
    async run({ args, values, clients, print }) {
      const variables = values.data === undefined ? {} : await readJsonObject('--data', str(values.data));
      const version = values.version === undefined ? 0 : positiveInteger('--version', values.version);
      const res = await clients.templates.previewTemplateVersion({ templateId: args[0]!, version, variables: variables as JsonObject });
      const out = str(values.out);
      await writeFile(out, res.pdf);
      print({ out, bytes: res.pdf.length }, `Wrote ${res.pdf.length} bytes to ${out}`);
    },
  },
  {
    path: ['webhook', 'create'],
    synopsis: '--workspace WS_ID --url URL --events EVENT[,EVENT] [--description TEXT]',
    summary: 'Create a webhook endpoint; its signing secret is printed once.',
    positionals: [],
    options: { workspace: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' } },
    required: ['workspace', 'url', 'events'],
    async run({ values, clients, print }) {
      const res = await clients.webhooks.createWebhookEndpoint({
        workspaceId: str(values.workspace),
        url: str(values.url),
        events: list(values.events),
        description: values.description === undefined ? '' : str(values.description),
      });
      const e = need(res.endpoint);
      print(
        { id: e.id, secret: res.secret },
        `Created webhook endpoint ${e.id} -> ${e.url} (${e.events.join(', ')})\n\n  ${res.secret}\n\nStore the signing secret now: it is shown only this once.`,
      );
    },
  },
  {
    path: ['webhook', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's webhook endpoints.",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.webhooks.listWebhookEndpoints({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { endpoints: res.endpoints.map(endpointJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'URL', 'EVENTS', 'CREATED', 'SECRET ROTATED'],
          res.endpoints.map((e) => [e.id, e.url, e.events.join(','), time(e.createdAt), time(e.secretRotatedAt)]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['webhook', 'delete'],
    synopsis: 'WHE_ID',
    summary: 'Delete a webhook endpoint (its past deliveries stay readable).',
    positionals: ['WHE_ID'],
    options: {},
    async run({ args, clients, print }) {
      await clients.webhooks.deleteWebhookEndpoint({ id: args[0]! });
      print({ id: args[0]!, deleted: true }, `Deleted webhook endpoint ${args[0]!}`);
    },
  },
  {
    path: ['webhook', 'rotate'],
    synopsis: 'WHE_ID',
    summary: 'Issue a new signing secret; the previous one keeps verifying for 24 h.',
    positionals: ['WHE_ID'],
    options: {},
    async run({ args, clients, print }) {
      const res = await clients.webhooks.rotateWebhookEndpointSecret({ id: args[0]! });
      const e = need(res.endpoint);
      print(
        { id: e.id, secret: res.secret },
        `Rotated the signing secret of ${e.id}\n\n  ${res.secret}\n\nStore it now: it is shown only this once. The previous secret keeps verifying for 24 h.`,
      );
    },
  },
  {
    path: ['deliveries', 'list'],
    synopsis: '--workspace WS_ID [--generation GEN_ID] [--page-size N] [--page-token TOKEN]',
    summary: 'List webhook deliveries with their attempts, newest first (--generation alone also works).',
    positionals: [],
    options: { workspace: { type: 'string' }, generation: { type: 'string' }, ...PAGE_OPTIONS },
    async run({ values, clients, print }) {
      if (values.workspace === undefined && values.generation === undefined) throw new UsageError('give --workspace, --generation, or both');
      const res = await clients.deliveries.listDeliveries({
        workspaceId: values.workspace === undefined ? '' : str(values.workspace),
        generationId: values.generation === undefined ? '' : str(values.generation),
        ...page(values),
      });
      print(
        { deliveries: res.deliveries.map(deliveryJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'EVENT', 'GENERATION', 'ENDPOINT', 'STATUS', 'ATTEMPTS', 'LAST RESULT'],
          res.deliveries.map((d) => [d.id, d.event, d.generationId, d.endpointId, deliveryStatus(d.status), String(d.attempts.length), lastResult(d)]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['deliveries', 'get'],
    synopsis: 'DLV_ID',
    summary: 'Show a delivery and every attempt.',
    positionals: ['DLV_ID'],
    options: {},
    async run({ args, clients, print }) {
      const d = need((await clients.deliveries.getDelivery({ id: args[0]! })).delivery);
      print(deliveryJson(d), deliveryHuman(d));
    },
  },
  {
    path: ['deliveries', 'redeliver'],
    synopsis: 'DLV_ID',
    summary: 'Start a new round of attempts for a delivery (typically a dropped one).',
    positionals: ['DLV_ID'],
    options: {},
    async run({ args, clients, print }) {
      const d = need((await clients.deliveries.redeliverDelivery({ id: args[0]! })).delivery);
      print(deliveryJson(d), `Redelivering ${d.id} (${d.event} for ${d.generationId}); status ${deliveryStatus(d.status)}`);
    },
  },
];

const RESOURCES = ['workspace', 'key', 'template', 'webhook', 'deliveries'];

function usage(commands: Command[] = COMMANDS): string {
  const lines = commands.map((c) => `  docgen admin ${c.path.join(' ')} ${c.synopsis}\n      ${c.summary}`);
  return `Usage:\n${lines.join('\n')}

Every command accepts --json (machine-readable output) and --help.
Environment: DOCGEN_ADMIN_URL (default ${DEFAULT_ADMIN_URL}), DOCGEN_ADMIN_TOKEN (default ${DEFAULT_ADMIN_TOKEN}).`;
}

/** Runs one admin command; resolves to the exit code (0 ok, 1 refused/failed, 2 bad usage). */
export async function runAdminCli(argv: string[], io: AdminCliIo): Promise<number> {
  const write = (stream: AdminCliIo['stdout'], text: string) => stream.write(text.endsWith('\n') ? text : `${text}\n`);
  const words = argv.filter((a) => !a.startsWith('-'));
  if (argv.length === 0 || words[0] === 'help' || (words.length === 0 && argv.some((a) => a === '--help' || a === '-h'))) {
    write(argv.length === 0 ? io.stderr : io.stdout, usage());
    return argv.length === 0 ? 2 : 0;
  }

  // The longest command path that the leading words spell.
  const command = COMMANDS.filter((c) => c.path.every((p, i) => argv[i] === p)).sort((a, b) => b.path.length - a.path.length)[0];
  if (!command) {
    const related = COMMANDS.filter((c) => c.path[0] === argv[0]);
    const wantsHelp = argv.includes('--help') || argv.includes('-h');
    if (wantsHelp && related.length > 0) {
      write(io.stdout, usage(related));
      return 0;
    }
    const what = RESOURCES.includes(argv[0]!) ? `unknown command ${JSON.stringify(argv.slice(0, 3).filter((a) => !a.startsWith('-')).join(' '))}` : `unknown resource ${JSON.stringify(argv[0])}`;
    write(io.stderr, `docgen admin: ${what}\n${usage(related.length > 0 ? related : COMMANDS)}`);
    return 2;
  }

  const commandUsage = `Usage: docgen admin ${command.path.join(' ')} ${command.synopsis} [--json]\n  ${command.summary}`;
  let values: Values;
  let args: string[];
  try {
    const parsed = parseArgs({
      args: argv.slice(command.path.length),
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    values = parsed.values as Values;
    args = parsed.positionals;
  } catch (err) {
    write(io.stderr, `docgen admin: ${(err as Error).message}\n${commandUsage}`);
    return 2;
  }
  if (values.help) {
    write(io.stdout, commandUsage);
    return 0;
  }
  const json = values.json === true;

  try {
    if (args.length !== command.positionals.length) {
      throw new UsageError(
        args.length < command.positionals.length ? `missing ${command.positionals.slice(args.length).join(' ')}` : `unexpected argument ${JSON.stringify(args[command.positionals.length])}`,
      );
    }
    for (const name of command.required ?? []) {
      if (values[name] === undefined || values[name] === '') throw new UsageError(`--${name} is required`);
    }
    const clients = connect(io.env);
    await command.run({
      values,
      args,
      clients,
      json,
      print(jsonValue, human) {
        write(io.stdout, json ? JSON.stringify(jsonValue, null, 2) : human);
      },
    });
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      write(io.stderr, `docgen admin: ${err.message}\n${commandUsage}`);
      return 2;
    }
    write(io.stderr, `docgen admin: ${describeError(err, io.env)}`);
    return 1;
  }
}

function connect(env: AdminCliIo['env']): Clients {
  const baseUrl = (env.DOCGEN_ADMIN_URL || DEFAULT_ADMIN_URL).replace(/\/+$/, '');
  const token = env.DOCGEN_ADMIN_TOKEN || DEFAULT_ADMIN_TOKEN;
  const auth: Interceptor = (next) => (req) => {
    req.header.set('authorization', `Bearer ${token}`);
    return next(req);
  };
  const transport = createConnectTransport({ baseUrl, httpVersion: '1.1', interceptors: [auth], defaultTimeoutMs: 120_000 });
  return {
    workspaces: createClient(WorkspaceService, transport),
    apiKeys: createClient(ApiKeyService, transport),
    templates: createClient(TemplateService, transport),
    webhooks: createClient(WebhookEndpointService, transport),
    deliveries: createClient(DeliveryService, transport),
  };
}

function describeError(err: unknown, env: AdminCliIo['env']): string {
  if (err instanceof ConnectError) {
    const url = env.DOCGEN_ADMIN_URL || DEFAULT_ADMIN_URL;
    if (err.code === Code.Unauthenticated) return `${err.rawMessage} (check DOCGEN_ADMIN_TOKEN)`;
    if (err.code === Code.Unavailable && /fetch failed|ECONNREFUSED|ENOTFOUND|socket|connect/i.test(err.rawMessage)) {
      return `cannot reach the admin API at ${url}: ${err.rawMessage} (is docgen running? check DOCGEN_ADMIN_URL)`;
    }
    return err.rawMessage;
  }
  return (err as Error)?.message ?? String(err);
}

// ---------------------------------------------------------------------------------------
// Template content from files.

/**
 * Reads the content flags. VARS.json is either a list
 *   [{"name": "customer", "required": true, "default": …, "description": "…"}]
 * or an object keyed by name
 *   {"customer": {"required": true, "default": …, "description": "…"}}.
 * --partials DIR: every file in DIR is a partial named after the file without its extension;
 * --partials FILE.json: an object of partial name to Liquid source.
 * --pdf-options: a JSON object (or @FILE holding one); omitted fields take their defaults.
 */
async function readContent(values: Values): Promise<TemplateVersionContent> {
  const body = await readText('--file', str(values.file));
  const css = values.css === undefined ? '' : await readText('--css', str(values.css));
  const variables = values.variables === undefined ? [] : parseVariables(await readJson('--variables', str(values.variables)));
  const partials = values.partials === undefined ? {} : await readPartials(str(values.partials));
  const content = create(TemplateVersionContentSchema, { body, css, partials, variables });
  if (values['pdf-options'] !== undefined) content.pdfOptions = await readPdfOptions(str(values['pdf-options']));
  return content;
}

async function readText(flag: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

async function readJson(flag: string, file: string): Promise<unknown> {
  const text = await readText(flag, file);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} ${file}: not valid JSON (${(err as Error).message})`);
  }
}

async function readJsonObject(flag: string, file: string): Promise<Record<string, unknown>> {
  const value = await readJson(flag, file);
  if (!isPlainObject(value)) throw new UsageError(`${flag} ${file}: must hold a JSON object`);
  return value;
}

const VARIABLE_KEYS = ['name', 'required', 'default', 'description'];

export function parseVariables(value: unknown): VariableDeclaration[] {
  let entries: Array<[string | undefined, unknown]>;
  if (Array.isArray(value)) entries = value.map((v) => [undefined, v]);
  else if (isPlainObject(value)) entries = Object.entries(value);
  else throw new UsageError('--variables: expected a JSON list of declarations or an object keyed by variable name');
  return entries.map(([key, raw], i) => {
    const where = key === undefined ? `--variables: entry ${i}` : `--variables: ${JSON.stringify(key)}`;
    if (!isPlainObject(raw)) throw new UsageError(`${where} must be an object`);
    const unknown = Object.keys(raw).filter((k) => !VARIABLE_KEYS.includes(k) || (key !== undefined && k === 'name'));
    if (unknown.length > 0) throw new UsageError(`${where}: unknown field ${JSON.stringify(unknown[0])} (use ${VARIABLE_KEYS.filter((k) => key === undefined || k !== 'name').join(', ')})`);
    const name = key ?? raw.name;
    if (typeof name !== 'string' || name === '') throw new UsageError(`${where}: "name" must be a non-empty string`);
    if (raw.required !== undefined && typeof raw.required !== 'boolean') throw new UsageError(`${where}: "required" must be true or false`);
    if (raw.description !== undefined && typeof raw.description !== 'string') throw new UsageError(`${where}: "description" must be a string`);
    return create(VariableDeclarationSchema, {
      name,
      required: raw.required === true,
      description: (raw.description as string | undefined) ?? '',
      defaultValue: Object.hasOwn(raw, 'default') ? fromJson(ValueSchema, raw.default as JsonValue) : undefined,
    });
  });
}

/** --partials DIR (a file per partial, named after the file) or FILE.json ({"name": "source"}). */
async function readPartials(path: string): Promise<Record<string, string>> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (err) {
    throw new UsageError(`--partials ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!isDirectory) {
    const value = await readJsonObject('--partials', path);
    for (const [name, text] of Object.entries(value)) {
      if (typeof text !== 'string') throw new UsageError(`--partials ${path}: partial ${JSON.stringify(name)} must be a string of Liquid`);
    }
    return value as Record<string, string>;
  }
  const partials: Record<string, string> = {};
  for (const file of (await readdir(path)).sort()) {
    const full = join(path, file);
    if (file.startsWith('.') || !(await stat(full)).isFile()) continue;
    const name = basename(file, extname(file));
    if (Object.hasOwn(partials, name)) throw new UsageError(`--partials ${path}: two files give the partial name ${JSON.stringify(name)}`);
    partials[name] = await readText('--partials', full);
  }
  return partials;
}

const PDF_KEYS = ['pageSize', 'landscape', 'margins', 'printBackground', 'headerTemplate', 'footerTemplate'];

async function readPdfOptions(value: string) {
  let parsed: unknown;
  if (value.startsWith('@')) parsed = await readJson('--pdf-options', value.slice(1));
  else {
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      throw new UsageError(`--pdf-options: not valid JSON (${(err as Error).message}); pass a JSON object or @FILE`);
    }
  }
  if (!isPlainObject(parsed)) throw new UsageError('--pdf-options: must be a JSON object');
  const unknown = Object.keys(parsed).filter((k) => !PDF_KEYS.includes(k));
  if (unknown.length > 0) throw new UsageError(`--pdf-options: unknown field ${JSON.stringify(unknown[0])} (use ${PDF_KEYS.join(', ')})`);
  const d = DEFAULT_PDF_OPTIONS;
  const o = parsed;
  const typed = (key: string, type: 'string' | 'boolean') => {
    if (o[key] !== undefined && typeof o[key] !== type) throw new UsageError(`--pdf-options: "${key}" must be a ${type}`);
    return o[key] as never;
  };
  let margins = { ...d.margins };
  if (typeof o.margins === 'string') margins = { top: o.margins, right: o.margins, bottom: o.margins, left: o.margins };
  else if (isPlainObject(o.margins)) {
    for (const [side, v] of Object.entries(o.margins)) {
      if (!['top', 'right', 'bottom', 'left'].includes(side)) throw new UsageError(`--pdf-options: unknown margin ${JSON.stringify(side)}`);
      if (typeof v !== 'string' && typeof v !== 'number') throw new UsageError(`--pdf-options: margin ${side} must be a CSS length such as "10mm"`);
      margins[side as keyof typeof margins] = String(v);
    }
  } else if (o.margins !== undefined) throw new UsageError('--pdf-options: "margins" must be a length or an object {top, right, bottom, left}');
  // Sent in full: a proto3 message cannot say "unset", so the defaults are filled in here.
  return create(PdfOptionsSchema, {
    pageSize: typed('pageSize', 'string') ?? d.pageSize,
    landscape: typed('landscape', 'boolean') ?? d.landscape,
    margins,
    printBackground: typed('printBackground', 'boolean') ?? d.printBackground,
    headerTemplate: typed('headerTemplate', 'string') ?? d.headerTemplate,
    footerTemplate: typed('footerTemplate', 'string') ?? d.footerTemplate,
  });
}

// ---------------------------------------------------------------------------------------
// Flag values.

function str(value: string | boolean | undefined): string {
  return typeof value === 'string' ? value : '';
}

function list(value: string | boolean | undefined): string[] {
  return str(value).split(',').map((s) => s.trim()).filter(Boolean);
}

function positiveInteger(flag: string, value: string | boolean | undefined): number {
  const text = str(value);
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 2 ** 31 - 1) throw new UsageError(`${flag} must be a whole number of 1 or more`);
  return Number(text);
}

function positiveNumber(flag: string, value: string | boolean | undefined): number {
  const n = Number(str(value));
  if (str(value) === '' || !Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a number greater than 0`);
  return n;
}

function page(values: Values): { pageSize: number; pageToken: string } {
  const size = values['page-size'];
  let pageSize = 0;
  if (size !== undefined) {
    if (!/^\d+$/.test(str(size))) throw new UsageError('--page-size must be a whole number');
    pageSize = Math.min(Number(size), 2 ** 31 - 1);
  }
  return { pageSize, pageToken: str(values['page-token']) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('The admin API sent an incomplete response');
  return value;
}

// ---------------------------------------------------------------------------------------
// Output.

function iso(t: Timestamp | undefined): string | null {
  return t ? timestampDate(t).toISOString() : null;
}

function time(t: Timestamp | undefined): string {
  return t ? timestampDate(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-';
}

function templateStatus(s: TemplateStatus): string {
  return s === TemplateStatus.ACTIVE ? 'ACTIVE' : s === TemplateStatus.ARCHIVED ? 'ARCHIVED' : 'UNSPECIFIED';
}

function deliveryStatus(s: DeliveryStatus): string {
  return s === DeliveryStatus.PENDING ? 'PENDING' : s === DeliveryStatus.SUCCEEDED ? 'SUCCEEDED' : s === DeliveryStatus.DROPPED ? 'DROPPED' : 'UNSPECIFIED';
}

function workspaceJson(w: Workspace) {
  return { id: w.id, name: w.name, createdAt: iso(w.createdAt) };
}

function apiKeyJson(k: ApiKey) {
  return {
    id: k.id,
    workspaceId: k.workspaceId,
    name: k.name,
    scopes: k.scopes,
    prefix: k.prefix,
    createdAt: iso(k.createdAt),
    lastUsedAt: iso(k.lastUsedAt),
    revokedAt: iso(k.revokedAt),
    rateLimitPerSecond: k.rateLimitPerSecond || null,
    rateLimitBurst: k.rateLimitBurst || null,
  };
}

function templateJson(t: Template) {
  return {
    id: t.id,
    workspaceId: t.workspaceId,
    name: t.name,
    status: templateStatus(t.status),
    publishedVersion: t.publishedVersion || null,
    latestVersion: t.latestVersion,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}

function versionJson(v: TemplateVersion) {
  const c = v.content;
  return {
    templateId: v.templateId,
    version: v.version,
    createdAt: iso(v.createdAt),
    content: c
      ? {
          body: c.body,
          css: c.css,
          partials: c.partials,
          variables: c.variables.map((d) => ({
            name: d.name,
            required: d.required,
            ...(d.defaultValue ? { default: toJson(ValueSchema, d.defaultValue) } : {}),
            description: d.description,
          })),
          pdfOptions: c.pdfOptions
            ? {
                pageSize: c.pdfOptions.pageSize,
                landscape: c.pdfOptions.landscape,
                margins: { top: c.pdfOptions.margins?.top ?? '0', right: c.pdfOptions.margins?.right ?? '0', bottom: c.pdfOptions.margins?.bottom ?? '0', left: c.pdfOptions.margins?.left ?? '0' },
                printBackground: c.pdfOptions.printBackground,
                headerTemplate: c.pdfOptions.headerTemplate,
                footerTemplate: c.pdfOptions.footerTemplate,
              }
            : null,
        }
      : null,
  };
}

function endpointJson(e: WebhookEndpoint) {
  return {
    id: e.id,
    workspaceId: e.workspaceId,
    url: e.url,
    events: e.events,
    description: e.description,
    createdAt: iso(e.createdAt),
    secretRotatedAt: iso(e.secretRotatedAt),
  };
}

function deliveryJson(d: Delivery) {
  return {
    id: d.id,
    workspaceId: d.workspaceId,
    endpointId: d.endpointId,
    eventId: d.eventId,
    event: d.event,
    generationId: d.generationId,
    status: deliveryStatus(d.status),
    attempts: d.attempts.map((a) => ({ number: a.number, attemptedAt: iso(a.attemptedAt), statusCode: a.statusCode || null, error: a.error || null, durationMs: a.durationMs })),
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
    nextAttemptAt: iso(d.nextAttemptAt),
  };
}

function lastResult(d: Delivery): string {
  const a = d.attempts[d.attempts.length - 1];
  if (!a) return '-';
  return a.error ? (a.statusCode ? `${a.statusCode} ${a.error}` : a.error) : String(a.statusCode);
}

function deliveryHuman(d: Delivery): string {
  const head = fields([
    ['id', d.id],
    ['event', `${d.event} (${d.eventId})`],
    ['generation', d.generationId],
    ['endpoint', d.endpointId],
    ['status', deliveryStatus(d.status)],
    ['next attempt', time(d.nextAttemptAt)],
    ['created', time(d.createdAt)],
  ]);
  const attempts = table(
    ['#', 'AT', 'STATUS', 'DURATION', 'ERROR'],
    d.attempts.map((a) => [String(a.number), time(a.attemptedAt), a.statusCode ? String(a.statusCode) : '-', `${a.durationMs} ms`, a.error || '']),
  );
  return `${head}\n\n${attempts}`;
}

function fields(rows: Array<[string, string]>): string {
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width + 1)}${v}`).join('\n');
}

function table(header: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function more(nextPageToken: string): string {
  return nextPageToken ? `\n(more: --page-token ${nextPageToken})` : '';
}
