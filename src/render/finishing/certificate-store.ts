// Signing certificates as stored (src/store/certificates-repository.ts): the one home of how a
// signing identity is kept — the certificate chain as PEM, the private key as PKCS#8 PEM sealed
// like webhook secrets (AES-256-GCM under DOCGEN_SECRET_KEY, the `crt_…` id as authenticated
// context, so a sealed key copied onto another row does not open) — and the CertificateSource
// the signature stage reads it through.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { ObjectId } from 'mongodb';
import { formatId, parseId } from '../../domain/ids.ts';
import type { CertificateDoc } from '../../store/documents.ts';
import { decryptSecret, sealSecret, type SealedSecret } from '../../webhooks/secret-box.ts';
import { RenderError } from '../render-error.ts';
import type { CertificateSource, SigningIdentity } from './signing-identity.ts';

/** What the certificate list shows: from the signer's certificate. */
export interface CertificateFacts {
  subject: string;
  issuer: string;
  serialNumber: string;
  fingerprintSha256: string;
  notBefore: Date;
  notAfter: Date;
}

/** A distinguished name on one line, in the certificate's order (as `openssl x509 -subject` shows it). */
function oneLine(name: string): string {
  return name
    .split('\n')
    .map((part) => part.trim())
    .filter(Boolean)
    .join(', ');
}

export function certificateFacts(certificate: X509Certificate): CertificateFacts {
  return {
    subject: oneLine(certificate.subject),
    issuer: oneLine(certificate.issuer),
    serialNumber: certificate.serialNumber,
    fingerprintSha256: certificate.fingerprint256,
    notBefore: new Date(certificate.validFrom),
    notAfter: new Date(certificate.validTo),
  };
}

/** The chain and the sealed key of an identity, for the row of certificate `id`. */
export function sealIdentity(
  identity: SigningIdentity,
  id: ObjectId,
  secretKey: Buffer,
): { chainPem: string[]; key: SealedSecret } {
  const pem = identity.key.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    chainPem: [identity.certificate, ...identity.chain].map((c) => c.toString()),
    key: sealSecret(pem, secretKey, formatId('certificate', id)),
  };
}

/** The identity a stored row holds; throws (DomainError INTERNAL) when the key does not open. */
export function openIdentity(
  doc: Pick<CertificateDoc, '_id' | 'chainPem' | 'key'>,
  secretKey: Buffer,
): SigningIdentity {
  const pem = decryptSecret(doc.key, secretKey, formatId('certificate', doc._id));
  const [certificate, ...chain] = doc.chainPem.map((c) => new X509Certificate(c));
  return { key: createPrivateKey(pem), certificate: certificate!, chain };
}

export interface StoredCertificates {
  get(id: ObjectId): Promise<CertificateDoc | null>;
}

/**
 * The render side's certificate source: the row of `crt_…`, only within the rendering
 * workspace, with its key unsealed. Validity is checked by the signature stage at signing time.
 */
export function createCertificateSource(deps: {
  certificates: StoredCertificates;
  secretKey: Buffer;
}): CertificateSource {
  return {
    async identity(workspaceId, certificateId) {
      const id = parseId('certificate', certificateId);
      const doc = id ? await deps.certificates.get(id) : null;
      if (!doc || formatId('workspace', doc.workspaceId) !== workspaceId)
        throw new RenderError(
          'SIGNING_FAILED',
          `The signing certificate ${certificateId} does not exist in this workspace (deleted?); upload one and name it in sign.certificate`,
        );
      try {
        return openIdentity(doc, deps.secretKey);
      } catch (err) {
        throw new RenderError(
          'SIGNING_FAILED',
          `The key of signing certificate ${certificateId} cannot be decrypted (was DOCGEN_SECRET_KEY changed?)`,
          { cause: err },
        );
      }
    },
  };
}
