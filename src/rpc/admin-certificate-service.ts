// Connect handlers of docgen.admin.v1.CertificateService.
import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { CertificateAdmin, CertificateView } from '../admin/certificate-admin.ts';
import {
  CertificateSchema,
  DeleteCertificateResponseSchema,
  ListCertificatesResponseSchema,
  UploadCertificateResponseSchema,
  type Certificate,
  type CertificateService,
  type DeleteCertificateRequest,
  type DeleteCertificateResponse,
  type ListCertificatesRequest,
  type ListCertificatesResponse,
  type UploadCertificateRequest,
  type UploadCertificateResponse,
} from '../gen/docgen/admin/v1/certificate_pb.js';
import { ts } from './admin-proto.ts';

export function certificateToProto(c: CertificateView): Certificate {
  return create(CertificateSchema, {
    id: c.id,
    workspaceId: c.workspaceId,
    name: c.name,
    subject: c.subject,
    issuer: c.issuer,
    notBefore: ts(c.notBefore),
    notAfter: ts(c.notAfter),
    serialNumber: c.serialNumber,
    fingerprintSha256: c.fingerprintSha256,
    chainLength: c.chainLength,
    createdAt: ts(c.createdAt),
  });
}

export class CertificateServiceHandler implements ServiceImpl<typeof CertificateService> {
  private readonly admin: CertificateAdmin;
  constructor(admin: CertificateAdmin) {
    this.admin = admin;
  }

  async uploadCertificate(req: UploadCertificateRequest): Promise<UploadCertificateResponse> {
    const certificate = await this.admin.upload({
      workspaceId: req.workspaceId,
      name: req.name,
      pkcs12: req.pkcs12,
      password: req.password,
    });
    return create(UploadCertificateResponseSchema, { certificate: certificateToProto(certificate) });
  }

  async listCertificates(req: ListCertificatesRequest): Promise<ListCertificatesResponse> {
    const page = await this.admin.list(req.workspaceId, { pageSize: req.pageSize, pageToken: req.pageToken });
    return create(ListCertificatesResponseSchema, {
      certificates: page.certificates.map(certificateToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async deleteCertificate(req: DeleteCertificateRequest): Promise<DeleteCertificateResponse> {
    await this.admin.delete(req.id);
    return create(DeleteCertificateResponseSchema, {});
  }
}
