// Connect handlers of docgen.admin.v1.TemplateService.
import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { TemplateAdmin, VersionAuthorInput } from '../admin/template-admin.ts';
import { callerKey } from './admin-access-interceptor.ts';
import {
  ArchiveTemplateResponseSchema,
  DeleteTemplateOutcome,
  DeleteTemplateResponseSchema,
  RenameTemplateResponseSchema,
  UnarchiveTemplateResponseSchema,
  type DeleteTemplateRequest,
  type DeleteTemplateResponse,
  type RenameTemplateRequest,
  type RenameTemplateResponse,
  type UnarchiveTemplateRequest,
  type UnarchiveTemplateResponse,
  CheckTemplateContentResponseSchema,
  PreviewTemplateContentResponseSchema,
  GalleryTemplateSchema,
  ListGalleryTemplatesResponseSchema,
  type ListGalleryTemplatesResponse,
  type CheckTemplateContentRequest,
  type CheckTemplateContentResponse,
  type PreviewTemplateContentRequest,
  type PreviewTemplateContentResponse,
  CreateTemplateResponseSchema,
  CreateTemplateVersionResponseSchema,
  GetTemplateResponseSchema,
  GetTemplateVersionResponseSchema,
  ListTemplatesResponseSchema,
  ListTemplateVersionsResponseSchema,
  PreviewTemplateVersionResponseSchema,
  PublishTemplateVersionResponseSchema,
  TemplateVersionView,
  type ArchiveTemplateRequest,
  type ArchiveTemplateResponse,
  type CreateTemplateRequest,
  type CreateTemplateResponse,
  type CreateTemplateVersionRequest,
  type CreateTemplateVersionResponse,
  type GetTemplateRequest,
  type GetTemplateResponse,
  type GetTemplateVersionRequest,
  type GetTemplateVersionResponse,
  type ListTemplatesRequest,
  type ListTemplatesResponse,
  type ListTemplateVersionsRequest,
  type ListTemplateVersionsResponse,
  type PreviewTemplateVersionRequest,
  type PreviewTemplateVersionResponse,
  type PublishTemplateVersionRequest,
  type PublishTemplateVersionResponse,
  type TemplateService,
} from '../gen/docgen/admin/v1/template_pb.js';
import type { JsonObject } from '../domain/template.ts';
import {
  contentFromProto,
  contentToProto,
  diagnosticToProto,
  templateToProto,
  templateVersionToProto,
} from './admin-proto.ts';

/** Who saves a version: the signed-in member, or the operator token (the CLI, automation). */
function authorOf(ctx: HandlerContext | undefined): VersionAuthorInput | undefined {
  const caller = ctx?.values.get(callerKey);
  if (!caller) return undefined;
  return caller.kind === 'operator' ? { kind: 'operator' } : { kind: 'member', userId: caller.user._id };
}

export class TemplateServiceHandler implements ServiceImpl<typeof TemplateService> {
  private readonly admin: TemplateAdmin;
  constructor(admin: TemplateAdmin) {
    this.admin = admin;
  }

  async createTemplate(req: CreateTemplateRequest, ctx?: HandlerContext): Promise<CreateTemplateResponse> {
    const { template, version } = await this.admin.create({
      workspaceId: req.workspaceId,
      name: req.name,
      content: contentFromProto(req.content),
      publish: req.publish,
      fromGallery: req.fromGallery,
      author: authorOf(ctx),
      note: req.note,
    });
    return create(CreateTemplateResponseSchema, {
      template: templateToProto(template),
      version: templateVersionToProto(version),
    });
  }

  async getTemplate(req: GetTemplateRequest): Promise<GetTemplateResponse> {
    return create(GetTemplateResponseSchema, { template: templateToProto(await this.admin.get(req.id)) });
  }

