// PAdES signatures (ETSI EN 319 142-1) as CMS (pkijs): baseline B-B, a detached CAdES signature
// (SubFilter ETSI.CAdES.detached) whose signed attributes are content-type, message-digest and
// the ESS signing-certificate-v2 (no signing-time: the time is the signature dictionary's /M);
// B-T when a timestamp authority is configured: an RFC 3161 token over the signature value as
// the unsigned signature-time-stamp attribute.
import { createHash, type X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { Signer, SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import type { PDFDocument } from 'pdf-lib';
import { RenderError } from '../render-error.ts';
import type { SigningIdentity } from './signing-identity.ts';
import { engine, requestTimestamp, type TimestampAuthority } from './timestamp.ts';

const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  timeStampToken: '1.2.840.113549.1.9.16.2.14',
};

/** ESS SigningCertificateV2 { certs: [ESSCertIDv2 { certHash (SHA-256, the default), issuerSerial }] }. */
function signingCertificateV2(der: Buffer, cert: pkijs.Certificate): asn1js.Sequence {
  const issuerSerial = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({ value: [new pkijs.GeneralName({ type: 4, value: cert.issuer }).toSchema()] }),
      cert.serialNumber,
    ],
  });
  const certId = new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: createHash('sha256').update(der).digest() }), issuerSerial],
  });
  return new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [certId] })] });
}

function signatureAlgorithm(identity: SigningIdentity): RsaHashedImportParams | EcKeyImportParams {
  const type = identity.key.asymmetricKeyType;
  if (type === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (type === 'ec') {
    const curve = identity.key.asymmetricKeyDetails?.namedCurve;
    const namedCurve =
      curve === 'prime256v1' ? 'P-256' : curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : '';
    if (namedCurve) return { name: 'ECDSA', namedCurve };
  }
  throw new RenderError(
    'SIGNING_FAILED',
    `The signing key (${type ?? 'unknown'}) is not supported; use an RSA or P-256/384/521 key`,
  );
}

/** The CMS SignedData (DER) for the PDF's signed byte ranges. */
export async function padesSignature(
  content: Buffer,
  identity: SigningIdentity,
  timestamp?: TimestampAuthority | undefined,
): Promise<Buffer> {
  const der = identity.certificate.raw;
  const cert = pkijs.Certificate.fromBER(der);
  const chain = identity.chain.map((c: X509Certificate) => pkijs.Certificate.fromBER(c.raw));
  const digest = createHash('sha256').update(content).digest();
  const attribute = (type: string, value: asn1js.AsnType) => new pkijs.Attribute({ type, values: [value] });
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber }),
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({
      type: 0,
      attributes: [
        attribute(OID.contentType, new asn1js.ObjectIdentifier({ value: OID.data })),
        attribute(OID.messageDigest, new asn1js.OctetString({ valueHex: digest })),
        attribute(OID.signingCertificateV2, signingCertificateV2(der, cert)),
      ],
    }),
  });
  const signedData = new pkijs.SignedData({
    version: 1,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
    signerInfos: [signerInfo],
    certificates: [cert, ...chain],
  });
  const algorithm = signatureAlgorithm(identity);
  const key = identity.key.toCryptoKey(algorithm, false, ['sign']) as unknown as CryptoKey;
  await signedData.sign(key, 0, 'SHA-256', undefined, engine);
  if (timestamp) {
    const token = await requestTimestamp(timestamp, signerInfo.signature.valueBlock.valueHexView);
    signerInfo.unsignedAttrs = new pkijs.SignedAndUnsignedAttributes({
      type: 1,
      attributes: [attribute(OID.timeStampToken, token.toSchema())],
    });
  }
  const cms = new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) });
  return Buffer.from(cms.toSchema().toBER());
}

/** @signpdf's signer interface: it hands over the byte ranges, we return the CMS. */
export class PadesSigner extends Signer {
  readonly #identity: SigningIdentity;
  readonly #timestamp: TimestampAuthority | undefined;

  constructor(identity: SigningIdentity, timestamp?: TimestampAuthority | undefined) {
    super();
    this.#identity = identity;
    this.#timestamp = timestamp;
  }

  override async sign(pdfBuffer: Buffer): Promise<Buffer> {
    return padesSignature(pdfBuffer, this.#identity, this.#timestamp);
  }
}

/** The signer's common name, for the signature dictionary's /Name. */
function commonName(certificate: X509Certificate): string {
  return /^CN=(.*)$/m.exec(certificate.subject)?.[1]?.trim() ?? certificate.subject.split('\n')[0] ?? '';
}

/**
 * An invisible signature field (zero-size widget, printable for PDF/A) and the signature
 * dictionary with room for the CMS: the key's signature, the certificates, and a timestamp
 * token with its authority's certificates when one is asked for.
 */
export function addSignaturePlaceholder(
  doc: PDFDocument,
  identity: SigningIdentity,
  options: { reason: string; location: string; at: Date; timestamped: boolean },
): void {
  const certificates = [identity.certificate, ...identity.chain].reduce((n, c) => n + c.raw.length, 0);
  pdflibAddPlaceholder({
    pdfDoc: doc,
    reason: options.reason,
    location: options.location,
    contactInfo: '',
    name: commonName(identity.certificate),
    signingTime: options.at,
    subFilter: SUBFILTER_ETSI_CADES_DETACHED,
    // In hex digits (two per byte of CMS), so always even.
    signatureLength: 2 * (4096 + certificates + (options.timestamped ? 8192 : 0)),
    widgetRect: [0, 0, 0, 0],
    appName: 'docgen',
  });
}
