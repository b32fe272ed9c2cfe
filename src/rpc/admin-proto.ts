// Proto <-> domain translation for the admin services. Kept apart from the handlers so the
// CLI-facing shapes and the stored ones can change independently.
import { create, fromJson, toJson, type JsonValue as ProtoJsonValue } from '@bufbuild/protobuf';
import { DurationSchema, timestampFromDate, ValueSchema, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { ApiKeyView } from '../admin/api-key-admin.ts';
import type { DeliveryView } from '../admin/delivery-admin.ts';
import type { PdfOptionsInput, TemplateContentInput } from '../admin/template-content.ts';
import { writeOnlyProtection } from '../admin/pdf-password-keep.ts';
import type { WebhookEndpointView } from '../admin/webhook-endpoint-admin.ts';
import type { WorkspaceView } from '../admin/workspace-admin.ts';
import type { JsonObject, JsonValue, Template, TemplateVersion, TemplateVersionContent } from '../domain/template.ts';
import { ApiKeyMode, ApiKeySchema, type ApiKey } from '../gen/docgen/admin/v1/api_key_pb.js';
import {
  DeliveryAttemptSchema,
  DeliverySchema,
  DeliveryStatus,
  type Delivery,
} from '../gen/docgen/admin/v1/delivery_pb.js';
import type { TemplateDiagnostic } from '../domain/template-diagnostics.ts';
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE } from '../domain/locale-settings.ts';
import {
  DocumentMetadataSchema,
  EInvoiceSettingsSchema,
  SignatureSettingsSchema,
  StampSettingsSchema,
  PageMarginsSchema,
  PdfProtectionSchema,
  TemplateDiagnosticSchema,
  type TemplateDiagnostic as ProtoTemplateDiagnostic,
  PdfOptionsSchema,
  TemplateSchema,
  TemplateStatus,
  TemplateVersionContentSchema,
  TemplateVersionSchema,
  TemplateVersionAuthorKind,
  TemplateVersionAuthorSchema,
  VariableDeclarationSchema,
  type Template as ProtoTemplate,
  type TemplateVersion as ProtoTemplateVersion,
  type TemplateVersionContent as ProtoTemplateVersionContent,
} from '../gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointSchema, type WebhookEndpoint } from '../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceSchema, type Workspace } from '../gen/docgen/admin/v1/workspace_pb.js';

export function ts(date: Date | null | undefined): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}

export function workspaceToProto(w: WorkspaceView): Workspace {
  return create(WorkspaceSchema, {
    id: w.id,
    name: w.name,
    createdAt: ts(w.createdAt),
    retention:
      w.retentionSeconds === null ? undefined : create(DurationSchema, { seconds: BigInt(w.retentionSeconds) }),
    renderWeight: w.renderWeight,
  });
}

export function apiKeyToProto(k: ApiKeyView): ApiKey {
  return create(ApiKeySchema, {
    id: k.id,
    workspaceId: k.workspaceId,
    name: k.name,
    scopes: k.scopes,
    prefix: k.prefix,
    createdAt: ts(k.createdAt),
    lastUsedAt: ts(k.lastUsedAt),
    revokedAt: ts(k.revokedAt),
    rateLimitPerSecond: k.rateLimitPerSecond ?? 0,
    rateLimitBurst: k.rateLimitBurst ?? 0,
    mode: k.mode === 'test' ? ApiKeyMode.TEST : ApiKeyMode.LIVE,
  });
}

/** The proto mode as the admin takes it: UNSPECIFIED is live; an unknown number is named as such. */
export function apiKeyModeFromProto(mode: ApiKeyMode): string {
  if (mode === ApiKeyMode.UNSPECIFIED || mode === ApiKeyMode.LIVE) return 'live';
  if (mode === ApiKeyMode.TEST) return 'test';
  return `mode number ${String(mode)}`;
}

const TEMPLATE_STATUS = { ACTIVE: TemplateStatus.ACTIVE, ARCHIVED: TemplateStatus.ARCHIVED } as const;

export function templateToProto(t: Template): ProtoTemplate {
  return create(TemplateSchema, {
    id: t.id,
    workspaceId: t.workspaceId,
    name: t.name,
    status: TEMPLATE_STATUS[t.status],
    publishedVersion: t.publishedVersion,
    latestVersion: t.latestVersion,
    createdAt: ts(t.createdAt),
    updatedAt: ts(t.updatedAt),
  });
}

