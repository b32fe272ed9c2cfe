// A signer's decrypted key and certificate chain, as the signature stage takes it. Read from a
// PKCS#12 file (node-forge decodes it: MAC check, PBES2/AES and legacy 3DES bags), checked for
// what makes signing impossible: a wrong password, no key, a key that is not the certificate's,
// a certificate that is expired or not yet valid. Part B stores the PKCS#12 (or the key) encrypted
// at rest and hands the decrypted identity to the stage through a CertificateSource.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { RenderError } from '../render-error.ts';

export interface SigningIdentity {
  key: KeyObject;
  /** The signer's certificate. */
  certificate: X509Certificate;
  /** Issuers up to (not necessarily including) a root, embedded in the signature. */
  chain: X509Certificate[];
}

/** Where the signature stage gets a workspace's certificate (`crt_…`) from. */
export interface CertificateSource {
  /** Throws RenderError SIGNING_FAILED when the certificate is unknown or unusable. */
  identity(workspaceId: string, certificateId: string): Promise<SigningIdentity>;
}

const failed = (message: string) => new RenderError('SIGNING_FAILED', message);

function toX509(cert: forge.pki.Certificate): X509Certificate {
  return new X509Certificate(Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), 'binary'));
}

/**
 * The identity in a PKCS#12 file. Throws RenderError SIGNING_FAILED naming the problem (wrong
 * password, no key, mismatching key and certificate).
 */
export function signingIdentityFromPkcs12(p12: Uint8Array, password: string): SigningIdentity {
  let pfx: forge.pkcs12.Pkcs12Pfx;
  try {
    const der = forge.util.createBuffer(Buffer.from(p12).toString('binary'));
    pfx = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(der), password);
  } catch (err) {
    const message = String((err as Error)?.message ?? err);
    if (/MAC could not be verified|Invalid password|decrypt/i.test(message))
      throw failed('The certificate password is wrong: the PKCS#12 file could not be opened with it');
    throw failed('The certificate file is not a readable PKCS#12 (.p12/.pfx) file');
  }
  const keyBags = [
    ...(pfx.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag! })[forge.pki.oids.pkcs8ShroudedKeyBag!] ?? []),
    ...(pfx.getBags({ bagType: forge.pki.oids.keyBag! })[forge.pki.oids.keyBag!] ?? []),
  ];
  const certBags = pfx.getBags({ bagType: forge.pki.oids.certBag! })[forge.pki.oids.certBag!] ?? [];
  const forgeKey = keyBags.find((b) => b.key)?.key;
  if (!forgeKey) throw failed('The PKCS#12 file holds no private key');
  const key = createPrivateKey(forge.pki.privateKeyToPem(forgeKey as forge.pki.rsa.PrivateKey));
  const certificates = certBags.flatMap((b) => (b.cert ? [toX509(b.cert)] : []));
  const certificate = certificates.find((c) => c.checkPrivateKey(key));
  if (!certificate) throw failed('The PKCS#12 file holds no certificate for its private key');
  return { key, certificate, chain: certificates.filter((c) => c !== certificate) };
}

/** Throws RenderError SIGNING_FAILED when the certificate cannot sign at `at`. */
export function checkValidity(identity: SigningIdentity, at: Date, label = 'The signing certificate'): void {
  const { certificate } = identity;
  const from = new Date(certificate.validFrom);
  const to = new Date(certificate.validTo);
  if (at.getTime() > to.getTime())
    throw failed(`${label} expired on ${to.toISOString().slice(0, 10)}; upload a current certificate`);
  if (at.getTime() < from.getTime()) throw failed(`${label} is not valid before ${from.toISOString().slice(0, 10)}`);
}
