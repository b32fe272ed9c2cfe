// Connect handlers of docgen.admin.v1.TemplateService.
import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { TemplateAdmin } from '../admin/template-admin.ts';
import {
  ArchiveTemplateResponseSchema,
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

export class TemplateServiceHandler implements ServiceImpl<typeof TemplateService> {
  private readonly admin: TemplateAdmin;
  constructor(admin: TemplateAdmin) {
    this.admin = admin;
  }

  async createTemplate(req: CreateTemplateRequest): Promise<CreateTemplateResponse> {
    const { template, version } = await this.admin.create({
      workspaceId: req.workspaceId,
      name: req.name,
      content: contentFromProto(req.content),
      publish: req.publish,
      fromGallery: req.fromGallery,
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

  async createTemplateVersion(req: CreateTemplateVersionRequest): Promise<CreateTemplateVersionResponse> {
    const { template, version } = await this.admin.addVersion(
      req.templateId,
      contentFromProto(req.content),
      req.publish,
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
