// `docgen admin template …`: templates, their versions, publishing and previews.
import { writeFile } from 'node:fs/promises';
import { toJson } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { JsonObject } from '../../domain/template.ts';
import { DEFAULT_PDF_OPTIONS } from '../../domain/document-settings.ts';
import { versionNoteIssue } from '../../domain/version-note.ts';
import { archivedInsteadOfDeleted } from '../../domain/template-delete.ts';
import {
  DeleteTemplateOutcome,
  TemplateStatus,
  TemplateVersionAuthorKind,
  type TemplateVersionAuthor,
  type Template,
  type TemplateVersion,
  type TemplateVersionContent,
} from '../../gen/docgen/admin/v1/template_pb.js';
import { STAMP_DEFAULTS } from '../../render/finishing/document-settings.ts';
import { need, page, PAGE_OPTIONS, positiveInteger, str, UsageError, type Command } from './command.ts';
import { GALLERY_NAMES } from '../../gallery/gallery.ts';
import type { VariableSchema } from '../../domain/variable-schema.ts';
import { typeNameFor, variablesInterface } from '../../domain/variable-types.ts';
import { fields, iso, more, table, time } from './output.ts';
import { CONTENT_OPTIONS, readContent, readJsonObject } from './template-files.ts';
import { DOCUMENT_SETTING_SYNOPSIS } from './document-setting-flags.ts';

const NOTE_OPTION = { note: { type: 'string' } } as const;