export function contentToProto(c: TemplateVersionContent): ProtoTemplateVersionContent {
  return create(TemplateVersionContentSchema, {
    body: c.body,
    css: c.css,
    partials: { ...c.partials },
    variables: c.variables.map((v) =>
      create(VariableDeclarationSchema, {
        name: v.name,
        required: v.required,
        description: v.description,
        defaultValue: v.default === undefined ? undefined : fromJson(ValueSchema, v.default as ProtoJsonValue),
        schema: v.schema as JsonObject | undefined,
      }),
    ),
    pdfOptions: create(PdfOptionsSchema, {
      pageSize: c.pdfOptions.pageSize,
      landscape: c.pdfOptions.landscape,
      margins: create(PageMarginsSchema, c.pdfOptions.margins),
      printBackground: c.pdfOptions.printBackground,
      headerTemplate: c.pdfOptions.headerTemplate,
      footerTemplate: c.pdfOptions.footerTemplate,
      // Versions stored before these options existed have none of them.
      scale: c.pdfOptions.scale ?? 1,
      pageRanges: c.pdfOptions.pageRanges ?? '',
      preferCssPageSize: c.pdfOptions.preferCssPageSize ?? false,
      firstPageHeaderTemplate: c.pdfOptions.firstPageHeaderTemplate ?? '',
      firstPageFooterTemplate: c.pdfOptions.firstPageFooterTemplate ?? '',
      // Write-only: the passwords never leave the server, only whether each is set.
      protection: c.pdfOptions.protection
        ? create(PdfProtectionSchema, writeOnlyProtection(c.pdfOptions.protection))
        : undefined,
    }),
    title: c.title ?? '',
    metadata: c.metadata ? create(DocumentMetadataSchema, c.metadata) : undefined,
    sampleData: c.sampleData,
    // Versions stored before these settings existed read as the defaults.
    locale: c.locale || DEFAULT_LOCALE,
    timeZone: c.timeZone || DEFAULT_TIME_ZONE,
    // Document standards: absent ones are off.
    conformance: c.conformance ?? [],
    eInvoice: c.eInvoice ? create(EInvoiceSettingsSchema, c.eInvoice) : undefined,
    sign: c.sign
      ? create(SignatureSettingsSchema, {
          certificate: c.sign.certificate,
          reason: c.sign.reason ?? '',
          location: c.sign.location ?? '',
        })
      : undefined,
    stamp: c.stamp
      ? create(StampSettingsSchema, {
          text: c.stamp.text,
          opacity: c.stamp.opacity,
          angle: c.stamp.angle,
          firstPageOnly: c.stamp.firstPageOnly ?? false,
        })
      : undefined,
    outline: c.outline ?? false,
    attachments: c.attachments ?? [],
  });
}

export function diagnosticToProto(d: TemplateDiagnostic): ProtoTemplateDiagnostic {
  return create(TemplateDiagnosticSchema, {
    source: d.source,
    line: d.line,
    column: d.column,
    message: d.message,
    severity: d.severity,
  });
}

export function templateVersionToProto(v: TemplateVersion): ProtoTemplateVersion {
  return create(TemplateVersionSchema, {
    templateId: v.templateId,
    version: v.version,
    content: contentToProto(v.content),
    createdAt: ts(v.createdAt),
    author: !v.author
      ? undefined
      : v.author.kind === 'operator'
        ? create(TemplateVersionAuthorSchema, { kind: TemplateVersionAuthorKind.OPERATOR })
        : create(TemplateVersionAuthorSchema, {
            kind: TemplateVersionAuthorKind.MEMBER,
            userId: v.author.userId,
            name: v.author.name,
            email: v.author.email,
          }),
    note: v.note,
  });
}

/**
 * Submitted content. A PdfOptions message, when present, is taken field by field as proto3
 * gives it (so print_background false means false); when absent, the defaults apply.
 */
