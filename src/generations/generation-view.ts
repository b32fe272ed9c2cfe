// The Generation as clients see it (docs/interface.md#the-generation), plus the template version
// and the test flag that gRPC clients also get. REST shows exactly the eleven interface fields.
import { formatId } from '../domain/ids.ts';
import type { JsonObject } from '../domain/template.ts';
import type { GenerationDoc, GenerationStatus } from '../store/documents.ts';

export interface GenerationView {
  id: string;
  workspaceId: string;
  templateId: string;
  templateName: string;
  format: 'PDF';
  status: GenerationStatus;
  data: JsonObject;
  outputUrl: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  templateVersion: number;
  /** Made with a test key (docs/interface.md#test-mode); gRPC and the admin plane show it, REST does not. */
  test: boolean;
}

export const GENERATION_STATUSES: readonly GenerationStatus[] = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'];

export function toGenerationView(doc: GenerationDoc, outputUrl: string | null): GenerationView {
  return {
    id: formatId('generation', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    templateId: doc.templateRef,
    templateName: doc.templateName,
    format: 'PDF',
    status: doc.status,
    data: doc.data,
    outputUrl: doc.status === 'COMPLETED' ? outputUrl : null,
    error: doc.status === 'FAILED' ? doc.error : null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    templateVersion: doc.templateVersion,
    test: doc.test === true,
  };
}