export const templateCommands: Command[] = [
  {
    path: ['template', 'create'],
    synopsis:
      '--workspace WS_ID --name NAME (--file BODY.liquid [--variables VARS.json] [--css FILE] [--partials DIR|FILE.json] [--pdf-options JSON|@FILE] [--sample-data VALUES.json] [--title TEXT] [--metadata JSON|@FILE] [--locale TAG] [--time-zone ZONE] ' +
      DOCUMENT_SETTING_SYNOPSIS +
      ' | --from-gallery ' +
      `${GALLERY_NAMES.join('|')}) [--publish] [--note TEXT]`,
    summary: 'Create a template with its first version (optionally published), from files or from the starter gallery.',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      name: { type: 'string' },
      'from-gallery': { type: 'string' },
      ...CONTENT_OPTIONS,
      ...NOTE_OPTION,
    },
    required: ['workspace', 'name'],
    async run({ values, clients, print }) {
      const fromGallery = values['from-gallery'] === undefined ? '' : str(values['from-gallery']);
      if (fromGallery !== '') {
        const given = Object.keys(CONTENT_OPTIONS).filter((k) => k !== 'publish' && values[k] !== undefined);
        if (given.length > 0)
          throw new UsageError(
            `--from-gallery takes its content from the gallery; leave out ${given.map((k) => `--${k}`).join(', ')}`,
          );
      } else if (values.file === undefined) {
        throw new UsageError('--file (the Liquid body) or --from-gallery NAME is required');
      }
      const res = await clients.templates.createTemplate({
        workspaceId: str(values.workspace),
        name: str(values.name),
        ...(fromGallery === '' ? { content: await readContent(values) } : { fromGallery }),
        publish: values.publish === true,
        note: noteOf(values),
      });
      const t = need(res.template);
      const v = need(res.version);
      print(
        { id: t.id, version: v.version },
        `Created template ${t.id} (${t.name}), version ${v.version}${t.publishedVersion === v.version ? ', published' : ''}`,
      );
    },
  },
  {
    path: ['template', 'gallery'],
    synopsis: '',
    summary: 'List the starter gallery (what template create --from-gallery takes).',
    positionals: [],
    options: {},
    async run({ clients, print }) {
      const res = await clients.templates.listGalleryTemplates({});
      print(
        { templates: res.templates.map((t) => ({ name: t.name, title: t.title, description: t.description })) },
        table(
          ['NAME', 'TITLE', 'DESCRIPTION'],
          res.templates.map((t) => [t.name, t.title, t.description]),
        ),
      );
    },
  },
  {
    path: ['template', 'types'],
    synopsis: 'TPL_ID [--version N] [--type-name NAME]',
    summary:
      "Print a TypeScript type of a version's variables (default: the published version), for clients that send them.",
    positionals: ['TPL_ID'],
    options: { version: { type: 'string' }, 'type-name': { type: 'string' } },
    async run({ args, values, clients, print }) {
      const templateId = args[0]!;
      const t = need((await clients.templates.getTemplate({ id: templateId })).template);
      const number = values.version === undefined ? t.publishedVersion : positiveInteger('--version', values.version);
      if (number === 0) throw new UsageError(`template ${templateId} has no published version; pass --version N`);
      const v = need((await clients.templates.getTemplateVersion({ templateId, version: number })).version);
      const typeName = values['type-name'] === undefined ? typeNameFor(t.name) : str(values['type-name']);
      if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(typeName))
        throw new UsageError(`--type-name ${JSON.stringify(typeName)} is not a TypeScript identifier`);
      const declarations = (v.content?.variables ?? []).map((d) => ({
        name: d.name,
        required: d.required,
        hasDefault: d.defaultValue !== undefined && d.defaultValue.kind.case !== undefined,
        description: d.description,
        schema: d.schema as VariableSchema | undefined,
      }));
      const source =
        `// Variables of template ${t.id} (${t.name}), version ${v.version}: docgen admin template types\n` +
        variablesInterface(declarations, typeName);
      print({ templateId: t.id, version: v.version, typeName, typescript: source }, source);
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
          res.templates.map((t) => [
            t.id,
            t.name,
            templateStatus(t.status),
            t.publishedVersion ? String(t.publishedVersion) : '-',
            String(t.latestVersion),
            time(t.updatedAt),
          ]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['template', 'version', 'add'],
    synopsis:
      'TPL_ID --file BODY.liquid [--variables VARS.json] [--css FILE] [--partials DIR|FILE.json] [--pdf-options JSON|@FILE] [--sample-data VALUES.json] [--title TEXT] [--metadata JSON|@FILE] [--locale TAG] [--time-zone ZONE] ' +
      DOCUMENT_SETTING_SYNOPSIS +
      ' [--publish] [--note TEXT]',
    summary: 'Add a new version to a template (refused once archived); --note is shown in its history.',
    positionals: ['TPL_ID'],
    options: { ...CONTENT_OPTIONS, ...NOTE_OPTION },
    required: ['file'],
    async run({ args, values, clients, print }) {
      const content = await readContent(values);
      const res = await clients.templates.createTemplateVersion({
        templateId: args[0]!,
        content,
        publish: values.publish === true,
        note: noteOf(values),
      });
      const t = need(res.template);
      const v = need(res.version);
      print(
        { id: t.id, version: v.version },
        `Added version ${v.version} to template ${t.id}${t.publishedVersion === v.version ? ', published' : ''}`,
      );
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
          ['VERSION', 'PUBLISHED', 'VARIABLES', 'CREATED', 'AUTHOR', 'NOTE'],
          res.versions.map((v) => [
            String(v.version),
            v.version === t.publishedVersion ? 'yes' : '',
            (v.content?.variables ?? []).map((d) => d.name).join(',') || '-',
            time(v.createdAt),
            authorText(v.author),
            v.note.replace(/\s+/g, ' ') || '-',
          ]),
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
      const v = need(
        (
          await clients.templates.getTemplateVersion({
            templateId: args[0]!,
            version: positiveInteger('--version', values.version),
          })
        ).version,
      );
      const c = v.content;
      const vars = (c?.variables ?? []).map(
        (d) =>
          `${d.name}${d.required ? ' (required)' : ''}${d.defaultValue ? ` = ${JSON.stringify(toJson(ValueSchema, d.defaultValue))}` : ''}${d.description ? ` - ${d.description}` : ''}`,
      );
      print(
        versionJson(v),
        fields([
          ['template', v.templateId],
          ['version', String(v.version)],
          ['created', time(v.createdAt)],
          ['author', authorText(v.author)],
          ['note', v.note || '-'],
          ['variables', vars.length ? vars.join('\n' + ' '.repeat(13)) : 'none'],
          ['partials', Object.keys(c?.partials ?? {}).join(', ') || 'none'],
          ['pdf', c?.pdfOptions ? `${c.pdfOptions.pageSize}${c.pdfOptions.landscape ? ' landscape' : ''}` : '-'],
          ['sample data', c?.sampleData ? Object.keys(c.sampleData).join(', ') || '{}' : 'none'],
          ['locale', `${c?.locale || 'en-US'}, time zone ${c?.timeZone || 'UTC'}`],
          ['standards', standardsLine(c)],
          ['protection', protectionLine(c)],
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
      const res = await clients.templates.publishTemplateVersion({
        templateId: args[0]!,
        version: positiveInteger('--version', values.version),
      });
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
    path: ['template', 'rename'],
    synopsis: 'TPL_ID --name NAME',
    summary: 'Rename a template (its id stays; the rules of a name at create apply).',
    positionals: ['TPL_ID'],
    options: { name: { type: 'string' } },
    required: ['name'],
    async run({ args, values, clients, print }) {
      const t = need((await clients.templates.renameTemplate({ id: args[0]!, name: str(values.name) })).template);
      print(templateJson(t), `Renamed template ${t.id} to ${t.name}`);
    },
  },
  {
    path: ['template', 'unarchive'],
    synopsis: 'TPL_ID',
    summary: 'Make an archived template active again (owners and the operator).',
    positionals: ['TPL_ID'],
    options: {},
    async run({ args, clients, print }) {
      const t = need((await clients.templates.unarchiveTemplate({ id: args[0]! })).template);
      print(templateJson(t), `Unarchived template ${t.id} (${t.name})`);
    },
  },
  {
    path: ['template', 'delete'],
    synopsis: 'TPL_ID',
    summary:
      'Delete a template no generation has used, with its versions; one that generations used is archived instead.',
    positionals: ['TPL_ID'],
    options: {},
    async run({ args, clients, print }) {
      const id = args[0]!;
      const res = await clients.templates.deleteTemplate({ id });
      if (res.outcome === DeleteTemplateOutcome.DELETED) {
        print({ id, outcome: 'deleted' }, `Deleted template ${id} and its versions`);
        return;
      }
      const t = need(res.template);
      const count = Number(res.generationCount);
      print(
        { id, outcome: 'archived', generationCount: count, template: templateJson(t) },
        archivedInsteadOfDeleted(t.name, count),
      );
    },
  },
  {
    path: ['template', 'preview'],
    synopsis: 'TPL_ID [--version N] [--data VALUES.json] --out FILE.pdf',
    summary:
      "Render a version (default: the published one) to a PDF file with --data (default: the version's sample data); nothing is stored.",
    positionals: ['TPL_ID'],
    options: { version: { type: 'string' }, data: { type: 'string' }, out: { type: 'string' } },
    required: ['out'],
    async run({ args, values, clients, print }) {
      // Without --data the variables stay unset: the server uses the version's sample data.
      const variables =
        values.data === undefined ? undefined : ((await readJsonObject('--data', str(values.data))) as JsonObject);
      const version = values.version === undefined ? 0 : positiveInteger('--version', values.version);
      const res = await clients.templates.previewTemplateVersion({ templateId: args[0]!, version, variables });
      const out = str(values.out);
      await writeFile(out, res.pdf);
      print({ out, bytes: res.pdf.length }, `Wrote ${res.pdf.length} bytes to ${out}`);
    },
  },
];

/** --note, checked by the server's rule (src/domain/version-note.ts) before anything is sent. */
function noteOf(values: { note?: string | boolean | undefined }): string {
  const note = values.note === undefined ? '' : str(values.note);
  const issue = versionNoteIssue(note);
  if (issue) throw new UsageError(`--note ${issue}`);
  return note;
}

function authorText(author: TemplateVersionAuthor | undefined): string {
  if (!author || author.kind === TemplateVersionAuthorKind.UNSPECIFIED) return '-';
  if (author.kind === TemplateVersionAuthorKind.OPERATOR) return 'operator (automation)';
  return author.email ? `${author.name ? `${author.name} ` : ''}<${author.email}>` : author.userId;
}

function templateStatus(s: TemplateStatus): string {
  return s === TemplateStatus.ACTIVE ? 'ACTIVE' : s === TemplateStatus.ARCHIVED ? 'ARCHIVED' : 'UNSPECIFIED';
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
    author: versionAuthorJson(v.author),
    note: v.note,
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
            ...(d.schema ? { schema: d.schema } : {}),
          })),
          pdfOptions: c.pdfOptions
            ? {
                pageSize: c.pdfOptions.pageSize,
                landscape: c.pdfOptions.landscape,
                margins: {
                  top: c.pdfOptions.margins?.top ?? DEFAULT_PDF_OPTIONS.margins.top,
                  right: c.pdfOptions.margins?.right ?? DEFAULT_PDF_OPTIONS.margins.right,
                  bottom: c.pdfOptions.margins?.bottom ?? DEFAULT_PDF_OPTIONS.margins.bottom,
                  left: c.pdfOptions.margins?.left ?? DEFAULT_PDF_OPTIONS.margins.left,
                },
                printBackground: c.pdfOptions.printBackground,
                headerTemplate: c.pdfOptions.headerTemplate,
                footerTemplate: c.pdfOptions.footerTemplate,
                firstPageHeaderTemplate: c.pdfOptions.firstPageHeaderTemplate,
                firstPageFooterTemplate: c.pdfOptions.firstPageFooterTemplate,
                scale: c.pdfOptions.scale || DEFAULT_PDF_OPTIONS.scale,
                pageRanges: c.pdfOptions.pageRanges,
                preferCssPageSize: c.pdfOptions.preferCssPageSize,
                protection: c.pdfOptions.protection
                  ? {
                      // Write-only (the server never answers them): empty, the flags say which are
                      // set; fed back through --pdf-options, the flags keep them.
                      userPassword: c.pdfOptions.protection.userPassword,
                      ownerPassword: c.pdfOptions.protection.ownerPassword,
                      userPasswordSet: c.pdfOptions.protection.userPasswordSet,
                      ownerPasswordSet: c.pdfOptions.protection.ownerPasswordSet,
                      allowPrinting: c.pdfOptions.protection.allowPrinting,
                      allowCopying: c.pdfOptions.protection.allowCopying,
                      allowModifying: c.pdfOptions.protection.allowModifying,
                    }
                  : null,
              }
            : null,
          title: c.title,
          metadata: c.metadata
            ? {
                author: c.metadata.author,
                subject: c.metadata.subject,
                keywords: c.metadata.keywords,
                language: c.metadata.language,
              }
            : null,
          sampleData: c.sampleData ?? null,
          locale: c.locale || 'en-US',
          timeZone: c.timeZone || 'UTC',
          ...documentSettingsJson(c),
        }
      : null,
  };
}