export function contentFromProto(c: ProtoTemplateVersionContent | undefined): TemplateContentInput | undefined {
  if (!c) return undefined;
  let pdfOptions: PdfOptionsInput | undefined;
  if (c.pdfOptions) {
    const p = c.pdfOptions;
    pdfOptions = {
      pageSize: p.pageSize,
      landscape: p.landscape,
      margins: p.margins
        ? { top: p.margins.top, right: p.margins.right, bottom: p.margins.bottom, left: p.margins.left }
        : undefined,
      printBackground: p.printBackground,
      headerTemplate: p.headerTemplate,
      footerTemplate: p.footerTemplate,
      scale: p.scale,
      pageRanges: p.pageRanges,
      preferCssPageSize: p.preferCssPageSize,
      firstPageHeaderTemplate: p.firstPageHeaderTemplate,
      firstPageFooterTemplate: p.firstPageFooterTemplate,
      protection: p.protection
        ? {
            userPassword: p.protection.userPassword,
            ownerPassword: p.protection.ownerPassword,
            allowPrinting: p.protection.allowPrinting,
            allowCopying: p.protection.allowCopying,
            allowModifying: p.protection.allowModifying,
            userPasswordSet: p.protection.userPasswordSet,
            ownerPasswordSet: p.protection.ownerPasswordSet,
          }
        : undefined,
    };
  }
  return {
    body: c.body,
    css: c.css,
    partials: { ...c.partials },
    variables: c.variables.map((v) => ({
      name: v.name,
      required: v.required,
      description: v.description,
      // A Value with no kind set carries nothing: treat it as "no default".
      default:
        v.defaultValue && v.defaultValue.kind.case !== undefined
          ? (toJson(ValueSchema, v.defaultValue) as JsonValue)
          : undefined,
      // A Struct arrives as a plain JSON object; unset means no schema.
      schema: v.schema as JsonObject | undefined,
    })),
    pdfOptions,
    title: c.title,
    metadata: c.metadata
      ? {
          author: c.metadata.author,
          subject: c.metadata.subject,
          keywords: c.metadata.keywords,
          language: c.metadata.language,
        }
      : undefined,
    // A Struct arrives as a plain JSON object; unset means none.
    sampleData: c.sampleData as JsonObject | undefined,
    locale: c.locale,
    timeZone: c.timeZone,
    ...documentSettingsFromProto(c),
  };
}

/**
 * The document standards as submitted: an unset message, an empty list or false is off; empty
 * strings and unset numbers inside a message are left out (their defaults apply), so the
 * checks (src/render/finishing/document-settings.ts) see what was given.
 */
function documentSettingsFromProto(c: ProtoTemplateVersionContent): Partial<TemplateContentInput> {
  const out: Partial<TemplateContentInput> = {};
  if (c.conformance.length > 0) out.conformance = [...c.conformance];
  if (c.eInvoice) out.eInvoice = { standard: c.eInvoice.standard, profile: c.eInvoice.profile, from: c.eInvoice.from };
  if (c.sign) {
    const sign: Record<string, string> = { certificate: c.sign.certificate };
    if (c.sign.reason !== '') sign.reason = c.sign.reason;
    if (c.sign.location !== '') sign.location = c.sign.location;
    out.sign = sign;
  }
  if (c.stamp) {
    const stamp: Record<string, unknown> = { text: c.stamp.text };
    if (c.stamp.opacity !== undefined) stamp.opacity = c.stamp.opacity;
    if (c.stamp.angle !== undefined) stamp.angle = c.stamp.angle;
    if (c.stamp.firstPageOnly) stamp.firstPageOnly = true;
    out.stamp = stamp;
  }
  if (c.outline) out.outline = true;
  if (c.attachments.length > 0) out.attachments = [...c.attachments];
  return out;
}

export function webhookEndpointToProto(e: WebhookEndpointView): WebhookEndpoint {
  return create(WebhookEndpointSchema, {
    id: e.id,
    workspaceId: e.workspaceId,
    url: e.url,
    events: e.events,
    description: e.description,
    createdAt: ts(e.createdAt),
    secretRotatedAt: ts(e.secretRotatedAt),
    testEvents: e.testEvents,
  });
}

const DELIVERY_STATUS = {
  PENDING: DeliveryStatus.PENDING,
  SUCCEEDED: DeliveryStatus.SUCCEEDED,
  DROPPED: DeliveryStatus.DROPPED,
} as const;

export function deliveryToProto(d: DeliveryView): Delivery {
  return create(DeliverySchema, {
    id: d.id,
    workspaceId: d.workspaceId,
    endpointId: d.endpointId,
    eventId: d.eventId,
    event: d.event,
    generationId: d.generationId,
    batchId: d.batchId,
    status: DELIVERY_STATUS[d.status],
    attempts: d.attempts.map((a) =>
      create(DeliveryAttemptSchema, {
        number: a.number,
        attemptedAt: ts(a.attemptedAt),
        statusCode: a.statusCode,
        error: a.error,
        durationMs: Math.round(a.durationMs),
        responseExcerpt: a.responseExcerpt,
      }),
    ),
    createdAt: ts(d.createdAt),
    updatedAt: ts(d.updatedAt),
    nextAttemptAt: ts(d.nextAttemptAt),
    test: d.test,
  });
}
