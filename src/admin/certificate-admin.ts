// Workspace signing certificates for the admin plane (docs/admin.md#certificates): upload a
// PKCS#12 file (opened with its password once; the key is stored sealed, the password and the
// file are not kept), list (by name, paged; subject, issuer, validity), delete. A file that
// cannot sign — wrong password, no key, a key without its certificate, expired or not yet
// valid — is refused with its reason and nothing is stored.
import { ObjectId } from 'mongodb';
import { DomainError, notFound, validationError } from '../domain/errors.ts';
import { formatId, parseId } from '../domain/ids.ts';
import { quoteId, requireId, requireName, requireWorkspace } from '../domain/input.ts';
import { certificateFacts, sealIdentity } from '../render/finishing/certificate-store.ts';
import { checkValidity, signingIdentityFromPkcs12 } from '../render/finishing/signing-identity.ts';
import { RenderError } from '../render/render-error.ts';
import type { CertificatesRepository } from '../store/certificates-repository.ts';
import type { CertificateDoc } from '../store/documents.ts';
import type { PageInput, PageTokens } from '../store/pagination.ts';
import type { WorkspacesRepository } from '../store/workspaces-repository.ts';

/** A PKCS#12 file holds a key and a few certificates: far below this. */
export const MAX_PKCS12_BYTES = 256 * 1024;

export interface CertificateView {
  id: string;
  workspaceId: string;
  name: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  fingerprintSha256: string;
  notBefore: Date;
  notAfter: Date;
  /** Issuer certificates stored with it. */
  chainLength: number;
  createdAt: Date;
}

export interface CertificateAdminDeps {
  workspaces: WorkspacesRepository;
  certificates: CertificatesRepository;
  /** config.secretKey: seals the private keys. */
  secretKey: Buffer;
  pageTokens: PageTokens;
  /** The validity clock (tests); default now. */
  now?: () => Date;
}

export function toCertificateView(doc: CertificateDoc): CertificateView {
  return {
    id: formatId('certificate', doc._id),
    workspaceId: formatId('workspace', doc.workspaceId),
    name: doc.name,
    subject: doc.subject,
    issuer: doc.issuer,
    serialNumber: doc.serialNumber,
    fingerprintSha256: doc.fingerprintSha256,
    notBefore: doc.notBefore,
    notAfter: doc.notAfter,
    chainLength: doc.chainPem.length - 1,
    createdAt: doc.createdAt,
  };
}

export class CertificateAdmin {
  private readonly deps: CertificateAdminDeps;
  constructor(deps: CertificateAdminDeps) {
    this.deps = deps;
  }

  async upload(input: {
    workspaceId: string;
    name: string;
    pkcs12: Uint8Array;
    password: string;
  }): Promise<CertificateView> {
    const name = requireName(input.name);
    const workspace = await requireWorkspace(this.deps.workspaces, input.workspaceId);
    if (input.pkcs12.byteLength === 0)
      throw validationError([{ field: 'pkcs12', issue: 'is required (the .p12/.pfx file)' }]);
    if (input.pkcs12.byteLength > MAX_PKCS12_BYTES)
      throw validationError([
        {
          field: 'pkcs12',
          issue: `is ${input.pkcs12.byteLength} bytes; a PKCS#12 file is at most ${MAX_PKCS12_BYTES}`,
        },
      ]);
    let identity;
    try {
      identity = signingIdentityFromPkcs12(input.pkcs12, input.password ?? '');
      checkValidity(identity, this.deps.now?.() ?? new Date(), 'The certificate');
    } catch (err) {
      if (!(err instanceof RenderError)) throw err;
      const field = /password/i.test(err.message) ? 'password' : 'pkcs12';
      throw validationError([{ field, issue: err.message }], err.message);
    }
    const id = new ObjectId();
    const doc: CertificateDoc = {
      _id: id,
      workspaceId: workspace._id,
      name,
      ...certificateFacts(identity.certificate),
      ...sealIdentity(identity, id, this.deps.secretKey),
      createdAt: new Date(),
    };
    if (!(await this.deps.certificates.create(doc)))
      throw new DomainError(
        'CONFLICT',
        `A certificate named ${JSON.stringify(name)} already exists in this workspace; delete it first or upload under another name`,
      );
    return toCertificateView(doc);
  }

  async list(
    workspaceId: string,
    input?: PageInput,
  ): Promise<{ certificates: CertificateView[]; nextPageToken: string }> {
    const page = this.deps.pageTokens.request(input, { list: 'certificates', filters: { workspace: workspaceId } });
    const workspace = await requireWorkspace(this.deps.workspaces, workspaceId);
    const result = await this.deps.certificates.list(workspace._id, page);
    return { certificates: result.items.map(toCertificateView), nextPageToken: result.nextPageToken };
  }

  async delete(id: string): Promise<void> {
    const certificateId = requireId('certificate', id, 'id', 'Certificate');
    const doc = await this.deps.certificates.get(certificateId);
    if (!doc || !(await this.deps.certificates.delete(doc))) throw notFound(`Certificate ${quoteId(id)}`);
  }

  /** Whether the workspace has the certificate (publishing a signed version needs it). */
  async exists(workspaceId: string, certificateId: string): Promise<boolean> {
    const id = parseId('certificate', certificateId);
    const doc = id ? await this.deps.certificates.get(id) : null;
    return doc !== null && formatId('workspace', doc.workspaceId) === workspaceId;
  }
}