/** The document standards as the flags name them (null: off). */
function documentSettingsJson(c: TemplateVersionContent) {
  return {
    conformance: c.conformance,
    eInvoice: c.eInvoice ? { standard: c.eInvoice.standard, profile: c.eInvoice.profile, from: c.eInvoice.from } : null,
    sign: c.sign
      ? {
          certificate: c.sign.certificate,
          ...(c.sign.reason ? { reason: c.sign.reason } : {}),
          ...(c.sign.location ? { location: c.sign.location } : {}),
        }
      : null,
    stamp: c.stamp
      ? {
          text: c.stamp.text,
          opacity: c.stamp.opacity ?? STAMP_DEFAULTS.opacity,
          angle: c.stamp.angle ?? STAMP_DEFAULTS.angle,
          firstPageOnly: c.stamp.firstPageOnly,
        }
      : null,
    outline: c.outline,
    attachments: c.attachments,
  };
}

/** Passwords are write-only: only whether each is set. */
function protectionLine(c: TemplateVersionContent | undefined): string {
  const p = c?.pdfOptions?.protection;
  if (!p) return 'none';
  const set = (flag: boolean) => (flag ? 'set' : 'not set');
  return `open password ${set(p.userPasswordSet)}, owner password ${set(p.ownerPasswordSet)}`;
}

function standardsLine(c: TemplateVersionContent | undefined): string {
  if (!c) return 'none';
  const parts: string[] = [];
  if (c.conformance.length > 0) parts.push(c.conformance.join(', '));
  if (c.eInvoice) parts.push(`e-invoice ${c.eInvoice.standard} ${c.eInvoice.profile} from ${c.eInvoice.from}`);
  if (c.sign) parts.push(`signed with ${c.sign.certificate}`);
  if (c.stamp) parts.push(`stamp ${JSON.stringify(c.stamp.text)}`);
  if (c.outline) parts.push('outline');
  if (c.attachments.length > 0) parts.push(`attaches ${c.attachments.join(', ')}`);
  return parts.join('; ') || 'none';
}

function versionAuthorJson(author: TemplateVersionAuthor | undefined) {
  if (!author || author.kind === TemplateVersionAuthorKind.UNSPECIFIED) return null;
  if (author.kind === TemplateVersionAuthorKind.OPERATOR) return { kind: 'operator' };
  return { kind: 'member', userId: author.userId, name: author.name, email: author.email };
}