  async listTemplates(req: ListTemplatesRequest): Promise<ListTemplatesResponse> {
    const page = await this.admin.list(req.workspaceId, { pageSize: req.pageSize, pageToken: req.pageToken });
    return create(ListTemplatesResponseSchema, {
      templates: page.items.map(templateToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async createTemplateVersion(
    req: CreateTemplateVersionRequest,
    ctx?: HandlerContext,
  ): Promise<CreateTemplateVersionResponse> {
    const { template, version } = await this.admin.addVersion(
      req.templateId,
      contentFromProto(req.content),
      req.publish,
      {
        author: authorOf(ctx),
        note: req.note,
      },
    );
    return create(CreateTemplateVersionResponseSchema, {
      template: templateToProto(template),
      version: templateVersionToProto(version),
    });
  }

  async getTemplateVersion(req: GetTemplateVersionRequest): Promise<GetTemplateVersionResponse> {
    return create(GetTemplateVersionResponseSchema, {
      version: templateVersionToProto(await this.admin.getVersion(req.templateId, req.version)),
    });
  }

  async listTemplateVersions(req: ListTemplateVersionsRequest): Promise<ListTemplateVersionsResponse> {
    const versions = await this.admin.listVersions(
      req.templateId,
      req.view === TemplateVersionView.BASIC ? 'basic' : 'full',
    );
    return create(ListTemplateVersionsResponseSchema, {
      versions: versions.map(templateVersionToProto),
    });
  }

  async publishTemplateVersion(req: PublishTemplateVersionRequest): Promise<PublishTemplateVersionResponse> {
    return create(PublishTemplateVersionResponseSchema, {
      template: templateToProto(await this.admin.publish(req.templateId, req.version)),
    });
  }

  async archiveTemplate(req: ArchiveTemplateRequest): Promise<ArchiveTemplateResponse> {
    return create(ArchiveTemplateResponseSchema, { template: templateToProto(await this.admin.archive(req.id)) });
  }

  async renameTemplate(req: RenameTemplateRequest): Promise<RenameTemplateResponse> {
    return create(RenameTemplateResponseSchema, {
      template: templateToProto(await this.admin.rename(req.id, req.name)),
    });
  }

  async unarchiveTemplate(req: UnarchiveTemplateRequest): Promise<UnarchiveTemplateResponse> {
    return create(UnarchiveTemplateResponseSchema, { template: templateToProto(await this.admin.unarchive(req.id)) });
  }

  async deleteTemplate(req: DeleteTemplateRequest): Promise<DeleteTemplateResponse> {
    const result = await this.admin.delete(req.id);
    return result.outcome === 'deleted'
      ? create(DeleteTemplateResponseSchema, { outcome: DeleteTemplateOutcome.DELETED })
      : create(DeleteTemplateResponseSchema, {
          outcome: DeleteTemplateOutcome.ARCHIVED,
          template: templateToProto(result.template),
          generationCount: BigInt(result.generationCount),
        });
  }

  async previewTemplateVersion(req: PreviewTemplateVersionRequest): Promise<PreviewTemplateVersionResponse> {
    // A Struct arrives as a plain JSON object, the shape generations take their variables in;
    // unset means the version's sample data.
    const pdf = await this.admin.preview(req.templateId, req.version, req.variables as JsonObject | undefined);
    return create(PreviewTemplateVersionResponseSchema, { pdf });
  }

  async previewTemplateContent(req: PreviewTemplateContentRequest): Promise<PreviewTemplateContentResponse> {
    const result = await this.admin.previewContent(
      req.workspaceId,
      contentFromProto(req.content),
      req.variables as JsonObject | undefined,
      req.templateId,
    );
    return create(PreviewTemplateContentResponseSchema, {
      pdf: result.pdf,
      diagnostics: result.diagnostics.map(diagnosticToProto),
      renderMs: result.renderMs,
    });
  }

  listGalleryTemplates(): ListGalleryTemplatesResponse {
    return create(ListGalleryTemplatesResponseSchema, {
      templates: this.admin.gallery().map((t) =>
        create(GalleryTemplateSchema, {
          name: t.name,
          title: t.title,
          description: t.description,
          content: contentToProto(t.content),
        }),
      ),
    });
  }

  async checkTemplateContent(req: CheckTemplateContentRequest): Promise<CheckTemplateContentResponse> {
    const result = await this.admin.checkContent(req.workspaceId, contentFromProto(req.content), req.templateId);
    return create(CheckTemplateContentResponseSchema, {
      diagnostics: result.diagnostics.map(diagnosticToProto),
      suggestedVariables: result.suggestedVariables,
    });
  }
}
